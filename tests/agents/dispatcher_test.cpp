// The dispatcher: tasks of configs/gelu.yaml in a fixed order, and the evaluation budget shared
// among them, with a fake evaluator (a synthetic landscape over the real gelu knobs).
#include "agents/dispatcher.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

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
    return b;
  }
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) override {
    const Space space(*t.variant, t.fixed(dev_));
    std::vector<EvalResult> out;
    for (const auto& c : configs) {
      EvalResult r;
      r.config = c;
      r.key = space.key(c);
      r.kind = TimeKind::predicted;
      r.status = space.legal(c) ? Status::ok : Status::illegal;
      const auto b = space.bind(c);
      r.time.median_us = 50 + std::abs(b.at("BLOCK") - 256) / 64 + 8 / b.at("VEC") + b.at("EPT");
      out.push_back(std::move(r));
    }
    calls.push_back("evaluate " + t.id() + " x" + std::to_string(configs.size()));
    return out;
  }
  std::vector<std::string> calls;

 private:
  DeviceInfo dev_;
};

class Recorder final : public TaskObserver {
 public:
  void on_baseline(const Task& t, const TaskBaseline&) override { events.push_back("baseline " + t.id()); }
  void on_result(const Task& t, const EvalResult& r, const SolScore&) override {
    events.push_back("result " + t.id() + " " + r.key);
    ++per_task[t.id()];
  }
  std::vector<std::string> events;
  std::map<std::string, int64_t> per_task;
};

const std::vector<std::string> kTaskIds = {
    "gelu/vectorized/f32/n=268435456", "gelu/vectorized/f32/n=1000003", "gelu/vectorized/bf16/n=268435456",
    "gelu/vectorized/bf16/n=1000003"};

std::set<std::string> none(const Task&) { return {}; }

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

  RunConfig cfg_;
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

TEST_F(DispatcherTest, EvenSplitSumsToBudget) {
  FakeEvaluator ev;
  Recorder rec;
  Dispatcher d(cfg_, ev, rec);
  const auto reports = d.run(Budget{160, 0}, 42, none);
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(total(reports), 160);
  EXPECT_EQ(granted(reports), (std::vector<int64_t>{40, 40, 40, 40}));
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].task.id(), kTaskIds[i]);
    EXPECT_EQ(reports[i].outcome.evaluated, 40);
    EXPECT_EQ(rec.per_task[kTaskIds[i]], 40);
    EXPECT_TRUE(reports[i].outcome.best.has_value());
  }
  // One baseline per task, each before the task's results, tasks one after another.
  std::vector<std::string> baselines;
  size_t last_task = 0;
  for (const auto& e : rec.events) {
    if (e.rfind("baseline ", 0) == 0) {
      baselines.push_back(e.substr(9));
      continue;
    }
    ASSERT_FALSE(baselines.empty()) << "result before any baseline: " << e;
    EXPECT_EQ(e.rfind("result " + baselines.back() + " ", 0), 0u) << e;
    last_task = baselines.size();
  }
  EXPECT_EQ(baselines, kTaskIds);
  EXPECT_EQ(last_task, 4u);
}

TEST_F(DispatcherTest, UnevenSplitSumsToBudget) {
  for (int64_t budget : {10, 7, 5, 4, 163}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    FakeEvaluator ev;
    Recorder rec;
    const auto reports = Dispatcher(cfg_, ev, rec).run(Budget{budget, 0}, 1, none);
    EXPECT_EQ(total(reports), budget);
    int64_t g = 0;
    for (const auto& r : reports) {
      EXPECT_EQ(r.outcome.evaluated, r.evals_granted);
      EXPECT_GE(r.evals_granted, budget / 4);
      EXPECT_LE(r.evals_granted, budget / 4 + 1);
      g += r.evals_granted;
    }
    EXPECT_EQ(g, budget);
  }
  FakeEvaluator ev;
  Recorder rec;
  EXPECT_EQ(granted(Dispatcher(cfg_, ev, rec).run(Budget{10, 0}, 1, none)), (std::vector<int64_t>{2, 2, 3, 3}));
}

