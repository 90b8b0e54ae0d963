// The dispatcher: tasks of configs/gelu.yaml in a fixed order, the evaluation budget shared among
// them by SOL gap and progress, batches compiled ahead, with a fake evaluator (a synthetic landscape
// over the real gelu knobs).
#include "agents/dispatcher.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "core/device.hpp"

namespace soltune {
namespace {

class FakeEvaluator final : public Evaluator {
 public:
  FakeEvaluator() : dev_(*find_known_gpu("H200")) {}
  const DeviceInfo& device() const override { return dev_; }
  std::string backend_name() const override { return "fake"; }
  TimeKind kind() const override { return TimeKind::predicted; }
  TaskBaseline baseline(const Task& t) override {
    TaskBaseline b;
    b.t_ref_us = 1000;
    b.t_sol_us = 1;
    b.kind = TimeKind::predicted;
    calls.push_back("baseline " + t.id());
    if (baseline_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(baseline_s));
    return b;
  }
  // As a backend that judges the baseline's first run: the task in too_slow_baseline takes longer
  // than any limit.
  TaskBaseline baseline_within(const Task& t, double limit_s) override {
    auto b = baseline(t);
    if (limit_s > 0 && t.id() == too_slow_baseline) b.skipped = "its baseline would take about 1000 s";
    limits.push_back(limit_s);
    return b;
  }
  std::string too_slow_baseline;
  std::vector<double> limits;  // of each baseline_within call
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) override {
    const Space space(*t.variant, t.fixed(dev_));
    std::vector<EvalResult> out;
    size_t own = 0;  // when the last of this batch was prefetched
    for (const auto& c : configs) {
      EvalResult r;
      r.config = c;
      r.key = space.key(c);
      r.kind = TimeKind::predicted;
      r.status = space.legal(c) ? Status::ok : Status::illegal;
      const auto b = space.bind(c);
      r.time.median_us = 50 * (t.id() == slow_task ? slow_times : 1.0) +
                         (b.count("BLOCK") ? std::abs(b.at("BLOCK") - best_block) / 64 + 8 / b.at("VEC") + b.at("EPT") : 0.0);
      std::lock_guard lock(mu_);
      if (auto it = prefetched.find(t.id() + " " + r.key); it == prefetched.end()) ++not_prefetched;
      else own = std::max(own, it->second);
      out.push_back(std::move(r));
    }
    calls.push_back("evaluate " + t.id() + " x" + std::to_string(configs.size()));
    if (eval_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(eval_s * static_cast<double>(configs.size())));
    {
      std::lock_guard lock(mu_);
      ++evaluated_batches;
    }
    if (measure_s > 0) {  // the GPU's time: does the next batch reach the compilers meanwhile?
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, std::chrono::duration<double>(measure_s), [&] { return prefetches > own; }))
        ++prefetched_while_measuring;
    }
    return out;
  }
  // Each measurement of a re-timing takes retime_s; the configurations re-time at 60 us.
  std::optional<Retimed> retime(const Task& t, const std::vector<Config>& configs, int rounds) override {
    {
      std::lock_guard lock(mu_);
      retimed.push_back(t.id());
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(retime_s * rounds * static_cast<double>(1 + configs.size())));
    Retimed r;
    r.baseline_us.assign(static_cast<size_t>(rounds), 1000.0);
    r.config_us.assign(configs.size(), std::vector<double>(static_cast<size_t>(rounds), 60.0));
    r.failed.assign(configs.size(), "");
    return r;
  }
  // With compile_bound, the GPU waited for compiles half of every batch's time.
  std::optional<GpuUse> gpu_use() const override {
    if (!compile_bound) return std::nullopt;
    std::lock_guard lock(mu_);
    const double batches = static_cast<double>(evaluated_batches);
    return GpuUse{batches, 2 * batches, batches};
  }
  void prefetch(const Task& t, const std::vector<Config>& configs) override {
    const Space space(*t.variant, t.fixed(dev_));
    {
      std::lock_guard lock(mu_);  // called while evaluate() runs
      ++prefetches;
      largest_prefetch = std::max(largest_prefetch, configs.size());
      for (const auto& c : configs) prefetched.emplace(t.id() + " " + space.key(c), prefetches);
    }
    cv_.notify_all();
  }
  std::vector<std::string> calls;
  std::map<std::string, size_t> prefetched;  // configuration -> which prefetch call named it first
  int64_t not_prefetched = 0;
  std::string slow_task;  // this task's times are slow_times the others': a larger SOL gap
  double slow_times = 10;
  int64_t best_block = 256;  // the landscape's best BLOCK
  double baseline_s = 0;  // how long timing a baseline takes
  double measure_s = 0;   // how long measuring a batch takes at most
  double eval_s = 0;      // how long each evaluation takes
  double retime_s = 0;    // how long each measurement of a re-timing takes
  std::vector<std::string> retimed;  // tasks re-timed, in order
  size_t prefetches = 0, prefetched_while_measuring = 0;
  size_t largest_prefetch = 0;  // configurations handed to the compilers at once
  bool compile_bound = false;
  size_t evaluated_batches = 0;

 private:
  DeviceInfo dev_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
};

