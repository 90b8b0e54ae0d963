// The evolutionary searcher and the per-task tuning loop, against a fake evaluator: a synthetic
// landscape time = f(knobs) on a small hand-made space (and the real gelu space for legality).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core/device.hpp"
#include "../support/asker.hpp"
#include "search/baselines.hpp"
#include "search/strategy.hpp"
#include "search/tune_task.hpp"

namespace soltune {
namespace {

using Landscape = std::function<double(const Bindings&)>;

// Predicts time = f(knobs) for legal configurations; illegal ones come back with status illegal.
// A landscape value <= 0 is reported as a compile error (a failing candidate).
class FakeEvaluator final : public Evaluator {
 public:
  FakeEvaluator(Landscape f, double t_ref_us, double t_sol_us)
      : f_(std::move(f)), t_ref_(t_ref_us), t_sol_(t_sol_us), dev_(*find_known_gpu("H200")) {}
  const DeviceInfo& device() const override { return dev_; }
  std::string backend_name() const override { return "fake"; }
  TimeKind kind() const override { return TimeKind::predicted; }
  TaskBaseline baseline(const Task& t) override {
    TaskBaseline b;
    b.t_ref_us = t_ref_;
    b.t_sol_us = t_sol_;
    b.kind = TimeKind::predicted;
    baselines.push_back(t.id());
    return b;
  }
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) override {
    const Space space(*t.variant, t.fixed(dev_));
    batches.push_back(configs.size());
    std::vector<EvalResult> out;
    for (const auto& c : configs) {
      EvalResult r;
      r.config = c;
      r.key = space.key(c);
      r.kind = TimeKind::predicted;
      if (!space.legal(c)) {
        r.status = Status::illegal;
        r.log = space.why_illegal(c);
      } else if (const double us = f_(space.bind(c)); us <= 0) {
        r.status = Status::compile_error;
        r.log = "synthetic compile error";
      } else {
        r.status = Status::ok;
        r.time.median_us = r.time.min_us = r.time.max_us = r.time.q1_us = r.time.q3_us = us;
      }
      evaluated.push_back(r.key);
      out.push_back(std::move(r));
    }
    return out;
  }

  std::optional<Retimed> retime(const Task&, const std::vector<Config>& configs, int rounds) override {
    if (!retimer) return std::nullopt;
    retimed.push_back(configs);
    return retimer(configs, rounds);
  }

  std::vector<std::string> evaluated, baselines;
  std::vector<size_t> batches;
  std::function<std::optional<Retimed>(const std::vector<Config>&, int)> retimer;
  std::vector<std::vector<Config>> retimed;

