#pragma once
// The task dispatcher: splits a run config into tuning tasks (variant x dtype x shape) and shares
// the run's budget among them. Evaluations are split evenly, and what a finished task leaves
// (an exhausted space) passes on to the tasks after it; wall time is shared the same way.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/run_config.hpp"
#include "search/tune_task.hpp"

namespace soltune {

struct TaskReport {
  Task task;
  TaskOutcome outcome;
  int64_t evals_granted = 0;
};

class Dispatcher {
 public:
  Dispatcher(const RunConfig& cfg, Evaluator& ev, TaskObserver& obs);
  std::vector<Task> tasks() const;  // deterministic order: variant, dtype, shape
  // known(task): canonical keys already evaluated for the task (never proposed again).
  // stop: when set (by a signal), the run ends after the batch in flight; tasks not started are skipped.
  // seeds(task): configuration keys that did well elsewhere, proposed first (may be empty).
  std::vector<TaskReport> run(const Budget& b, uint64_t seed,
                              const std::function<std::set<std::string>(const Task&)>& known,
                              const std::atomic<bool>* stop = nullptr,
                              const std::function<std::vector<std::string>(const Task&)>& seeds = {});

 private:
  const RunConfig& cfg_;
  Evaluator& ev_;
  TaskObserver& obs_;
};

}  // namespace soltune