class Recorder final : public Archive {
 public:
  std::set<std::string> known(const Task& t) override { return known_of.count(t.id()) ? known_of.at(t.id()) : std::set<std::string>{}; }
  void on_baseline(const Task& t, const TaskBaseline&) override { events.push_back("baseline " + t.id()); }
  void on_warning(const Task& t, const std::string& text) override { events.push_back("warning " + t.id() + " " + text); }
  void on_result(const Task& t, const EvalResult& r, const SolScore&) override {
    events.push_back("result " + t.id() + " " + r.key);
    ++per_task[t.id()];
    proposed_by[t.id()].emplace_back(r.key, r.proposer);
  }
  std::vector<std::string> events;
  std::map<std::string, int64_t> per_task;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> proposed_by;  // task id -> (key, proposer)
  std::map<std::string, std::set<std::string>> known_of;  // task id -> keys the archive knows
};

const std::vector<std::string> kTaskIds = {
    "gelu/vectorized/f32/n=268435456", "gelu/vectorized/f32/n=1000003", "gelu/vectorized/bf16/n=268435456",
    "gelu/vectorized/bf16/n=1000003"};

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override { cfg_ = load_run_config(SOLTUNE_SOURCE_DIR "/configs/gelu.yaml"); }

  static int64_t total(const std::vector<TaskReport>& rs) {
    return std::accumulate(rs.begin(), rs.end(), int64_t{0},
                           [](int64_t s, const TaskReport& r) { return s + r.outcome.evaluated; });
  }
  static std::vector<int64_t> granted(const std::vector<TaskReport>& rs) {
    std::vector<int64_t> g;
    for (const auto& r : rs) g.push_back(r.evals_granted);
    return g;
  }

  // configs/matmul-models.yaml at its first `shapes` shapes, variants mma_sync and tiled only.
  static RunConfig gemm_config(size_t shapes) {
    auto cfg = load_run_config(SOLTUNE_SOURCE_DIR "/configs/matmul-models.yaml");
    cfg.shapes.resize(shapes);
    cfg.variants = {"mma_sync", "tiled"};  // spaces far larger than the budgets here
    return cfg;
  }
  // The dispatcher's tasks that search (the fallback's own task left out), in its order.
  static std::vector<std::string> searching_tasks(const Dispatcher& d) {
    std::vector<std::string> ids;
    for (const auto& t : d.tasks())
      if (!t.fallback_only) ids.push_back(t.id());
    return ids;
  }
  // A dispatcher over gemm_config(shapes) with a fake evaluator and a recorder, and its searching
  // tasks: where variants compete at a shape.
  struct GemmDispatch {
    explicit GemmDispatch(size_t shapes) : cfg(gemm_config(shapes)), d(cfg, ev, rec), ids(searching_tasks(d)) {}
    // How many evaluations each task got in `reports`, by task id.
    static std::map<std::string, int64_t> evaluated(const std::vector<TaskReport>& reports) {
      std::map<std::string, int64_t> n;
      for (const auto& r : reports) n[r.task.id()] = r.outcome.evaluated;
      return n;
    }
    const RunConfig cfg;
    FakeEvaluator ev;
    Recorder rec;
    Dispatcher d;
    const std::vector<std::string> ids;
  };

  // cfg_ run on ev under budget, its archive rec_.
  std::vector<TaskReport> run(FakeEvaluator& ev, Budget budget, uint64_t seed) {
    return Dispatcher(cfg_, ev, rec_).run(budget, seed);
  }

  RunConfig cfg_;
  Recorder rec_;
};