 private:
  Landscape f_;
  double t_ref_, t_sol_;
  DeviceInfo dev_;
};

class Recorder final : public TaskObserver {
 public:
  void on_result(const Task&, const EvalResult& r, const SolScore& s) override {
    results.push_back(r);
    scores.push_back(s);
  }
  void on_retime(const Task&, const TaskBaseline& b, const EvalResult& best, const SolScore&) override {
    retimes.emplace_back(b.t_ref_us, best.key);
  }
  void on_demoted(const Task&, const EvalResult& r) override { demoted.push_back(r); }
  std::vector<std::pair<double, std::string>> retimes;
  std::vector<EvalResult> demoted;
  std::vector<EvalResult> results;
  std::vector<SolScore> scores;
};

KnobSpec knob(const std::string& name, std::vector<int64_t> values) { return KnobSpec{name, std::move(values), ""}; }

// A: 1..8, B: 1..32 (powers of two), C: 0..2, with A * B <= 64: 38 x 3 = 114 legal configurations.
class SmallSpace : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_.name = "synthetic";
    problem_.sizes = {"n"};
    VariantSpec v;
    v.name = "v";
    v.knobs = {knob("A", {1, 2, 3, 4, 5, 6, 7, 8}), knob("B", {1, 2, 4, 8, 16, 32}), knob("C", {0, 1, 2})};
    v.constraints = {Expr("A * B <= 64", SourceLoc{"v.yaml", 5, 5})};
    problem_.variants.push_back(std::move(v));
    task_ = Task{&problem_, &problem_.variants[0], DType::f32, Shape{{{"n", 1024}}}};
  }
  Space space() const { return Space(*task_.variant, task_.fixed(*find_known_gpu("H200"))); }

  // A smooth bowl with its minimum (10 us) at A=5, B=8, C=0.
  static double bowl(const Bindings& b) {
    const double a = b.at("A"), lb = std::log2(b.at("B")), c = b.at("C");
    return 10 + (a - 5) * (a - 5) + 2 * (lb - 3) * (lb - 3) + 3 * c;
  }
  // tune_task over space() with a default EvolutionarySearch in batches of 8, its Rng seeded
  // `seed`; `rec` receives every result.
  TaskOutcome tune(FakeEvaluator& ev, const TaskBudget& budget, uint64_t seed, Recorder& rec) const {
    const auto sp = space();
    EvolutionarySearch s(sp, SearchOptions{});
    Rng rng(seed);
    return tune_task(task_, ev, sp, s, budget, 8, rng, rec, ev.baseline(task_));
  }
  static constexpr size_t kLegal = 114;
  const std::string kOptimum = "A=5,B=8,C=0";

  // Runs ask/tell until the searcher has nothing left, as the funnel would (what it takes is seen);
  // returns every proposed key in order. `seen`: what is known before.
  std::vector<std::string> drain(EvolutionarySearch& s, const Space& sp, FakeEvaluator& ev, uint64_t seed,
                                 size_t batch = 8, std::set<std::string> seen = {}) {
    Rng rng(seed);
    test::Asker asker{sp, std::move(seen)};
    std::vector<std::string> keys;
    for (int round = 0; round < 1000; ++round) {
      const auto proposals = asker.ask(s, batch, rng);
      if (proposals.empty()) return keys;
      const auto results = ev.evaluate(task_, proposals);
      for (const auto& r : results) keys.push_back(r.key);
      s.tell(results);
    }
    ADD_FAILURE() << "the searcher never ran out of proposals";
    return keys;
  }

  ProblemSpec problem_;
  Task task_;
};

TEST_F(SmallSpace, SpaceIsAsDescribed) {
  const auto s = space();
  EXPECT_EQ(s.enumerate_legal(1000).size(), kLegal);
  EXPECT_TRUE(s.legal(s.parse_key(kOptimum)));
  double best = 1e9;
  std::string best_key;
  for (const auto& c : s.enumerate_legal(1000))
    if (bowl(s.bind(c)) < best) best = bowl(s.bind(c)), best_key = s.key(c);
  EXPECT_EQ(best_key, kOptimum);
  EXPECT_EQ(best, 10);
}

TEST_F(SmallSpace, NeverProposesTwiceAndOnlyLegal) {
  const auto sp = space();
  FakeEvaluator ev(bowl, 1000, 1);
  for (uint64_t seed : {1, 2, 3}) {
    EvolutionarySearch s(sp, SearchOptions{});
    const auto keys = drain(s, sp, ev, seed);
    std::set<std::string> unique(keys.begin(), keys.end());
    EXPECT_EQ(unique.size(), keys.size()) << "a key was proposed twice (seed " << seed << ")";
    EXPECT_EQ(keys.size(), kLegal) << "the space was not finished (seed " << seed << ")";
    for (const auto& k : keys) EXPECT_TRUE(sp.legal(sp.parse_key(k))) << k;
  }
}

TEST_F(SmallSpace, KnownKeysAreNeverProposed) {
  const auto sp = space();
  FakeEvaluator ev(bowl, 1000, 1);
  EvolutionarySearch s(sp, SearchOptions{});
  std::set<std::string> known;
  const auto all = sp.enumerate_legal(1000);
  for (size_t i = 0; i < all.size(); i += 3) known.insert(sp.key(all[i]));
  const auto keys = drain(s, sp, ev, 9, 8, known);
  EXPECT_EQ(keys.size(), kLegal - known.size());
  for (const auto& k : keys) EXPECT_EQ(known.count(k), 0u) << k;
}

