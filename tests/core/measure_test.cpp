// Statistics of timings and the accuracy summary: what every recorded measurement rests on.
#include <gtest/gtest.h>

#include <limits>

#include "../support/fields.hpp"
#include "core/measure.hpp"

namespace soltune {
namespace {

TEST(Measure, MedianAndQuartilesOfUnsortedSamples) {
  const auto t = summarize({9, 1, 5, 3, 7});
  test::expect_fields_equal(t, Timing{.median_us = 5, .min_us = 1, .q1_us = 3, .q3_us = 7, .max_us = 9, .reps = 5}, "t");
  EXPECT_DOUBLE_EQ(t.cv(), 4.0 / 5.0);
}

TEST(Measure, EvenCountsInterpolate) {
  const auto t = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(t.median_us, 2.5);
  EXPECT_DOUBLE_EQ(t.q1_us, 1.75);
  EXPECT_DOUBLE_EQ(t.q3_us, 3.25);
}

TEST(Measure, OneOutlierDoesNotMoveTheMedian) {
  std::vector<double> s(99, 500.0);
  s.push_back(50000.0);  // one repetition hit by something else on the machine
  const auto t = summarize(s);
  EXPECT_DOUBLE_EQ(t.median_us, 500.0);
  EXPECT_DOUBLE_EQ(t.cv(), 0.0);
  EXPECT_DOUBLE_EQ(t.max_us, 50000.0);
}

TEST(Measure, EmptyInputGivesAnEmptyTiming) {
  const auto t = summarize({});
  EXPECT_EQ(t.reps, 0);
  EXPECT_EQ(t.cv(), 0);
}

TEST(Measure, AccuracySummaryNamesEveryFailureKind) {
  const Accuracy a{.checked = 1000, .mismatches = 3, .unwritten = 2, .out_of_bounds = 8, .workspace_dirty = 4,
                   .inputs_written = 16, .written_input = "x", .rounds = 1, .precision_ok = false, .detail = ""};
  const auto s = a.summary();
  EXPECT_NE(s.find("FAIL"), std::string::npos);
  EXPECT_NE(s.find("2 unwritten"), std::string::npos);
  EXPECT_NE(s.find("8 guard bytes written out of bounds"), std::string::npos);
  EXPECT_NE(s.find("workspace left with 4 non-zero bytes"), std::string::npos);
  EXPECT_NE(s.find("lower precision than declared"), std::string::npos);
  EXPECT_NE(s.find("wrote its input x (16 bytes changed"), std::string::npos);
}

TEST(Measure, StatusNamesRoundTrip) {
  for (auto s : {Status::ok, Status::compile_error, Status::illegal, Status::launch_error, Status::wrong_answer,
                 Status::fault, Status::timeout, Status::slow})
    EXPECT_EQ(parse_status(status_name(s)), s);
  EXPECT_THROW(parse_status("fine"), Error);
}

TEST(Spearman, RanksNotValues) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 300, 4000}), 1.0);  // monotone: 1 whatever the scale
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3}, {5, 5, 5}), 0.0);  // constant: no ranking
  // Ties share their mean rank: (1, 2.5, 2.5, 4) against (1, 2, 3, 4).
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 0.9486833, 1e-6);
}

TEST(Spearman, RankAgreementOfAPriorWithMeasurements) {
  const double inf = std::numeric_limits<double>::infinity();
  // The third configuration was stopped as slow: it ranks nothing, but counts among the top k.
  const auto r = rank_agreement({1, 2, 3, 4}, {12, 10, inf, 11}, {1, 2, 4});
  EXPECT_DOUBLE_EQ(r.rho, -0.5);  // ranks (0, 1, 2) against (2, 0, 1)
  ASSERT_EQ(r.top_over_best.size(), 3u);
  EXPECT_DOUBLE_EQ(r.top_over_best[0], 1.2);  // the predicted best measured 12 against the best 10
  EXPECT_DOUBLE_EQ(r.top_over_best[1], 1.0);
  EXPECT_DOUBLE_EQ(r.top_over_best[2], 1.0);
}

}  // namespace
}  // namespace soltune