TEST_F(DispatcherTest, TaskOrderIsVariantDtypeShape) {
  FakeEvaluator ev;
  Recorder rec;
  Dispatcher d(cfg_, ev, rec);
  std::vector<std::string> ids;
  for (const auto& t : d.tasks()) ids.push_back(t.id());
  EXPECT_EQ(ids, kTaskIds);
  // The same again, and with the config's dtypes listed the other way round.
  std::vector<std::string> again;
  for (const auto& t : d.tasks()) again.push_back(t.id());
  EXPECT_EQ(ids, again);
  cfg_.dtypes = {DType::bf16, DType::f32};
  ids.clear();
  for (const auto& t : Dispatcher(cfg_, ev, rec).tasks()) ids.push_back(t.id());
  EXPECT_EQ(ids, (std::vector<std::string>{kTaskIds[2], kTaskIds[3], kTaskIds[0], kTaskIds[1]}));
  // A variant filter that names no existing variant leaves nothing to do.
  cfg_.variants = {"other"};
  EXPECT_TRUE(Dispatcher(cfg_, ev, rec).tasks().empty());
}

TEST_F(DispatcherTest, BudgetAccountingAddsUp) {
  for (int64_t budget : {160, 163, 10, 7, 5, 3, 2, 1}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    FakeEvaluator ev;
    Recorder rec;
    const auto reports = Dispatcher(cfg_, ev, rec).run(Budget{budget, 0}, 1);
    EXPECT_EQ(total(reports), budget);
    int64_t g = 0;
    for (const auto& r : reports) {
      EXPECT_EQ(r.outcome.evaluated, r.evals_granted);
      EXPECT_EQ(rec.per_task[r.task.id()], r.outcome.evaluated);
      g += r.evals_granted;
    }
    EXPECT_EQ(g, budget);
    // A task the budget never reaches is not started: no baseline is timed for it.
    EXPECT_EQ(static_cast<size_t>(std::count_if(ev.calls.begin(), ev.calls.end(),
                                                [](const std::string& c) { return c.rfind("baseline", 0) == 0; })),
              reports.size());
    // Every batch went to the compilers (prefetch) before it went to the GPU.
    EXPECT_EQ(ev.not_prefetched, 0);
  }
}

TEST_F(DispatcherTest, ALoneTasksNextBatchCompilesWhileItsBatchIsMeasured) {
  cfg_.dtypes = {DType::f32};
  cfg_.shapes.resize(1);
  FakeEvaluator ev;
  ev.measure_s = 0.5;
  const auto reports = run(ev, Budget{32, 0}, 3);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(total(reports), 32);
  // Four batches of 8: the second, third and fourth were handed to the compilers while the one
  // before them was still being measured (not after: a lone task's GPU then waited on them).
  EXPECT_EQ(ev.prefetched_while_measuring, 3u);
  EXPECT_EQ(ev.not_prefetched, 0);
  // After the first batch it proposed two batches ahead of the GPU, not one, so that the slowest
  // compile of a batch no longer stalls it.
  EXPECT_EQ(ev.largest_prefetch, 16u);
}

TEST_F(DispatcherTest, TasksThatShareTheGpuHoldOneBatchAhead) {
  cfg_.dtypes = {DType::f32};
  cfg_.shapes.resize(2);
  FakeEvaluator ev;
  const auto reports = run(ev, Budget{64, 0}, 3);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(total(reports), 64);
  EXPECT_EQ(ev.not_prefetched, 0);
  EXPECT_EQ(ev.largest_prefetch, 8u);  // one batch ahead each: the other task's fills the gap
}

