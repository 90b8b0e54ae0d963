// The report's data from a knowledge base fixture: progress, failures, the best, the roofline's
// sizes, thinning, predicted times marked; and the page built from it.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "../kb/kb_fixture.hpp"
#include "core/error.hpp"
#include "kb/knowledge_base.hpp"
#include "report/report_html.hpp"

namespace soltune {
namespace {

class Report : public test::KbFixture {
 protected:
  Report() : KbFixture("soltune_report_test_") {}

  static EvalResult result(const std::string& key, double us, Status st, const std::string& proposer,
                           const std::string& log = "", TimeKind kind = TimeKind::measured) {
    EvalResult r = untimed_result(key, st, kind);
    r.time.median_us = us;
    r.time.q1_us = us * 0.99;
    r.time.q3_us = us * 1.01;
    r.time.reps = st == Status::ok ? 10 : 0;
    r.proposer = proposer;
    r.log = log;
    r.wall_ms = 3;
    r.phases.kernels = 1;
    r.phases.rounds = 1.5;
    return r;
  }
  static RunInfo run_info(const std::string& backend) {
    RunInfo i;
    i.problem = "gelu";
    i.backend = backend;
    return i;
  }
  static SolScore sol(double us) {
    SolScore s;
    s.t_us = us;
    s.t_ref_us = 20;
    s.t_sol_us = 5;
    s.valid = true;
    s.score = 0.5 * (1 + std::log(20 / us) / std::log(20.0 / 5));
    return s;
  }
  report::ReportOptions options() const {
    report::ReportOptions o;
    o.templates = SOLTUNE_SOURCE_DIR "/templates";
    return o;
  }
  // A run on the measured GPU: gelu/vectorized/f32/n=1024 improving twice, failing twice, and one
  // result of gelu/scalar, a variant the shipped gelu has not.
  std::filesystem::path filled() {
    const auto path = dir_ / "kb.sqlite";
    auto store = KnowledgeBase::open(path);
    const int64_t run = store.begin_run(run_info("cuda"), store.gpu_id(real_, TimeKind::measured));
    const Task v = task("vectorized", DType::f32, 1024), s = task("scalar", DType::f32, 1024);
    store.record(run, v, "h", result("B=1", 12, Status::ok, "random"), sol(12));
    store.record(run, v, "h", result("B=2", 0, Status::wrong_answer, "evolution", "round 2: FAIL </script><b>"), {});
    store.record(run, v, "h", result("B=3", 9, Status::ok, "evolution"), sol(9));
    store.record(run, v, "h", result("B=4", 0, Status::compile_error, "random", "error: expected ';'"), {});
    store.record(run, v, "h", result("B=5", 10, Status::ok, "random"), sol(10));
    auto too_fast = sol(2);  // under T_SOL: the validator's to reject, never the best
    too_fast.below_sol = true;
    store.record(run, v, "h", result("B=6", 2, Status::ok, "random"), too_fast);
    store.record(run, s, "h", result("B=1", 30, Status::ok, "seed"), sol(30));
    return path;
  }
};

TEST_F(Report, ATasksSearchItsFailuresAndItsBest) {
  const auto path = filled();
  const auto kb = KnowledgeBase::open_read_only(path);
  const auto d = report::collect(kb, path, options());
  ASSERT_EQ(d.gpus.size(), 1u);
  EXPECT_EQ(d.gpus[0].name, real_.name);
  EXPECT_DOUBLE_EQ(d.gpus[0].ceilings.tensor_16, 1010e12);  // the measured ceilings, not the datasheet's
  EXPECT_FALSE(d.any_predicted);
  ASSERT_EQ(d.tasks.size(), 2u);
  const auto& t = d.tasks[1];  // by variant: scalar, then vectorized
  EXPECT_EQ(t.id(), "gelu/vectorized/f32/n=1024");
  EXPECT_EQ(t.evaluations, 6);
  EXPECT_EQ(t.by_status.at("ok"), 4);
  EXPECT_EQ(t.by_status.at("wrong_answer"), 1);
  EXPECT_EQ(t.by_status.at("compile_error"), 1);
  EXPECT_NE(t.example_log.at("wrong_answer").find("round 2"), std::string::npos);
  EXPECT_EQ(t.by_proposer.at("random"), 4);
  EXPECT_EQ(t.wins.at("random"), 1);     // evaluation 1
  EXPECT_EQ(t.wins.at("evolution"), 1);  // evaluation 3
  EXPECT_DOUBLE_EQ(t.gpu_ms, 18);         // where the GPU's time went, from the rows' phases
  EXPECT_DOUBLE_EQ(t.phases.kernels, 6);
  EXPECT_DOUBLE_EQ(t.phases.rounds, 9);
  ASSERT_TRUE(t.best);
  EXPECT_DOUBLE_EQ(t.best->time_us, 9);
  EXPECT_EQ(t.best->config_key, "B=3");
  // The best SOL so far rises at evaluations 1 and 3 only.
  ASSERT_EQ(t.best_sol.size(), 2u);
  EXPECT_EQ(t.best_sol[0].first, 1);
  EXPECT_EQ(t.best_sol[1].first, 3);
  EXPECT_GT(t.best_sol[1].second, t.best_sol[0].second);
  ASSERT_EQ(t.points.size(), 6u);
  EXPECT_TRUE(std::isnan(t.points[1].sol));  // a failure has no SOL
  EXPECT_TRUE(t.points[1].rejected);
  EXPECT_FALSE(t.points[2].rejected);
  EXPECT_TRUE(t.points[5].rejected) << "a time under T_SOL";
  EXPECT_DOUBLE_EQ(t.t_ref_us, 20);
  // The shipped gelu gives the roofline its FLOPs and bytes; its missing variant is said, not drawn.
  EXPECT_GT(t.bytes, 0);
  EXPECT_EQ(d.tasks[0].bytes, 0);
  ASSERT_FALSE(d.notes.empty());
  EXPECT_NE(d.notes[0].find("gelu/scalar/f32/n=1024"), std::string::npos) << d.notes[0];
}

TEST_F(Report, ThePageCarriesItsDataChartJsAndItsScriptWhateverALogHolds) {
  const auto path = filled();
  const auto kb = KnowledgeBase::open_read_only(path);
  const auto d = report::collect(kb, path, options());
  const auto json = nlohmann::json::parse(report::report_json(d));
  EXPECT_EQ(json["tasks"].size(), 2u);
  EXPECT_EQ(json["tasks"][1]["best"]["config"], "B=3");
  EXPECT_TRUE(json["tasks"][1]["points"][1]["sol"].is_null());
  EXPECT_EQ(json["tasks"][1]["points"][2]["c"], "B=3") << "the landscape's configuration";
  const auto html = report::render_html(d, "2026-12-06 12:00 UTC");
  // Four scripts (the error catcher, the data, Chart.js, the page's), each closed once: a log's
  // "</script>" stays text.
  size_t closes = 0;
  for (size_t at = html.find("</script>"); at != std::string::npos; at = html.find("</script>", at + 1)) ++closes;
  EXPECT_EQ(closes, 4u);
  EXPECT_NE(html.find("new Chart("), std::string::npos);
  EXPECT_NE(html.find("Chart.js v"), std::string::npos) << "Chart.js inlined";
  EXPECT_EQ(html.find("predictions"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "nothing loaded from elsewhere";
}

TEST_F(Report, PredictedTimesAreSaidOnThePage) {
  const auto path = dir_ / "kb.sqlite";
  {
    auto store = KnowledgeBase::open(path);
    const int64_t run = store.begin_run(run_info("model"), store.gpu_id(model_, TimeKind::predicted));
    store.record(run, task("vectorized", DType::f32, 1024), "h",
                 result("B=1", 12, Status::ok, "random", "", TimeKind::predicted), sol(12));
  }
  const auto kb = KnowledgeBase::open_read_only(path);
  const auto d = report::collect(kb, path, options());
  EXPECT_TRUE(d.any_predicted);
  EXPECT_TRUE(d.gpus[0].predicted);
  EXPECT_NE(report::render_html(d, "now").find("the model backend's predictions"), std::string::npos);
}

TEST_F(Report, NothingToReportIsAnErrorThatSaysWhat) {
  const auto path = dir_ / "empty.sqlite";
  { KnowledgeBase::open(path); }
  const auto empty = KnowledgeBase::open_read_only(path);
  try {
    report::collect(empty, path, options());
    FAIL() << "an empty knowledge base reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds no results"), std::string::npos) << e.what();
  }
  const auto full = filled();
  const auto kb = KnowledgeBase::open_read_only(full);
  for (const auto& [problem, gpu, phrase] : {std::tuple{"softmax", "", "no result of problem 'softmax'"},
                                             std::tuple{"", "A100", "on a GPU named like 'A100'"}}) {
    auto o = options();
    o.problem = problem;
    o.gpu = gpu;
    try {
      report::collect(kb, full, o);
      FAIL() << phrase;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(real_.name), std::string::npos) << "names the GPUs it has: " << e.what();
    }
  }
}

// 10,000 results stay a page to mail: under 5 MB, thinned per task, no task dropped.
TEST_F(Report, TenThousandResultsMakeAPageUnderFiveMegabytes) {
  const auto path = dir_ / "kb.sqlite";
  {
    auto store = KnowledgeBase::open(path);
    const int64_t run = store.begin_run(run_info("cuda"), store.gpu_id(real_, TimeKind::measured));
    for (int i = 0; i < 10000; ++i) {
      const double us = 10 + (i * 7919 % 1000) / 10.0;
      const Status st = i % 10 == 3 ? Status::wrong_answer : Status::ok;
      store.record(run, task("vectorized", DType::f32, int64_t{1024} << (i % 20)), "h",
                   result("BLOCK=" + std::to_string(64 + i % 960) + ",VEC=" + std::to_string(1 << (i % 3)) + ",UNROLL=" +
                              std::to_string(i % 7), us, st, i % 2 ? "explorer.mutate" : "tuner.climb",
                          st == Status::ok ? "" : "round 1 (normal inputs): FAIL: 1048576 checked, 12 mismatches"),
                   st == Status::ok ? sol(us) : SolScore{});
    }
  }
  const auto kb = KnowledgeBase::open_read_only(path);
  const auto d = report::collect(kb, path, options());
  ASSERT_EQ(d.tasks.size(), 20u);
  for (const auto& t : d.tasks) {
    EXPECT_EQ(t.evaluations, 500);
    EXPECT_LE(t.points.size(), 400u);
  }
  EXPECT_LT(report::render_html(d, "now").size(), 5u << 20);
}

TEST(ReportThin, KeepsWhatMustStayAndSamplesTheRestEvenly) {
  const auto kept = report::thin(1000, 100, {5, 7, 999});
  EXPECT_LE(kept.size(), 103u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  for (size_t k : {size_t{0}, size_t{5}, size_t{7}, size_t{999}})
    EXPECT_NE(std::find(kept.begin(), kept.end(), k), kept.end()) << k;
  EXPECT_EQ(report::thin(50, 100, {}).size(), 50u);
}

}  // namespace
}  // namespace soltune
