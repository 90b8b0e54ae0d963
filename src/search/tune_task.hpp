#pragma once
// The single evaluation funnel for one task (Kernel Tuner's design): proposals -> evaluator ->
// score -> observers, until the task's budget is spent, a stop condition holds or the space is
// exhausted. Compiles run one batch ahead: batch k+1 is proposed (from what batches up to k-1
// taught, while batch k is measured) and handed to the evaluator's prefetch, so the CPU compiles
// while the GPU measures. The lag is deterministic, so a seed in still gives the same proposals out.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>

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
  // Seeds from the knowledge base, and the template's presets (known designs) legal for the task.
  virtual void on_seeds(const Task&, size_t /*seeds*/, size_t /*presets*/) {}
  // After the search: the baseline and the best configurations re-timed interleaved.
  virtual void on_retime(const Task&, const TaskBaseline&, const EvalResult& /*best*/, const SolScore&) {}
  // A result observed ok that a checked repetition of its re-timing found wrong: r as it now stands.
  virtual void on_demoted(const Task&, const EvalResult& /*r*/) {}
  // Something the run's user should hear of while it runs (a resumed search that left its checkpoint).
  virtual void on_warning(const Task&, const std::string& /*text*/) {}
};

struct TaskOutcome {
  TaskBaseline baseline;
  std::optional<EvalResult> best;
  SolScore best_sol;
  int64_t evaluated = 0;
  int64_t failed = 0;
  bool exhausted = false;  // every legal configuration was evaluated
  bool retimed = false;    // best and baseline re-timed interleaved at the end
  std::string not_retimed; // why not, where it would have been (a time budget spent)
  int64_t compile_errors = 0;      // of `evaluated`, those NVRTC rejected
  int64_t unmeasured = 0;          // proposed, but the budget ended while they compiled or waited for the GPU
  std::string first_compile_error; // the first error line of the first of them
  std::string stopped_by;  // "target SOL 0.97 reached", "no better time in 40 evaluations", "" (budget, space)
  std::string search_report;  // the strategy's own account (the agent pool: bandit, validator)
};

// How the task's end re-times its best candidates against the baseline.
struct RetimePolicy {
  int top = 3;     // best configurations re-timed
  int rounds = 5;  // interleaved rounds (baseline, then each configuration)
};

SolScore score(const EvalResult& r, const TaskBaseline& b);

// Whether a task's stop conditions hold (any, or all of those set).
std::string stop_reason(const StopOptions& c, const TaskOutcome& o, int64_t since_better, double seconds);

// What is known of a task before its search (the archivist's, agents/archivist.hpp): the keys never
// to propose (evaluated by earlier runs) and the seeds, proposed first, in order, where legal and not
// seen, each with what it credits ("archivist.seed", "archivist.preset").
struct SearchPrior {
  std::set<std::string> known;
  std::vector<Proposal> seeds;
};

// One task's search, a batch at a time, so that a dispatcher can interleave tasks. It owns what was
// seen and the seeds; the strategy, asked for the rest, only chooses.
class TaskRun {
 public:
  TaskRun(const Task& t, Evaluator& ev, const Space& space, Strategy& s, int batch, Rng& rng, TaskObserver& obs,
          const TaskBaseline& baseline, StopOptions stop = {}, SearchPrior prior = {});
  // Evaluates one batch of at most `allowance` configurations (the oldest proposed ahead), having
  // proposed and prefetched enough to hold `lookahead` configurations ahead of it: one batch keeps
  // the compiles a batch ahead of the GPU, two keep a lone task's GPU fed (the dispatcher's choice).
  // False when the task is done: its space is exhausted, or a stop condition holds. Configurations
  // proposed ahead and never evaluated are dropped.
  bool step(int64_t allowance, int64_t lookahead);
  // Proposes the first batch (at most n configurations) and hands it to the evaluator's prefetch
  // now, so that a dispatcher can start every task's first compiles before it measures anything.
  // The same proposals as the first step would make: no result exists yet either way.
  void prime(int64_t n);
  // Re-times the best configurations against the baseline (unless interrupted), once.
  const TaskOutcome& finish(const RetimePolicy& retime, bool interrupted);
  // Why the task stopped before its share of the budget was spent, where nothing else said so.
  void note_stop(const std::string& why) {
    if (out_.stopped_by.empty()) out_.stopped_by = why;
  }
  void note_not_retimed(const std::string& why) { out_.not_retimed = why; }
  // A configuration another task found good (its best at another shape of the same variant and
  // dtype): proposed at the next proposals, before the seeds not yet proposed and the strategy's
  // own, where legal and never seen. Between steps only (a step proposes on another thread).
  void offer(Proposal p) { seeds_.insert(seeds_.begin() + static_cast<std::ptrdiff_t>(next_seed_), std::move(p)); }
  // Configurations valid so far: what finish() would re-time (its top ones).
  size_t valid() const { return ok_.size(); }
  const TaskOutcome& outcome() const { return out_; }
  const Task& task() const { return task_; }
  int64_t since_better() const { return since_better_; }
  // The best time's improvement over the last `window` evaluations, as a fraction (0: none).
  double recent_gain(int64_t window) const;

 private:
  // Up to n proposals, the seeds first, each legal and never seen, handed to the evaluator's prefetch.
  std::vector<Proposal> propose(int64_t n);
  // Measures a batch and records its results (the strategy is told of them later).
  std::vector<EvalResult> evaluate(std::vector<Proposal> batch);

  Task task_;
  Evaluator& ev_;
  std::unique_ptr<Predictor> predictor_;  // the evaluator's, handed to the strategy
  const Space& space_;
  Strategy& s_;
  std::set<std::string> seen_;  // proposed, evaluated or known: never proposed (again)
  std::vector<Proposal> seeds_;
  size_t next_seed_ = 0;
  int64_t proposed_ = 0;
  int batch_;
  Rng& rng_;
  TaskObserver& obs_;
  StopOptions stop_;
  TaskOutcome out_;
  std::vector<EvalResult> ok_;       // counted results
  std::vector<Proposal> next_;       // proposed ahead, prefetched, oldest first
  bool primed_ = false, finished_ = false;
  int64_t since_better_ = 0;
  std::vector<std::pair<int64_t, double>> best_history_;  // (evaluated, best time) at each improvement
  std::chrono::steady_clock::time_point start_;
};

struct TaskBudget {
  int64_t evals = 0;  // 0: unlimited
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const std::atomic<bool>* stop = nullptr;  // set (by a signal) to stop after the batch in flight
  StopOptions conditions = {};                // target SOL score, stagnation, ...
};

// One task from start to end: TaskRun steps until done, then the re-timing.
TaskOutcome tune_task(const Task& t, Evaluator& ev, const Space& space, Strategy& s, const TaskBudget& budget, int batch,
                      Rng& rng, TaskObserver& obs, const TaskBaseline& baseline, const RetimePolicy& retime = {},
                      SearchPrior prior = {});

}  // namespace soltune