// Where the GPU waits for compiles, tasks hold more batches ahead, up to four, so that every core
// keeps compiling while the GPU measures.
TEST_F(DispatcherTest, TasksHoldMoreBatchesAheadWhileTheGpuWaitsForCompiles) {
  cfg_.dtypes = {DType::f32};
  cfg_.shapes.resize(2);
  FakeEvaluator ev;
  ev.compile_bound = true;
  const auto reports = run(ev, Budget{160, 0}, 3);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(total(reports), 160);
  EXPECT_EQ(ev.not_prefetched, 0);
  // More than the one batch of 8 tasks sharing the GPU hold otherwise, and never past four.
  EXPECT_GT(ev.largest_prefetch, 8u);
  EXPECT_LE(ev.largest_prefetch, 32u);
}

TEST_F(DispatcherTest, EveryTaskWarmsUpThenTheLargerGapGetsMore) {
  FakeEvaluator ev;
  ev.slow_task = kTaskIds[3];
  const auto reports = run(ev, Budget{200, 0}, 42);
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(total(reports), 200);
  for (const auto& r : reports) {
    EXPECT_GE(r.outcome.evaluated, cfg_.search.initial) << r.task.id();
    EXPECT_TRUE(r.outcome.best.has_value());
  }
  // The slow task's SOL gap is larger: after the warm-up it gets more than any other task.
  for (size_t i = 0; i < 3; ++i) EXPECT_GT(reports[3].outcome.evaluated, reports[i].outcome.evaluated) << i;
  // Tasks interleave: the first task's second batch comes after the second task's first.
  std::vector<std::string> order;
  for (const auto& c : ev.calls)
    if (c.rfind("evaluate ", 0) == 0) order.push_back(c.substr(9, c.rfind(' ') - 9));
  ASSERT_GE(order.size(), 5u);
  EXPECT_EQ(order[0], kTaskIds[0]);
  EXPECT_EQ(order[1], kTaskIds[1]);
}

// Each task's best, when it improves, is tried at the same variant's other shapes of its dtype,
// and at no shape of the other dtype.
TEST_F(DispatcherTest, ANewBestIsTriedAtTheVariantsOtherShapesOfItsDtype) {
  FakeEvaluator ev;
  ev.best_block = 1024;  // away from gelu's presets: the searches find better and offer it
  const auto reports = run(ev, Budget{120, 0}, 42);
  ASSERT_EQ(reports.size(), 4u);
  std::map<std::string, std::string> best;
  for (const auto& r : reports) {
    ASSERT_TRUE(r.outcome.best.has_value()) << r.task.id();
    best[r.task.id()] = r.outcome.best->key;
  }
  auto tried = [&](const std::string& id, const std::string& key, const std::string& by) {
    for (const auto& [k, p] : rec_.proposed_by[id])
      if (k == key && (by.empty() || p == by)) return true;
    return false;
  };
  int offered = 0;
  for (const auto& [id, list] : rec_.proposed_by)
    for (const auto& [key, by] : list)
      if (by == "archivist.sibling") {
        ++offered;
        // Found first at a shape of the same dtype: f32 tasks are 0 and 1, bf16 2 and 3.
        const auto at = std::find(kTaskIds.begin(), kTaskIds.end(), id) - kTaskIds.begin();
        const auto& sibling = kTaskIds[static_cast<size_t>(at ^ 1)];
        EXPECT_TRUE(tried(sibling, key, "")) << id << " got " << key << ", which " << sibling << " never measured";
      }
  EXPECT_GT(offered, 0);
  // The landscape is the same at every shape: each task's final best was measured at its sibling.
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(tried(kTaskIds[i ^ 1], best[kTaskIds[i]], "")) << kTaskIds[i];
}

TEST_F(DispatcherTest, ATaskAtItsTargetLeavesItsShareToTheOthers) {
  FakeEvaluator ev;
  ev.slow_task = kTaskIds[3];
  cfg_.stop.target_sol = 0.65;  // fast tasks reach about 0.72; the slow one about 0.55
  const auto reports = run(ev, Budget{200, 0}, 42);
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(total(reports), 200);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(reports[i].outcome.stopped_by.empty()) << i;
    EXPECT_LE(reports[i].outcome.evaluated, 16) << i;
  }
  EXPECT_TRUE(reports[3].outcome.stopped_by.empty());
  EXPECT_GE(reports[3].outcome.evaluated, 200 - 3 * 16);
}

