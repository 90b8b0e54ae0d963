#pragma once
// The single evaluation funnel for one task (Kernel Tuner's design): proposals -> evaluator ->
// score -> observers, until the task's budget is spent or the space is exhausted.
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

#include "core/run_config.hpp"
#include "core/task.hpp"
#include "search/strategy.hpp"

namespace soltune {

// Receives everything a task produces, as it is produced (the knowledge base, the terminal).
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void on_baseline(const Task&, const TaskBaseline&) {}
  virtual void on_result(const Task&, const EvalResult&, const SolScore&) {}
  // After each batch: the search's state (strategy and random generator) and how far it got.
  virtual void on_checkpoint(const Task&, int64_t /*evaluated*/, const std::string& /*state*/) {}
  // Before the search: how many configurations from elsewhere seed it.
  virtual void on_seeds(const Task&, size_t /*count*/) {}
  // After the search: the baseline and the best configurations re-timed interleaved.
  virtual void on_retime(const Task&, const TaskBaseline&, const EvalResult& /*best*/, const SolScore&) {}
};

struct TaskBudget {
  int64_t evals = 0;  // 0: unlimited
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const std::atomic<bool>* stop = nullptr;  // set (by a signal) to stop after the batch in flight
  StopOptions conditions = {};                // target SOL score, stagnation
};

struct TaskOutcome {
  TaskBaseline baseline;
  std::optional<EvalResult> best;
  SolScore best_sol;
  int64_t evaluated = 0;
  int64_t failed = 0;
  bool exhausted = false;  // every legal configuration was evaluated
  bool retimed = false;    // best and baseline re-timed interleaved at the end
  std::string stopped_by;  // "target SOL 0.97 reached", "no improvement in 40 evaluations", "" (budget, space)
};

// How the task's end re-times its best candidates against the baseline.
struct RetimePolicy {
  int top = 3;     // best configurations re-timed
  int rounds = 5;  // interleaved rounds (baseline, then each configuration)
};

SolScore score(const EvalResult& r, const TaskBaseline& b);

TaskOutcome tune_task(const Task& t, Evaluator& ev, Strategy& s, const TaskBudget& budget, int batch, Rng& rng,
                      TaskObserver& obs, const TaskBaseline& baseline, const RetimePolicy& retime = {});

}  // namespace soltune