TEST_F(SmallSpace, EvolutionPhaseStaysLegalWithFailures) {
  // Every config with C == 2 fails to compile; the evolutionary phase (after 4 random samples) keeps
  // proposing legal, new configurations from an elite that only holds successes.
  const auto sp = space();
  FakeEvaluator ev([](const Bindings& b) { return b.at("C") == 2 ? -1.0 : bowl(b); }, 1000, 1);
  SearchOptions o;
  o.initial = 4;
  o.population = 4;
  EvolutionarySearch s(sp, o);
  const auto keys = drain(s, sp, ev, 17, 5);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), kLegal);
  for (const auto& r : s.elite()) EXPECT_EQ(r.status, Status::ok);
  EXPECT_LE(s.elite().size(), 4u);
  ASSERT_FALSE(s.elite().empty());
  EXPECT_EQ(s.elite().front().key, kOptimum);  // fastest first
}

TEST_F(SmallSpace, SameSeedSameProposals) {
  const auto sp = space();
  FakeEvaluator ev1(bowl, 1000, 1), ev2(bowl, 1000, 1), ev3(bowl, 1000, 1);
  SearchOptions o;
  o.initial = 8;
  EvolutionarySearch a(sp, o), b(sp, o), c(sp, o);
  const auto ka = drain(a, sp, ev1, 42), kb = drain(b, sp, ev2, 42), kc = drain(c, sp, ev3, 43);
  EXPECT_EQ(ka, kb);
  EXPECT_NE(ka, kc);  // the same set (the whole space) in another order
  EXPECT_EQ(std::set<std::string>(ka.begin(), ka.end()), std::set<std::string>(kc.begin(), kc.end()));
}

TEST(GeluSearch, ProposalsOnTheRealSpaceAreLegalAndNew) {
  const auto p = load_problem(SOLTUNE_SOURCE_DIR "/templates", "gelu");
  const auto& v = p.variant("vectorized");
  const auto dev = *find_known_gpu("H200");
  for (auto dt : {DType::f32, DType::bf16}) {
    const Task t{&p, &v, dt, Shape{{{"n", 1000003}}}};
    const Space sp(v, t.fixed(dev));
    FakeEvaluator ev([](const Bindings& b) { return 100 + std::abs(b.at("BLOCK") - 256) / 64 + 16 / b.at("VEC"); },
                     1000, 1);
    EvolutionarySearch s(sp, SearchOptions{});
    Rng rng(5);
    test::Asker asker{sp};  // fails the test on an illegal or repeated proposal
    for (int round = 0; round < 20; ++round) {
      const auto batch = asker.ask(s, 8, rng);
      ASSERT_EQ(batch.size(), 8u);
      s.tell(ev.evaluate(t, batch));
    }
    EXPECT_EQ(asker.seen.size(), 160u);
  }
}

TEST_F(SmallSpace, TuneTaskFindsTheOptimumWithinBudget) {
  // 60 evaluations of a 114-configuration space. Random search would see the optimum with a chance
  // of 60/114 (about 5 seeds in 10); the evolutionary search must find it for at least 9 seeds in
  // 10, and come within one step of it (11 us) for every seed.
  int found = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto sp = space();
    FakeEvaluator ev(bowl, 1000, 1);
    SearchOptions o;
    o.initial = 12;
    o.population = 8;
    EvolutionarySearch s(sp, o);
    Recorder rec;
    Rng rng(seed);
    const auto out = tune_task(task_, ev, sp, s, TaskBudget{60, std::nullopt}, 6, rng, rec, ev.baseline(task_));
    EXPECT_EQ(out.evaluated, 60);
    EXPECT_EQ(out.failed, 0);
    EXPECT_FALSE(out.exhausted);
    EXPECT_EQ(out.baseline.t_ref_us, 1000);
    ASSERT_TRUE(out.best.has_value());
    EXPECT_LE(out.best->time.median_us, 11);
    // The best is the fastest of what was evaluated.
    for (const auto& r : rec.results) EXPECT_GE(r.time.median_us, out.best->time.median_us);
    EXPECT_TRUE(out.best_sol.valid);
    EXPECT_NEAR(out.best_sol.score, sol_score(out.best->time.median_us, 1000, 1).score, 1e-12);
    if (out.best->key == kOptimum) {
      ++found;
      EXPECT_NEAR(out.best_sol.score, 0.5 * (1 + std::log(100.0) / std::log(1000.0)), 1e-12);
    }
  }
  EXPECT_GE(found, 9);
}