TEST_F(DispatcherTest, WhatAnExhaustedTaskLeavesPassesOn) {
  // The first task's space is known but for 3 configurations: it evaluates those 3, and the rest
  // of the budget goes to the other tasks.
  FakeEvaluator ev;
  Recorder rec;
  Dispatcher d(cfg_, ev, rec);
  const auto first = d.tasks().front();
  const Space sp(*first.variant, first.fixed(ev.device()));
  std::set<std::string> known;
  for (const auto& c : sp.enumerate_legal(1u << 20)) known.insert(sp.key(c));
  ASSERT_EQ(known.size(), 720u);
  std::vector<std::string> left;
  for (auto it = known.begin(); left.size() < 3; it = known.erase(it)) left.push_back(*it);
  rec.known_of[first.id()] = known;
  const auto reports = d.run(Budget{40, 0}, 3);
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0].outcome.evaluated, 3);
  EXPECT_TRUE(reports[0].outcome.exhausted);
  EXPECT_EQ(total(reports), 40);
  std::set<std::string> first_keys;
  for (const auto& e : rec.events)
    if (e.rfind("result " + first.id() + " ", 0) == 0) first_keys.insert(e.substr(8 + first.id().size()));
  EXPECT_EQ(first_keys, std::set<std::string>(left.begin(), left.end()));
}

TEST_F(DispatcherTest, SameSeedSameRun) {
  for (const auto& strategy : kStrategies) {
    SCOPED_TRACE(strategy);
    cfg_.search.strategy = strategy;
    FakeEvaluator ev1, ev2, ev3;
    Recorder r1, r2, r3;
    Dispatcher(cfg_, ev1, r1).run(Budget{90, 0}, 7);
    Dispatcher(cfg_, ev2, r2).run(Budget{90, 0}, 7);
    Dispatcher(cfg_, ev3, r3).run(Budget{90, 0}, 8);
    EXPECT_EQ(r1.events, r2.events);
    EXPECT_EQ(ev1.calls, ev2.calls);
    if (strategy != "exhaustive") {
      EXPECT_NE(r1.events, r3.events);
    }
  }
}

TEST_F(DispatcherTest, BatchesFollowTheConfig) {
  cfg_.search.batch = 3;
  FakeEvaluator ev;
  Recorder rec;
  Dispatcher(cfg_, ev, rec).run(Budget{28, 0}, 1);
  int64_t n = 0;
  for (const auto& c : ev.calls) {
    if (c.rfind("evaluate ", 0) != 0) continue;
    const auto size = std::stoll(c.substr(c.rfind('x') + 1));
    EXPECT_LE(size, 3) << c;
    n += size;
  }
  EXPECT_EQ(n, 28);
}

TEST_F(DispatcherTest, SecondsOnlyBudgetStopsAtTheDeadline) {
  // No evaluation limit, a short wall-time budget: every task gets a share and the run ends.
  FakeEvaluator ev;
  const auto start = std::chrono::steady_clock::now();
  const auto reports = run(ev, Budget{0, 1.5}, 1);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(reports.size(), 4u);
  for (const auto& r : reports) EXPECT_GT(r.outcome.evaluated, 0) << r.task.id();
  EXPECT_LT(secs, 10.0);
}

TEST_F(DispatcherTest, SlowBaselinesDoNotEatAShortTimeBudget) {
  // Priming (every baseline timed before anything is measured) stops after a quarter of a time
  // budget; the tasks after that start at their first batch, so a short run still measures.
  FakeEvaluator ev;
  ev.baseline_s = 0.4;  // the four baselines would take 1.6 s of a 1 s budget
  const auto reports = run(ev, Budget{0, 1.0}, 1);
  ASSERT_FALSE(reports.empty());
  EXPECT_GT(reports.front().outcome.evaluated, 0) << reports.front().task.id();
  EXPECT_GE(reports.size(), 2u);
  for (const auto& r : reports) EXPECT_GT(r.outcome.evaluated, 0) << r.task.id() << ": started, never measured";
}

