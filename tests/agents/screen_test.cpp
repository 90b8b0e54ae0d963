// The pool's screen (agents/pool.hpp) through the whole funnel (TaskRun, the replay backend): with
// an informative predictor the pool reaches the best region in fewer evaluations than without it
// and than random search, candidates the static report rules out are never measured, the same seed
// gives the same proposals, and the run's account names the screen and its prior.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../support/synthetic_landscape.hpp"
#include "agents/pool.hpp"
#include "agents/strategies.hpp"
#include "eval/replay_evaluator.hpp"
#include "search/tune_task.hpp"

namespace soltune {
namespace {

// A rugged space of 2 x 6 x 5 x 4 x 2 = 480 configurations: a narrow valley in (A, B, C), a knob
// D that costs what the model cannot know, and a corner that does not compile.
double truth(const Bindings& b) {
  if (b.at("A") == 64 && b.at("C") == 16) return -1;  // a compile error
  const double a = std::log2(b.at("A")) - 3.5, c = std::log2(b.at("C")) - 2, x = b.at("B") - 3;
  return (40 + 9 * a * a + 7 * c * c + 5 * x * x + 3 * std::abs(a * c)) * (b.at("D") ? 1.3 : 1.0) *
         (b.at("E") ? 1.02 : 1.0);
}

Landscape valley() {
  return test::synthetic_landscape({{"E", {0, 1}}, {"A", {2, 4, 8, 16, 32, 64}}, {"B", {1, 2, 3, 4, 5}},
                                    {"C", {1, 2, 4, 8, 16}}, {"D", {0, 1}}},
                                   {}, truth);
}

// The model a backend would have: the valley without D, off by a deterministic +-15%, and +infinity
// for what does not compile (the compile itself says so before any GPU time).
class ValleyModel final : public Predictor {
 public:
  explicit ValleyModel(const Space& s) : s_(s) {}
  std::string describe() const override { return "valley model"; }
  std::vector<double> predict(const std::vector<Config>& cs) override {
    std::vector<double> out;
    for (const auto& c : cs) {
      auto b = s_.bind(c);
      const double t = truth(b);
      b["D"] = 0;
      const double wobble = 1 + 0.15 * std::sin(static_cast<double>(c.values[1] * 5 + c.values[2] * 11 + c.values[3]));
      out.push_back(t <= 0 ? std::numeric_limits<double>::infinity() : truth(b) * wobble);
    }
    predicted += cs.size();
    return out;
  }
  size_t predicted = 0;

 private:
  const Space& s_;
};

// The replay backend with the model as its predictor (or none).
class WithModel final : public Evaluator {
 public:
  WithModel(const Landscape& l, bool model) : replay_({&l}), space_(l.variant(), l.fixed), model_(model) {}
  const DeviceInfo& device() const override { return replay_.device(); }
  std::string backend_name() const override { return "replay"; }
  TimeKind kind() const override { return replay_.kind(); }
  TaskBaseline baseline(const Task& t) override { return replay_.baseline(t); }
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& c) override { return replay_.evaluate(t, c); }
  std::unique_ptr<Predictor> predictor(const Task&) override {
    return model_ ? std::make_unique<ValleyModel>(space_) : nullptr;
  }