TEST_F(SmallSpace, BudgetAccounting) {
  {
    // 21 evaluations in batches of 8: 8 + 8 + 5, each reported to the observer once.
    FakeEvaluator ev(bowl, 1000, 1);
    Recorder rec;
    const auto out = tune(ev, TaskBudget{21, std::nullopt}, 1, rec);
    EXPECT_EQ(out.evaluated, 21);
    EXPECT_EQ(ev.evaluated.size(), 21u);
    EXPECT_EQ(ev.batches, (std::vector<size_t>{8, 8, 5}));
    EXPECT_EQ(rec.results.size(), 21u);
    EXPECT_FALSE(out.exhausted);
  }
  {
    // More budget than configurations: every legal one once, then the task stops as exhausted,
    // and the best is the true optimum.
    FakeEvaluator ev(bowl, 1000, 1);
    Recorder rec;
    const auto out = tune(ev, TaskBudget{500, std::nullopt}, 2, rec);
    EXPECT_EQ(out.evaluated, static_cast<int64_t>(kLegal));
    EXPECT_TRUE(out.exhausted);
    EXPECT_EQ(std::set<std::string>(ev.evaluated.begin(), ev.evaluated.end()).size(), kLegal);
    ASSERT_TRUE(out.best);
    EXPECT_EQ(out.best->key, kOptimum);
  }
  {
    // Failures count against the budget and as failed, and never become the best.
    FakeEvaluator ev([](const Bindings& b) { return b.at("C") == 0 ? -1.0 : bowl(b); }, 1000, 1);
    Recorder rec;
    const auto out = tune(ev, TaskBudget{0, std::nullopt}, 3, rec);
    EXPECT_TRUE(out.exhausted);  // no evaluation limit: runs until the space is done
    EXPECT_EQ(out.evaluated, static_cast<int64_t>(kLegal));
    EXPECT_EQ(out.failed, static_cast<int64_t>(kLegal / 3));
    ASSERT_TRUE(out.best);
    EXPECT_EQ(out.best->key, "A=5,B=8,C=1");
    for (size_t i = 0; i < rec.results.size(); ++i)
      if (rec.results[i].status != Status::ok) {
        EXPECT_FALSE(rec.scores[i].valid);
      }
  }
  {
    // A deadline already past: nothing is evaluated.
    FakeEvaluator ev(bowl, 1000, 1);
    Recorder rec;
    const auto out = tune(ev, TaskBudget{0, std::chrono::steady_clock::now()}, 4, rec);
    EXPECT_EQ(out.evaluated, 0);
    EXPECT_TRUE(ev.evaluated.empty());
    EXPECT_FALSE(out.best);
  }
}

TEST_F(SmallSpace, BelowSpeedOfLightIsNeverBest) {
  // T_SOL is 11 us: the optimum (10 us) is physically impossible, a measurement to distrust.
  // Exhaustive, so every configuration is seen; the best is the fastest at or above T_SOL.
  FakeEvaluator ev(bowl, 1000, 11);
  Recorder rec;
  const auto out = tune(ev, TaskBudget{0, std::nullopt}, 6, rec);
  ASSERT_TRUE(out.best);
  EXPECT_NE(out.best->key, kOptimum);
  EXPECT_GE(out.best->time.median_us, 11);
  EXPECT_EQ(out.best->time.median_us, 11);  // A=4 or 6 (B=8, C=0): 10 + 1
  EXPECT_FALSE(out.best_sol.below_sol);
  // The impossible result was still reported, flagged.
  int flagged = 0;
  for (size_t i = 0; i < rec.results.size(); ++i)
    if (rec.results[i].key == kOptimum) {
      ++flagged;
      EXPECT_TRUE(rec.scores[i].below_sol);
    } else {
      EXPECT_FALSE(rec.scores[i].below_sol) << rec.results[i].key;
    }
  EXPECT_EQ(flagged, 1);
}

// The whole space searched with seed 3, then its three best re-timed over three rounds.
TaskOutcome tune_and_retime(const Space& sp, const Task& t, FakeEvaluator& ev, Recorder& rec) {
  EvolutionarySearch s(sp, SearchOptions{});
  Rng rng(3);
  return tune_task(t, ev, sp, s, TaskBudget{0, std::nullopt}, 8, rng, rec, ev.baseline(t), RetimePolicy{3, 3});
}

