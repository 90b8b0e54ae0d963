// The screen's surrogate (search/surrogate.hpp) on a synthetic space where an analytic model is
// informative but misses one knob: before any measurement it ranks by the model, after a few it
// has learned the knob the model missed, without a model it learns from measurements alone, and
// the same data give the same scores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "search/surrogate.hpp"

namespace soltune {
namespace {

VariantSpec variant() {
  VariantSpec v;
  v.name = "v";
  v.knobs = {KnobSpec{"A", {1, 2, 4, 8, 16, 32, 64, 128}, ""}, KnobSpec{"B", {0, 1}, ""}, KnobSpec{"C", {1, 2, 4, 8}, ""}};
  return v;
}

// The truth: a bowl in A and C, and B = 1 costs 60% (a cache hint, say: nothing the model knows).
double truth(const Config& c) {
  const double a = std::log2(static_cast<double>(c.values[0])), cc = std::log2(static_cast<double>(c.values[2]));
  return (50 + 4 * (a - 4) * (a - 4) + 6 * (cc - 2) * (cc - 2)) * (c.values[1] ? 1.6 : 1.0);
}

// The model: the bowl with a deterministic +-8% error, blind to B; A = 128 with C = 8 "does not compile".
class BowlModel final : public Predictor {
 public:
  std::string describe() const override { return "bowl model"; }
  std::vector<double> predict(const std::vector<Config>& cs) override {
    ++calls;
    std::vector<double> out;
    for (const auto& c : cs) {
      if (c.values[0] == 128 && c.values[2] == 8) {
        out.push_back(std::numeric_limits<double>::infinity());
        continue;
      }
      Config blind = c;
      blind.values[1] = 0;
      const double wobble = 1 + 0.08 * std::sin(static_cast<double>(c.values[0] * 7 + c.values[2] * 3));
      out.push_back(truth(blind) * wobble);
    }
    asked += cs.size();
    return out;
  }
  int calls = 0;
  size_t asked = 0;
};

EvalResult measured(const Space& s, const Config& c) {
  EvalResult r;
  r.config = c;
  r.key = s.key(c);
  r.status = Status::ok;
  r.time.median_us = truth(c);
  return r;
}

// The surrogate of the synthetic space with the bowl model as its predictor.
class ModelledSurrogate : public ::testing::Test {
 protected:
  ModelledSurrogate() { g.set_predictor(&m); }
  const VariantSpec v = variant();
  const Space s{v, {}};
  BowlModel m;
  Surrogate g{s};
};

TEST_F(ModelledSurrogate, RanksByTheModelBeforeAnyMeasurement) {
  g.prime(s.all_legal());
  EXPECT_EQ(m.calls, 1);  // one call for the whole list: a compiling backend builds it in parallel
  EXPECT_EQ(m.asked, s.all_legal().size());
  // The best score among B = 0 configurations is within the model's error of the true best.
  double best_score = std::numeric_limits<double>::infinity(), at = 0, best_truth = 1e300;
  for (const auto& c : s.all_legal()) {
    best_truth = std::min(best_truth, truth(c));
    if (c.values[1] == 0 && g.score(c) < best_score) best_score = g.score(c), at = truth(c);
  }
  EXPECT_LE(at, best_truth * 1.2);
  // What cannot run scores +infinity, and asking again does not ask the model again.
  EXPECT_TRUE(std::isinf(g.score(Config{{128, 0, 8}})));
  EXPECT_EQ(m.calls, 1);
}

TEST_F(ModelledSurrogate, LearnsTheKnobTheModelMisses) {
  Rng rng(3);
  std::vector<EvalResult> seen;
  for (int i = 0; i < 12; ++i) seen.push_back(measured(s, *s.sample(rng)));
  g.observe(seen);
  EXPECT_EQ(g.observations(), 12);
  // B = 1 now scores about log(1.6) worse than the same configuration with B = 0.
  double gap = 0;
  int n = 0;
  for (const auto& c : s.all_legal())
    if (c.values[1] == 1 && std::isfinite(g.score(c))) {
      Config off = c;
      off.values[1] = 0;
      gap += g.score(c) - g.score(off);
      ++n;
    }
  ASSERT_GT(n, 0);
  EXPECT_NEAR(gap / n, std::log(1.6), 0.2);
  // Its favourite is a B = 0 configuration close to the true best.
  const auto& all = s.all_legal();
  const auto fav = *std::min_element(all.begin(), all.end(), [&](const Config& a, const Config& b) { return g.score(a) < g.score(b); });
  EXPECT_EQ(fav.values[1], 0);
  EXPECT_LE(truth(fav), 50 * 1.15);
}

TEST(Surrogate, WithoutAModelLearnsFromMeasurementsAlone) {
  const auto v = variant();
  const Space s(v, {});
  Surrogate g(s);
  EXPECT_FALSE(g.has_model());
  EXPECT_EQ(g.score(Config{{4, 0, 2}}), 0);  // nothing known: every configuration alike
  Rng rng(8);
  std::vector<EvalResult> seen;
  for (int i = 0; i < 24; ++i) seen.push_back(measured(s, *s.sample(rng)));
  g.observe(seen);
  std::vector<double> times;
  for (const auto& c : s.all_legal()) times.push_back(truth(c));
  std::sort(times.begin(), times.end());
  const auto& all = s.all_legal();
  const auto fav = *std::min_element(all.begin(), all.end(), [&](const Config& a, const Config& b) { return g.score(a) < g.score(b); });
  EXPECT_LE(truth(fav), times[times.size() / 5]) << s.key(fav);  // in the best fifth
}

TEST(Surrogate, SameDataSameScores) {
  const auto v = variant();
  const Space s(v, {});
  BowlModel m1, m2;
  Surrogate a(s), b(s);
  a.set_predictor(&m1);
  b.set_predictor(&m2);
  Rng rng(1);
  std::vector<EvalResult> seen;
  for (int i = 0; i < 10; ++i) seen.push_back(measured(s, *s.sample(rng)));
  seen[3].status = Status::wrong_answer;  // a failure without a time counts against its neighbourhood
  seen[3].time.median_us = 0;
  a.observe(seen);
  b.observe(seen);
  for (const auto& c : s.all_legal()) EXPECT_EQ(a.score(c), b.score(c)) << s.key(c);
  Config off = seen[3].config;
  EXPECT_GT(a.score(off), std::log(m1.predict({off})[0]));
}

}  // namespace
}  // namespace soltune