 private:
  ReplayEvaluator replay_;
  Space space_;
  bool model_;
};

class Collect final : public TaskObserver {
 public:
  void on_result(const Task&, const EvalResult& r, const SolScore&) override { results.push_back(r); }
  std::vector<EvalResult> results;
};

std::vector<EvalResult> run(const Landscape& l, const std::string& strategy, bool model, uint64_t seed, int64_t evals,
                            std::string* report = nullptr, SearchOptions o = {}) {
  const Space space(l.variant(), l.fixed);
  auto s = make_strategy(strategy, space, o);
  WithModel ev(l, model);
  Collect obs;
  Rng rng(seed);
  TaskBudget b;
  b.evals = evals;
  const auto out = tune_task(l.task(), ev, space, *s, b, 8, rng, obs, l.baseline, RetimePolicy{0, 0});
  if (report) *report = out.search_report;
  return obs.results;
}

// Evaluations until a time within 5% of the landscape's best (the budget + 1 if never).
int64_t to5(const std::vector<EvalResult>& rs, double best) {
  for (size_t i = 0; i < rs.size(); ++i)
    if (rs[i].status == Status::ok && rs[i].time.median_us <= best * 1.05) return static_cast<int64_t>(i + 1);
  return static_cast<int64_t>(rs.size() + 1);
}

double median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[v.size() / 2]);
}

TEST(Screen, AnInformativeModelFindsTheBestRegionSooner) {
  const auto l = valley();
  const double best = l.best_us();
  std::vector<int64_t> screened, bare, random;
  for (uint64_t seed = 0; seed < 9; ++seed) {
    screened.push_back(to5(run(l, "soltune", true, seed, 120), best));
    bare.push_back(to5(run(l, "soltune", false, seed, 120), best));
    random.push_back(to5(run(l, "random", true, seed, 120), best));
  }
  EXPECT_LE(median(screened) * 2, median(random)) << median(screened) << " vs random " << median(random);
  EXPECT_LT(median(screened), median(bare)) << median(screened) << " vs no prior " << median(bare);
}

TEST(Screen, WhatCannotRunIsNeverMeasured) {
  const auto l = valley();
  std::string report;
  const auto rs = run(l, "soltune", true, 4, 200, &report);
  EXPECT_EQ(rs.size(), 200u);
  for (const auto& r : rs) EXPECT_NE(r.status, Status::compile_error) << r.key << " by " << r.proposer;
  EXPECT_NE(report.find("screen:"), std::string::npos) << report;
  EXPECT_NE(report.find("valley model"), std::string::npos) << report;
  EXPECT_NE(report.find("best found by"), std::string::npos) << report;
}

// "screen: N candidates judged for M proposals" from the run's account.
int64_t judged(const std::string& report) {
  const auto at = report.find("screen: ");
  return at == std::string::npos ? -1 : std::stoll(report.substr(at + 8));
}

// Before any result the screen has only the prior, which costs no compile: a warm-up round judges
// initial_candidates in all (at least `screen` per proposal), the later rounds `screen` each.
TEST(Screen, TheFirstRoundJudgesMoreCandidatesPerProposal) {
  const auto l = valley();
  std::string report;
  SearchOptions o;
  o.initial = 8;  // the first batch
  o.screen = 4;
  o.initial_candidates = 8;  // fewer than `screen` per proposal: screen wins
  run(l, "soltune", true, 3, 8, &report, o);
  const auto same = judged(report);
  o.initial_candidates = 128;
  run(l, "soltune", true, 3, 8, &report, o);
  const auto wide = judged(report);
  EXPECT_LE(same, 4 * 8) << report;
  EXPECT_GT(wide, 3 * same) << report;
  EXPECT_LE(wide, 128) << report;
  o.screen = 1;  // no screen at all: one candidate per proposal, whatever initial_candidates says
  run(l, "soltune", true, 3, 8, &report, o);
  EXPECT_LE(judged(report), 8) << report;
}

TEST(Screen, SameSeedSameProposals) {
  const auto l = valley();
  const auto a = run(l, "soltune", true, 7, 64), b = run(l, "soltune", true, 7, 64);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].key, b[i].key) << i;
    EXPECT_EQ(a[i].proposer, b[i].proposer) << i;
  }
  const auto c = run(l, "soltune", true, 8, 64);
  bool differ = false;
  for (size_t i = 0; i < a.size() && i < c.size(); ++i) differ = differ || a[i].key != c[i].key;
  EXPECT_TRUE(differ) << "another seed, another search";
}

}  // namespace
}  // namespace soltune