TEST_F(DispatcherTest, FewerEvaluationsThanTasksNeverExceedTheBudget) {
  for (int64_t budget : {1, 2, 3}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    FakeEvaluator ev;
    Recorder rec;
    const auto reports = Dispatcher(cfg_, ev, rec).run(Budget{budget, 0}, 1, none);
    EXPECT_EQ(total(reports), budget);
    EXPECT_EQ(static_cast<int64_t>(rec.per_task.size()), budget);
    // The tasks the budget does not reach are not started (no baseline is timed for them).
    EXPECT_EQ(static_cast<int64_t>(reports.size()), budget);
    EXPECT_EQ(static_cast<int64_t>(std::count_if(ev.calls.begin(), ev.calls.end(),
                                                 [](const std::string& c) { return c.rfind("baseline", 0) == 0; })),
              budget);
  }
}

TEST_F(DispatcherTest, WhatAnExhaustedTaskLeavesPassesOn) {
  // The first task's space is known but for 3 configurations: it evaluates 3 of its 10, and the
  // 7 it leaves go to the tasks after it (37 over 3: 12, 12, 13).
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
  const auto reports = d.run(Budget{40, 0}, 3, [&](const Task& t) {
    return t.id() == first.id() ? known : std::set<std::string>{};
  });
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0].outcome.evaluated, 3);
  EXPECT_TRUE(reports[0].outcome.exhausted);
  EXPECT_EQ(granted(reports), (std::vector<int64_t>{10, 12, 12, 13}));
  EXPECT_EQ(total(reports), 40);
  std::set<std::string> first_keys;
  for (const auto& e : rec.events)
    if (e.rfind("result " + first.id() + " ", 0) == 0) first_keys.insert(e.substr(8 + first.id().size()));
  EXPECT_EQ(first_keys, std::set<std::string>(left.begin(), left.end()));
}

TEST_F(DispatcherTest, SameSeedSameRun) {
  FakeEvaluator ev1, ev2, ev3;
  Recorder r1, r2, r3;
  Dispatcher(cfg_, ev1, r1).run(Budget{24, 0}, 7, none);
  Dispatcher(cfg_, ev2, r2).run(Budget{24, 0}, 7, none);
  Dispatcher(cfg_, ev3, r3).run(Budget{24, 0}, 8, none);
  EXPECT_EQ(r1.events, r2.events);
  EXPECT_EQ(ev1.calls, ev2.calls);
  EXPECT_NE(r1.events, r3.events);
  // Each task draws from its own stream: a task's proposals do not depend on the tasks before it.
  EXPECT_EQ(r1.events.size(), 24u + 4u);
}

TEST_F(DispatcherTest, BatchesFollowTheConfig) {
  cfg_.search.batch = 3;
  FakeEvaluator ev;
  Recorder rec;
  Dispatcher(cfg_, ev, rec).run(Budget{28, 0}, 1, none);
  // 7 evaluations per task in batches of 3: 3 + 3 + 1.
  std::vector<std::string> expected;
  for (const auto& id : kTaskIds) {
    expected.push_back("baseline " + id);
    for (int n : {3, 3, 1}) expected.push_back("evaluate " + id + " x" + std::to_string(n));
  }
  EXPECT_EQ(ev.calls, expected);
}

TEST_F(DispatcherTest, SecondsOnlyBudgetStopsAtTheDeadline) {
  // No evaluation limit, a short wall-time budget: every task gets a share and the run ends.
  FakeEvaluator ev;
  Recorder rec;
  const auto start = std::chrono::steady_clock::now();
  const auto reports = Dispatcher(cfg_, ev, rec).run(Budget{0, 0.4}, 1, none);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(reports.size(), 4u);
  for (const auto& r : reports) {
    EXPECT_EQ(r.evals_granted, 0);
    EXPECT_GT(r.outcome.evaluated, 0) << r.task.id();
  }
  EXPECT_LT(secs, 3.0);
}

}  // namespace
}  // namespace soltune