TEST_F(SmallSpace, InterleavedRetimingDecidesTheFinalBestAndTref) {
  const auto sp = space();
  FakeEvaluator ev(bowl, 1000, 1);
  // The re-timing says the machine was slower than during the search, and that the second-best
  // configuration of the search is in fact the fastest.
  ev.retimer = [](const std::vector<Config>& configs, int rounds) {
    Retimed r;
    r.baseline_us = {1300, 1200, 1250};
    for (size_t i = 0; i < configs.size(); ++i) r.config_us.push_back(std::vector<double>(rounds, i == 1 ? 14.0 : 16.0 + static_cast<double>(i)));
    return r;
  };
  Recorder rec;
  const auto out = tune_and_retime(sp, task_, ev, rec);
  ASSERT_EQ(ev.retimed.size(), 1u);
  ASSERT_EQ(ev.retimed[0].size(), 3u);
  EXPECT_EQ(sp.key(ev.retimed[0][0]), kOptimum);  // the search's three fastest, fastest first
  ASSERT_TRUE(out.retimed);
  ASSERT_TRUE(out.best);
  EXPECT_EQ(out.best->key, sp.key(ev.retimed[0][1]));
  EXPECT_EQ(out.best->time.median_us, 14.0);
  EXPECT_TRUE(out.best->retimed);  // its time is the re-timing's, its spread the rounds'
  EXPECT_EQ(out.best->time.reps, 3);
  EXPECT_EQ(out.best->time.max_us, 14.0);
  EXPECT_EQ(out.baseline.t_ref_us, 1250);  // the median of the interleaved baseline timings
  EXPECT_NEAR(out.best_sol.score, score(*out.best, out.baseline).score, 1e-12);
  ASSERT_EQ(rec.retimes.size(), 1u);
  EXPECT_EQ(rec.retimes[0].first, 1250);
  // Every result says what proposed it: random samples first, then the genetic step. Batches are
  // proposed one ahead (compiled while the one before is measured), so the 16 initial samples are
  // followed by one more random batch proposed before they were all observed.
  ASSERT_GT(rec.results.size(), 28u);
  EXPECT_EQ(rec.results.front().proposer, "random");
  EXPECT_EQ(rec.results[20].proposer, "random");
  EXPECT_EQ(rec.results[28].proposer, "evolution");
}

TEST_F(SmallSpace, AConfigurationWrongWhenReTimedIsDemotedAndCannotBeTheBest) {
  const auto sp = space();
  FakeEvaluator ev(bowl, 1000, 1);
  // The fastest of the search fails a checked repetition of its re-timing; the third is faster
  // than the second.
  ev.retimer = [](const std::vector<Config>& configs, int rounds) {
    Retimed r;
    r.baseline_us = std::vector<double>(static_cast<size_t>(rounds), 1000);
    for (size_t i = 0; i < configs.size(); ++i) {
      r.config_us.push_back(i == 0 ? std::vector<double>{} : std::vector<double>(rounds, i == 2 ? 15.0 : 17.0));
      r.failed.push_back(i == 0 ? "correct while checked, wrong when re-timed (round 1): FAIL" : "");
    }
    return r;
  };
  Recorder rec;
  const auto out = tune_and_retime(sp, task_, ev, rec);
  ASSERT_EQ(ev.retimed.size(), 1u);
  ASSERT_EQ(rec.demoted.size(), 1u);
  EXPECT_EQ(rec.demoted[0].key, kOptimum);
  EXPECT_EQ(rec.demoted[0].status, Status::wrong_answer);
  EXPECT_EQ(rec.demoted[0].log.rfind("correct while checked, wrong when re-timed", 0), 0u) << rec.demoted[0].log;
  ASSERT_TRUE(out.best);
  EXPECT_EQ(out.best->key, sp.key(ev.retimed[0][2]));
  EXPECT_EQ(out.best->time.median_us, 15.0);
}

