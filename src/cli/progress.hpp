#pragma once
// What `soltune tune` shows while it runs, and the summary at its end. On a terminal, a block at the
// bottom redrawn in place: per task its evaluations, failures, best time, SOL score and time spent,
// and the run's elapsed time and remaining budget; baselines, new bests and failures a user should
// see scroll above it. Elsewhere (a pipe, a file), one line per evaluation, naming its task and,
// for a failure, the reason. --quiet prints the summary only.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agents/dispatcher.hpp"
#include "cli/live_block.hpp"

namespace soltune::cli {

class Progress {
 public:
  enum class Mode { quiet, lines, live };
  Progress(const Evaluator& ev, Mode mode);
  // The mode for stdout: quiet if asked, live on a terminal, else lines.
  static Mode mode_for_stdout(bool quiet);

  void header(const RunConfig& cfg, const std::filesystem::path& kb, const Budget& budget);
  void baseline(const Task& t, const TaskBaseline& b);
  void result(const Task& t, const EvalResult& r, const SolScore& s);
  void retime(const Task& t, const TaskBaseline& b, const EvalResult& best, const SolScore& s);
  void seeds(const Task& t, size_t n, size_t presets);
  void warning(const std::string& text);  // printed above the live block, or to stderr
  // The summary table (at most 120 columns), then the run's costs and the search's account.
  void summary(const std::vector<TaskReport>& reports);
  // Where the results are and what to run next with them.
  void next_steps(const std::string& program, const std::filesystem::path& kb, const std::string& problem);

 private:
  struct TaskLine {
    std::string id;
    int64_t evals = 0, failed = 0;
    double best_us = 0, best_sol = 0;
    double seconds = 0;  // wall time attributed to it: from the previous result to each of its own
    std::chrono::steady_clock::time_point last;
  };
  TaskLine& line_for(const Task& t);
  void print_event(const std::string& text);  // a line above the block, or a plain line
  void redraw(bool force);
  std::string budget_left() const;

  const Evaluator& ev_;
  Mode mode_;
  std::unique_ptr<LiveBlock> block_;  // live mode only
  Budget budget_;
  int64_t done_ = 0;
  std::vector<TaskLine> tasks_;  // in the order they first spoke
  std::map<std::string, size_t> index_;  // task id -> tasks_
  std::map<std::string, double> bytes_;  // per task id
  std::string last_result_, last_baseline_note_, last_baseline_description_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_result_at_ = start_,
                                        last_draw_{};
  std::vector<double> overhead_ms_, wall_ms_;  // per measured candidate: GPU-side time not in timed kernels
  std::vector<std::pair<double, GpuPhases>> phases_;  // per measured candidate that reported them: wall_ms, phases
  std::vector<double> compile_ms_;             // per candidate compiled in this run (not from the cache)
  int64_t cache_hits_ = 0;                     // candidates whose compile came from the on-disk cache
  std::map<std::string, std::vector<double>> predicted_us_;  // per task id: the model's times, to find ties
  int64_t results_recorded_ = 0;               // results of this run (not replayed) sent to the knowledge base
  // Per task id: this run's candidates that spilled registers, and the fastest correct one of them.
  std::map<std::string, std::pair<int64_t, double>> spilled_;
};

// The share of candidates whose predicted time equals another's (to a part in 10^9), and the share
// at which the summary says that the model cannot rank a task's candidates.
double tied_fraction(std::vector<double> times);
inline constexpr double kTiedWarn = 0.5;

// The first line of a failure's log that says why (for a compile error, the first error NVRTC
// names), cut to `width` characters.
std::string failure_reason(const EvalResult& r, size_t width = 100);
// `text` broken at spaces (and, in long words, after commas) into lines of at most `width`
// characters, the lines after the first indented by `indent` spaces.
std::string wrap(const std::string& text, size_t width, size_t indent);

}  // namespace soltune::cli