// A time budget holds whatever an evaluation costs: batches are cut to what fits, a task none of
// whose evaluations fits stops, and the re-timing at the end fits in what the search left it or is
// skipped, said per task.
TEST_F(DispatcherTest, ATimeBudgetHoldsWithSlowEvaluationsAndTheRetimingAtTheEnd) {
  FakeEvaluator ev;
  ev.eval_s = 0.06;     // a batch of 8: 0.48 s
  ev.retime_s = 0.02;   // a task's re-timing: 5 rounds x 4 measurements = 0.4 s
  ev.baseline_s = 0.05;
  auto budget = Budget{0, 3.0};
  budget.clock_start = std::chrono::steady_clock::now() - std::chrono::milliseconds(500);  // the command began earlier
  const auto start = std::chrono::steady_clock::now();
  const auto reports = run(ev, budget, 1);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(secs, 2.5 + 0.25) << "the budget counts from the command's start";
  EXPECT_GT(secs, 1.5);
  ASSERT_EQ(reports.size(), 4u);
  size_t retimed = 0;
  for (const auto& r : reports) {
    EXPECT_GT(r.outcome.evaluated, 0) << r.task.id() << ": " << r.outcome.stopped_by;
    retimed += r.outcome.retimed;
    EXPECT_NE(r.outcome.retimed, !r.outcome.not_retimed.empty()) << r.task.id() << ": re-timed or said why not";
  }
  EXPECT_GT(retimed, 0u);
  // Without a time budget every task is re-timed at the end, after the search.
  FakeEvaluator free;
  Recorder rec2;
  for (const auto& r : Dispatcher(cfg_, free, rec2).run(Budget{16, 0}, 1)) EXPECT_TRUE(r.outcome.retimed) << r.task.id();
}

// Variants compete at a shape: one ten times slower than another there leaves its warm-up after two
// evaluations, and the budget goes to the variants that can win; at a shape where it is the only
// fast one it gets its share.
TEST_F(DispatcherTest, AVariantFarBehindAnotherAtItsShapeGetsLittle) {
  GemmDispatch g(2);
  const auto& ids = g.ids;
  ASSERT_EQ(ids.size(), 4u);  // mma_sync at two shapes, then tiled at two
  g.ev.slow_task = ids[2];    // tiled at the first shape: 500 us where mma_sync takes 50
  auto evaluated = g.evaluated(g.d.run(Budget{96, 0}, 3));
  EXPECT_LE(evaluated[ids[2]], 8) << "the slow variant kept its warm-up";
  EXPECT_GT(evaluated[ids[0]], 2 * evaluated[ids[2]]);
  EXPECT_GE(evaluated[ids[3]], g.cfg.search.initial) << "the same variant at a shape where it keeps up";
}

// The variant leading at a shape warms up before those behind it: after every task's first
// evaluation, the fast variant listed last takes its warm-up before the slow one listed first.
TEST_F(DispatcherTest, TheVariantLeadingAtAShapeWarmsUpFirst) {
  GemmDispatch g(1);
  const auto& ids = g.ids;
  ASSERT_EQ(ids.size(), 2u);
  g.ev.slow_task = ids[0];  // mma_sync, listed first, ten times slower than tiled
  g.d.run(Budget{4 * g.cfg.search.initial, 600}, 3);  // a time budget: every task's first evaluation comes alone
  std::vector<std::string> order;  // the task of each evaluation, in order
  for (const auto& e : g.rec.events)
    if (e.rfind("result ", 0) == 0) order.push_back(e.substr(7, e.find(' ', 7) - 7));
  auto nth = [&](const std::string& id, int n) {  // where the task's n-th evaluation came
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i] == id && --n == 0) return i;
    return order.size();
  };
  EXPECT_LT(nth(ids[1], 1), nth(ids[0], 2));
  EXPECT_LT(nth(ids[1], g.cfg.search.initial), nth(ids[0], 2)) << "the leader's warm-up first";
}

// The budget at a shape goes mostly to the variant leading there: one 1.5 times slower leaves its
// warm-up after two evaluations and gets under half the leader's share.
TEST_F(DispatcherTest, AVariantBehindTheLeaderAtItsShapeGetsLessThanTheLeader) {
  GemmDispatch g(1);
  const auto& ids = g.ids;
  ASSERT_EQ(ids.size(), 2u);
  g.ev.slow_task = ids[0];
  g.ev.slow_times = 1.5;
  auto evaluated = g.evaluated(g.d.run(Budget{12 * g.cfg.search.initial, 0}, 3));
  EXPECT_GE(evaluated[ids[0]], 2);
  EXPECT_GT(evaluated[ids[1]], 2 * evaluated[ids[0]]);
}

