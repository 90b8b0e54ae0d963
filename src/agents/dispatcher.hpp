#pragma once
// The task dispatcher: splits a run config into tuning tasks (variant x dtype x shape) and shares
// the run's budget (evaluations and/or seconds) among them, a batch at a time. Every task first
// gets its warm-up share; after that the next batch goes to the task with the least effort spent
// for its weight, where the weight grows with the task's SOL gap (1 - its best's SOL score) and its
// recent progress. A task that converged (stop conditions) or reached its target leaves; what it
// would have used goes to the others. Before the first measurement every task's baseline is timed
// and its first batch proposed and prefetched; then tasks interleave, and each proposes its next
// batch before the current one is measured, so the CPU compiles while the GPU measures.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "agents/archive.hpp"
#include "core/run_config.hpp"
#include "search/tune_task.hpp"

namespace soltune {

struct TaskReport {
  Task task;
  TaskOutcome outcome;
  int64_t evals_granted = 0;  // evaluations the dispatcher gave the task (what it evaluated)
};

// A task's claim on the next batch: larger for a larger SOL gap and recent progress.
double task_weight(const TaskOutcome& o, double recent_gain);

// Why each of the config's variants that cannot run on the device is left out (its arch).
std::vector<std::string> unavailable_variants(const RunConfig& cfg, const DeviceInfo& device);

class Dispatcher {
 public:
  Dispatcher(const RunConfig& cfg, Evaluator& ev, Archive& archive);
  // Deterministic order: variant, dtype, shape (those included, and runnable on the device).
  std::vector<Task> tasks() const;
  // Runs only the tasks for which include(task) holds (the replay backend: tasks with a landscape).
  void include_only(std::function<bool(const Task&)> include) { include_ = std::move(include); }
  // The archive's known configurations are never proposed again, its seeds first. stop: when set
  // (by a signal), the run ends after the batch in flight.
  std::vector<TaskReport> run(const Budget& b, uint64_t seed, const std::atomic<bool>* stop = nullptr);

 private:
  const RunConfig& cfg_;
  Evaluator& ev_;
  Archive& archive_;
  std::function<bool(const Task&)> include_;
};

}  // namespace soltune
