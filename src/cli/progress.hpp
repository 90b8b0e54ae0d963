#pragma once
// What the terminal shows while tuning: one line per evaluation (evaluations done, the candidate's
// time, bandwidth and SOL score, the task's best so far) and a summary table at the end.
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agents/dispatcher.hpp"

namespace soltune::cli {

class Progress {
 public:
  Progress(const Evaluator& ev, bool verbose) : ev_(ev), verbose_(verbose) {}
  void header(const RunConfig& cfg, const std::filesystem::path& kb);
  void baseline(const Task& t, const TaskBaseline& b);
  void result(const Task& t, const EvalResult& r, const SolScore& s);
  void retime(const Task& t, const TaskBaseline& b, const EvalResult& best, const SolScore& s);
  void seeds(const Task& t, size_t n, size_t presets);
  void summary(const std::vector<TaskReport>& reports);

 private:
  const Evaluator& ev_;
  bool verbose_;
  int64_t done_ = 0, total_ = 0;
  std::map<std::string, double> best_us_;  // per task id
  std::map<std::string, double> bytes_;    // per task id
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<double> overhead_ms_, wall_ms_;  // per measured candidate: GPU-side time not in timed kernels
  std::vector<double> compile_ms_;             // per candidate compiled in this run (not from the cache)
  int64_t cache_hits_ = 0;                     // candidates whose compile came from the on-disk cache
};

}  // namespace soltune::cli