TEST_F(SmallSpace, ScoreOfAFailureIsEmpty) {
  TaskBaseline b;
  b.t_ref_us = 100;
  b.t_sol_us = 10;
  EvalResult r;
  r.status = Status::ok;
  r.time.median_us = 10;
  EXPECT_NEAR(score(r, b).score, 1.0, 1e-12);
  r.status = Status::wrong_answer;
  EXPECT_FALSE(score(r, b).valid);
  EXPECT_EQ(score(r, b).score, 0);
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

TEST_F(SmallSpace, StopsAtTheTargetScoreOrWhenStagnant) {
  // T_ref 1000, T_SOL 10: the optimum (10 us) scores 1.0; 11 us about 0.99.
  {
    FakeEvaluator ev(bowl, 1000, 10);
    Recorder rec;
    TaskBudget b{0, std::nullopt};
    b.conditions.target_sol = 0.95;
    const auto out = tune(ev, b, 2, rec);
    ASSERT_TRUE(out.best);
    EXPECT_GE(out.best_sol.score, 0.95);
    EXPECT_LT(out.evaluated, static_cast<int64_t>(kLegal)) << "stopped before exhausting the space";
    EXPECT_NE(out.stopped_by.find("target SOL"), std::string::npos) << out.stopped_by;
    EXPECT_EQ(out.evaluated % 8, 0) << "the batch in flight is finished";
  }
  {
    // A flat landscape never improves after the first result: stagnation ends the task.
    FakeEvaluator ev([](const Bindings&) { return 50.0; }, 1000, 10);
    Recorder rec;
    TaskBudget b{0, std::nullopt};
    b.conditions.stagnation = 20;
    const auto out = tune(ev, b, 2, rec);
    EXPECT_EQ(out.evaluated, 24);  // 1 improving + 20 without, rounded up to whole batches of 8
    EXPECT_NE(out.stopped_by.find("no better time in"), std::string::npos) << out.stopped_by;
  }
}

// The funnel's seeds go first, whatever the strategy: legal and new ones only, each credited as
// given; the strategy's proposals follow and never repeat a known key.
TEST_F(SmallSpace, SeedsAreProposedFirstWhereLegalAndNew) {
  const auto sp = space();
  SearchPrior prior;
  prior.known = {"A=2,B=2,C=0"};
  prior.seeds = {{sp.parse_key("A=8,B=8,C=1"), "archivist.seed"},     // A * B = 64: legal
                 {sp.parse_key("A=8,B=16,C=0"), "archivist.seed"},    // A * B = 128: illegal here, skipped
                 {sp.parse_key("A=2,B=2,C=0"), "archivist.seed"},     // evaluated before: skipped
                 {sp.parse_key("A=1,B=1,C=2"), "archivist.preset"}};
  for (const std::string strategy : {"evolutionary", "random", "exhaustive"}) {
    SCOPED_TRACE(strategy);
    FakeEvaluator ev(bowl, 1000, 1);
    std::unique_ptr<Strategy> s;
    if (strategy == "evolutionary") s = std::make_unique<EvolutionarySearch>(sp, SearchOptions{});
    if (strategy == "random") s = std::make_unique<RandomSearch>(sp);
    if (strategy == "exhaustive") s = std::make_unique<ExhaustiveSearch>(sp);
    Recorder rec;
    Rng rng(1);
    tune_task(task_, ev, sp, *s, TaskBudget{0, std::nullopt}, 3, rng, rec, ev.baseline(task_), RetimePolicy{0, 0}, prior);
    ASSERT_EQ(rec.results.size(), kLegal - 1);  // the whole space but the known key
    EXPECT_EQ(rec.results[0].key, "A=8,B=8,C=1");
    EXPECT_EQ(rec.results[0].proposer, "archivist.seed");
    EXPECT_EQ(rec.results[1].key, "A=1,B=1,C=2");
    EXPECT_EQ(rec.results[1].proposer, "archivist.preset");
    EXPECT_EQ(rec.results[2].proposer, strategy == "evolutionary" ? "random" : strategy);
    std::set<std::string> keys;
    for (const auto& r : rec.results) EXPECT_TRUE(keys.insert(r.key).second) << "measured twice: " << r.key;
    EXPECT_EQ(keys.count("A=2,B=2,C=0"), 0u);
  }
}

}  // namespace
}  // namespace soltune