// Under a time budget a baseline too slow for it is said and its task skipped; the others run.
// Without one, nothing limits a baseline.
TEST_F(DispatcherTest, ABaselineTooSlowForTheBudgetIsSaidAndItsTaskSkipped) {
  FakeEvaluator ev;
  ev.too_slow_baseline = kTaskIds[1];
  Recorder rec;
  const auto reports = Dispatcher(cfg_, ev, rec).run(Budget{0, 2.0}, 1);
  ASSERT_EQ(reports.size(), 3u);
  for (const auto& r : reports) {
    EXPECT_NE(r.task.id(), kTaskIds[1]);
    EXPECT_GT(r.outcome.evaluated, 0) << r.task.id();
  }
  EXPECT_EQ(rec.per_task.count(kTaskIds[1]), 0u);
  EXPECT_EQ(std::count(rec.events.begin(), rec.events.end(),
                       "warning " + kTaskIds[1] + " " + kTaskIds[1] + ": not tuned: its baseline would take about 1000 s"),
            1);
  for (double l : ev.limits) EXPECT_EQ(l, 5.0) << "a quarter of what is left, 5 s at least";
  FakeEvaluator free;
  free.too_slow_baseline = kTaskIds[1];
  Recorder rec2;
  EXPECT_EQ(Dispatcher(cfg_, free, rec2).run(Budget{16, 0}, 1).size(), 4u) << "no time budget, no limit";
}

// The baseline belongs to the shape and dtype: timed once there, whatever the variants.
TEST_F(DispatcherTest, OneBaselinePerShapeAndDtype) {
  auto cfg = load_run_config(SOLTUNE_SOURCE_DIR "/configs/matmul-models.yaml");
  cfg.shapes.resize(2);
  FakeEvaluator ev;
  Recorder rec;
  Dispatcher d(cfg, ev, rec);
  const auto tasks = d.tasks();
  std::set<std::string> shapes;
  for (const auto& t : tasks) shapes.insert(std::string(dtype_name(t.dtype)) + t.shape.key());
  ASSERT_GT(tasks.size(), shapes.size());
  d.run(Budget{static_cast<int64_t>(tasks.size()), 0}, 1);
  EXPECT_EQ(std::count_if(ev.calls.begin(), ev.calls.end(), [](const std::string& c) { return c.rfind("baseline ", 0) == 0; }),
            static_cast<long>(shapes.size()));
  EXPECT_EQ(std::count_if(rec.events.begin(), rec.events.end(), [](const std::string& c) { return c.rfind("baseline ", 0) == 0; }),
            static_cast<long>(tasks.size()));  // each task still records its baseline
}

TEST_F(DispatcherTest, StopConditionsAnyOrAll) {
  TaskOutcome o;
  o.evaluated = 50;
  o.best_sol.valid = true;
  o.best_sol.score = 0.9;
  StopOptions c;
  c.target_sol = 0.95;
  c.stagnation = 20;
  EXPECT_NE(stop_reason(c, o, 25, 1), "");  // any: stagnation holds
  c.all = true;
  EXPECT_EQ(stop_reason(c, o, 25, 1), "");  // all: the target does not
  o.best_sol.score = 0.96;
  EXPECT_NE(stop_reason(c, o, 25, 1), "");
  c = StopOptions{};
  c.evals = 50;
  EXPECT_NE(stop_reason(c, o, 0, 0), "");
  c.evals = 51;
  EXPECT_EQ(stop_reason(c, o, 0, 0), "");
  c.seconds = 2;
  EXPECT_EQ(stop_reason(c, o, 0, 1.5), "");
  EXPECT_NE(stop_reason(c, o, 0, 2.5), "");
  EXPECT_EQ(stop_reason(StopOptions{}, o, 1000, 1000), "");  // nothing set: nothing stops
}

}  // namespace
}  // namespace soltune
