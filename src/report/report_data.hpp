#pragma once
// What `soltune report` draws, gathered from a knowledge base as plain values: per task the
// search's progress (each evaluation's SOL and what proposed it), what failed and why, and the
// best kernel; per GPU the ceilings a roofline needs. report_html.hpp renders it.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kb/knowledge_base.hpp"
#include "kb/records.hpp"

namespace soltune::report {

// One evaluation of a task, in recording order.
struct Evaluation {
  int index = 0;            // 1-based, over the task's whole history in the knowledge base
  std::string status;       // status_name
  std::string proposer;     // what proposed it ("" in files older than the proposer column)
  std::string config;       // the canonical configuration key, "BLOCK=256,VEC=4"
  double time_us = 0;       // NaN unless ok
  double sol = 0;           // SOL score, NaN unless ok
  // The validator's verdict (agents/validator.hpp): a failed status, or a time under T_SOL, which is
  // never a win.
  bool rejected = false;
};

struct TaskView {
  std::string gpu, problem, variant, dtype, shape;
  std::string id() const { return problem + "/" + variant + "/" + dtype + "/" + shape; }
  int evaluations = 0;
  std::map<std::string, int> by_status;              // status -> evaluations
  std::map<std::string, std::string> example_log;    // a failed status -> the log of its first case
  std::map<std::string, int> by_proposer;            // proposer -> evaluations (the bandit's pulls)
  std::map<std::string, int> wins;                   // proposer -> improvements of the best SOL it made
  double compile_ms = 0;                             // compiling the task's candidates, in all
  int cache_hits = 0;                                // of them answered by the compile cache
  double gpu_ms = 0;                                 // the evaluations' time on the GPU side, in all
  GpuPhases phases;                                  // its share by phase
  std::vector<Evaluation> points;                    // thinned to ReportOptions::max_points, improvements kept
  std::vector<std::pair<int, double>> best_sol;      // (evaluation, best SOL so far) at each improvement
  std::optional<ResultRecord> best;                  // the fastest ok result
  double t_ref_us = 0, t_sol_us = 0;                 // the best's (NaN without one)
  double flops = 0, bytes = 0;                       // from the problem; 0 where its templates are missing
  bool audited_clean = false;                        // the best passed every audit tool run on it
};

struct GpuView {
  std::string name;
  bool predicted = false;   // a model device: its times are predictions
  Ceilings ceilings;        // measured where the knowledge base has them, else the datasheet's
  Ceilings datasheet;
};

struct ReportData {
  std::string kb_path;
  std::vector<GpuView> gpus;
  std::vector<TaskView> tasks;       // by GPU, problem, variant, dtype, shape
  bool any_predicted = false;        // some times are the model backend's predictions
  std::vector<std::string> notes;    // what the report leaves out and why
};

struct ReportOptions {
  std::string problem;               // "" = every problem
  std::string gpu;                   // a case-insensitive fragment of the GPU's name; "" = every GPU
  std::filesystem::path templates;   // for each task's FLOPs and bytes (the roofline)
  size_t max_points = 400;           // evaluations drawn per task, at most
};

// Throws Error where nothing matches: an empty knowledge base, a problem or GPU it has no result of.
ReportData collect(const KnowledgeBase& kb, const std::filesystem::path& kb_path, const ReportOptions& o);

// Every `step`-th of `n` indices and those in `keep`, in order: at most about `max` of them.
std::vector<size_t> thin(size_t n, size_t max, const std::vector<size_t>& keep);

}  // namespace soltune::report
