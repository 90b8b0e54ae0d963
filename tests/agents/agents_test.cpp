// The agents and their pool, on synthetic landscapes served by the replay backend: operators keep
// every proposal legal and new, the bandit moves proposals to the arm that improves the elite, the
// validator guards the elite, the archivist's seeds go first and known keys never come back, and a
// seed in gives the same proposals out.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "../support/synthetic_landscape.hpp"
#include "agents/archivist.hpp"
#include "agents/explorer.hpp"
#include "agents/pool.hpp"
#include "agents/strategies.hpp"
#include "agents/tuner.hpp"
#include "agents/validator.hpp"
#include "eval/replay_evaluator.hpp"
#include "search/tune_task.hpp"

namespace soltune {
namespace {

// A constrained space where the best lies in a narrow valley: a smooth bowl plus a penalty.
Landscape bowl() {
  return test::synthetic_landscape(
      {{"A", {1, 2, 4, 8, 16, 32}}, {"B", {1, 2, 4, 8, 16}}, {"C", {0, 1, 2, 3, 4, 5, 6, 7}}, {"D", {0, 1}}},
      {"A * B <= 128", "D == 0 || C >= 2"}, [](const Bindings& b) {
        if (b.at("A") == 32 && b.at("C") == 7) return -1.0;  // a corner that does not compile
        return 20 + 3 * std::abs(std::log2(b.at("A")) - 3) + 2 * std::abs(std::log2(b.at("B")) - 2) +
               std::abs(b.at("C") - 5) + (b.at("D") ? 0.0 : 1.5);
      });
}

class Collect final : public TaskObserver {
 public:
  void on_result(const Task&, const EvalResult& r, const SolScore&) override { results.push_back(r); }
  std::vector<EvalResult> results;
};

std::vector<EvalResult> run(const Landscape& l, Strategy& s, uint64_t seed, int64_t evals, int batch = 8,
                            SearchPrior prior = {}) {
  ReplayEvaluator ev({&l});
  Collect obs;
  Rng rng(seed);
  const Task t = l.task();
  const Space space(l.variant(), l.fixed);
  TaskBudget b;
  b.evals = evals;
  tune_task(t, ev, space, s, b, batch, rng, obs, l.baseline, RetimePolicy{0, 0}, std::move(prior));
  return obs.results;
}

// An archive that knows some keys of the task and suggests seeds; it counts what it was told of them.
class KnownArchive final : public Archive {
 public:
  std::set<std::string> known(const Task&) override { return keys; }
  std::vector<std::string> seeds(const Task&) override { return suggested; }
  void on_seeds(const Task&, size_t seeds, size_t presets) override { told = {seeds, presets}; }
  std::set<std::string> keys;
  std::vector<std::string> suggested;
  std::pair<size_t, size_t> told;
};

TEST(Agents, EveryOperatorProposesLegalConfigurationsOnly) {
  const auto l = bowl();
  const Space space(l.variant(), l.fixed);
  Population p;
  Rng rng(5);
  // An elite to work from: a few legal configurations.
  for (int i = 0; i < 6; ++i) {
    EvalResult r;
    r.config = *space.sample(rng);
    r.key = space.key(r.config);
    r.time.median_us = 30 + i;
    p.admit(r);
    p.evaluated.push_back(r.config);
  }
  Explorer ex;
  Tuner tu;
  AgentPool pool(space, SearchOptions{});
  for (Agent* a : std::vector<Agent*>{&ex, &tu})
    for (size_t op = 0; op < a->operators().size(); ++op)
      for (int i = 0; i < 200; ++i) {
        auto c = a->propose(op, space, p, rng);
        if (!c) continue;
        // An operator may step outside the constraints; the pool repairs or drops such children.
        if (!space.legal(*c)) {
          const auto fixed = space.repair(*c, rng);
          ASSERT_TRUE(fixed.has_value());
          EXPECT_TRUE(space.legal(*fixed)) << a->name() << "." << a->operators()[op];
        }
      }
  // What the pool hands to the evaluator is always legal and never repeated.
  const auto results = run(l, pool, 11, 150);
  std::set<std::string> keys;
  for (const auto& r : results) {
    EXPECT_TRUE(space.legal(r.config)) << r.key;
    EXPECT_NE(r.status, Status::illegal) << r.key;
    EXPECT_TRUE(keys.insert(r.key).second) << "proposed twice: " << r.key;
  }
  EXPECT_EQ(results.size(), 150u);
}

TEST(Agents, BanditMovesProposalsToTheArmThatImproves) {
  Bandit b({"a", "b", "c"});
  std::map<size_t, int> pulls;
  for (int i = 0; i < 200; ++i) {
    const auto arm = b.choose();
    b.pulled(arm);
    ++pulls[arm];
    b.decay(1);
    b.reward(arm, arm == 2 ? 1.0 : 0.0);
  }
  EXPECT_GT(pulls[2], 140) << b.state();
  // The winner changes: old evidence fades and the proposals follow the new one.
  pulls.clear();
  for (int i = 0; i < 300; ++i) {
    const auto arm = b.choose();
    b.pulled(arm);
    b.decay(1);
    b.reward(arm, arm == 0 ? 1.0 : 0.0);
    if (i >= 150) ++pulls[arm];
  }
  EXPECT_GT(pulls[0], 100) << b.state();
  // Its state is printable: a user sees which arm earned what.
  EXPECT_NE(b.state().find("a n="), std::string::npos);
}

TEST(Agents, PoolRewardsTheAgentWhoseProposalsImproveTheElite) {
  // On a smooth bowl, local steps from the elite keep finding better times; the tuner's arms
  // must end up with more proposals than the explorer's bold ones.
  const auto l = bowl();
  const Space space(l.variant(), l.fixed);
  SearchOptions o;
  o.screen = 1;  // the bandit alone: each arm's own draw is what it proposes (the screen is tested apart)
  AgentPool pool(space, o);
  run(l, pool, 3, 120);
  const auto& b = pool.bandit();
  int64_t tuner = 0, explorer = 0;
  double tuner_won = 0;
  for (size_t a = 0; a < b.arms().size(); ++a) {
    (b.arms()[a].rfind("tuner.", 0) == 0 ? tuner : explorer) += b.total_pulls(a);
    if (b.arms()[a].rfind("tuner.", 0) == 0) tuner_won += b.total_reward(a);
  }
  EXPECT_GT(tuner_won, 0) << b.state();
  EXPECT_GT(tuner, explorer) << b.state();
  EXPECT_NE(pool.report().find("best found by"), std::string::npos);
}

TEST(Agents, SameSeedSameProposalsForEveryStrategy) {
  const auto l = bowl();
  const Space space(l.variant(), l.fixed);
  for (const auto& name : kStrategies) {
    SCOPED_TRACE(name);
    auto a = make_strategy(name, space, SearchOptions{});
    auto b = make_strategy(name, space, SearchOptions{});
    auto c = make_strategy(name, space, SearchOptions{});
    const auto ra = run(l, *a, 9, 90), rb = run(l, *b, 9, 90), rc = run(l, *c, 10, 90);
    std::vector<std::string> ka, kb, kc;
    for (const auto& r : ra) ka.push_back(r.key + " " + r.proposer);
    for (const auto& r : rb) kb.push_back(r.key + " " + r.proposer);
    for (const auto& r : rc) kc.push_back(r.key + " " + r.proposer);
    EXPECT_EQ(ka, kb);
    if (name != "exhaustive") {
      EXPECT_NE(ka, kc);
    }
    EXPECT_EQ(a->checkpoint(), b->checkpoint());
  }
}

TEST(Agents, ValidatorAdmitsOnlyCheckedHonestResults) {
  Validator v;
  v.set_t_sol(10);
  EvalResult r;
  r.status = Status::ok;
  r.time.median_us = 20;
  r.time.reps = 10;
  r.acc.pass = true;
  r.acc.rounds = 3;
  r.acc.checked = 100;
  EXPECT_TRUE(v.check(r).admit);
  auto bad = r;
  bad.status = Status::wrong_answer;
  EXPECT_FALSE(v.check(bad).admit);
  bad = r;
  bad.acc.pass = false;
  EXPECT_FALSE(v.check(bad).admit);
  bad = r;
  bad.acc.unwritten = 3;
  EXPECT_FALSE(v.check(bad).admit);
  bad = r;
  bad.acc.precision_ok = false;
  EXPECT_FALSE(v.check(bad).admit);
  bad = r;
  bad.time.median_us = 9;  // under T_SOL: a red flag, never a win
  EXPECT_NE(v.check(bad).why.find("T_SOL"), std::string::npos);
  bad = r;
  bad.time.median_us = std::nan("");
  EXPECT_FALSE(v.check(bad).admit);
  auto predicted = r;
  predicted.kind = TimeKind::predicted;
  predicted.acc = Accuracy{};
  EXPECT_TRUE(v.check(predicted).admit);
}

TEST(Agents, ArchivistSeedsFirstAndKnownKeysNeverReturn) {
  const auto l = bowl();
  const Space space(l.variant(), l.fixed);
  AgentPool pool(space, SearchOptions{});
  const auto all = space.enumerate_legal(1u << 20);
  KnownArchive archive;
  for (size_t i = 0; i < all.size(); i += 3) archive.keys.insert(space.key(all[i]));
  const std::set<std::string> known = archive.keys;
  archive.suggested = {space.key(all[1]), space.key(all[0]) /* known already: skipped */, "Z=3" /* fits no knob */,
                       space.key(all[4])};
  auto prior = archivist_prior(archive, l.task(), space);
  ASSERT_TRUE(prior.has_value());
  EXPECT_EQ(archive.told, std::make_pair(size_t{3}, size_t{0}));  // the seeds that fit; no presets
  prior->seeds.push_back({all[5], "archivist.preset"});  // a template's known design, after the seeds
  const auto results = run(l, pool, 4, 60, 8, std::move(*prior));
  ASSERT_GE(results.size(), 3u);
  EXPECT_EQ(results[0].key, space.key(all[1]));
  EXPECT_EQ(results[0].proposer, "archivist.seed");
  EXPECT_EQ(results[1].key, space.key(all[4]));
  EXPECT_EQ(results[2].key, space.key(all[5]));
  EXPECT_EQ(results[2].proposer, "archivist.preset");
  for (const auto& r : results) EXPECT_FALSE(known.count(r.key)) << r.key;
}

TEST(Agents, PoolFinishesASmallSpaceExactly) {
  const auto l = test::synthetic_landscape({{"X", {1, 2, 3}}, {"Y", {1, 2}}}, {}, [](const Bindings& b) {
    return 10 + b.at("X") + b.at("Y");
  });
  const Space space(l.variant(), l.fixed);
  AgentPool pool(space, SearchOptions{});
  const auto results = run(l, pool, 1, 100);
  EXPECT_EQ(results.size(), 6u);  // every configuration once, then the space is exhausted
}

// 128 legal configurations among 262144 value combinations (a template whose knobs a user narrowed,
// or a tiny shape): the pool proposes every one and stops, quickly. While it sampled by rejection
// alone, its space-filling draws slowed down tenfold once most were seen (minutes on a real
// template, whose constraints cost more to check; before Space::sparse).
TEST(Agents, PoolExhaustsASparseSpaceQuickly) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> knobs;
  for (const char* k : {"A", "B", "C", "D", "E", "F"}) knobs.push_back({k, {0, 1, 2, 3, 4, 5, 6, 7}});
  const auto l = test::synthetic_landscape(knobs, {"A <= 1 && B == 1 && C == 1 && D == 1"}, [](const Bindings& b) {
    return 10 + b.at("A") + b.at("E") + b.at("F");
  });
  const Space space(l.variant(), l.fixed);
  AgentPool pool(space, SearchOptions{});
  const auto start = std::chrono::steady_clock::now();
  const auto results = run(l, pool, 3, 1000);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::set<std::string> keys;
  for (const auto& r : results) keys.insert(r.key);
  EXPECT_EQ(results.size(), 128u);
  EXPECT_EQ(keys.size(), 128u);
  EXPECT_LT(seconds, 2.0);  // 0.4 s here; 4.2 s by rejection alone
}

}  // namespace
}  // namespace soltune
