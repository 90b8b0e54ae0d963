#pragma once
// A tuning run as a user writes it in configs/<name>.yaml (docs/CONFIGS.md has the format).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/fields.hpp"
#include "core/task.hpp"

namespace soltune {

struct Budget {
  int64_t evals = 0;   // 0 = no limit from this side
  double seconds = 0;  // 0 = no limit from this side
  // When the seconds began to count: the command's start, so that starting the worker, measuring the
  // ceilings and the checks before tuning come out of the budget too. Unset: when the dispatcher starts.
  std::chrono::steady_clock::time_point clock_start{};
  // When the seconds run out: nullopt without a time limit or before clock_start is set.
  std::optional<std::chrono::steady_clock::time_point> deadline() const {
    if (seconds <= 0 || clock_start == std::chrono::steady_clock::time_point{}) return std::nullopt;
    return clock_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  }
  std::string describe() const;  // "320 evaluations, 900 s", "900 s"
};
// A budget a user gives (config or command line) is a positive limit; anything else throws Error at
// `where` ("file:line:col", or the option's name), naming the value. Both sources check alike.
int64_t checked_evals(int64_t evals, const SourceLoc& where);
double checked_seconds(double seconds, const SourceLoc& where);

// The searches a config may name (search: strategy:); src/agents builds them. Baselines first, the
// agent pool last: bench-search reports them in this order.
inline const std::vector<std::string> kStrategies = {"random", "exhaustive", "evolutionary", "explorer", "tuner", "soltune"};
bool known_strategy(const std::string& name);
std::string strategy_names();  // "random, exhaustive, ...": for error messages

struct SearchOptions {
  int initial = 16;            // random samples before evolution starts
  int population = 16;         // elite kept per task
  int batch = 8;               // candidates compiled together
  double mutation_rate = 0.3;  // per knob
  double crossover_rate = 0.5;
  int screen = 4;              // candidates the pool's screen predicts per proposal (1: no screen)
  int initial_candidates = 128;  // what a warm-up round's screen judges in all, before any measurement
  std::string strategy = "soltune";  // soltune (the agent pool), explorer, tuner, evolutionary, random, exhaustive
};

// Per-task stop conditions besides the run's budget: a task stops when any (or, with all, every)
// condition that is set holds, and what it leaves goes to the other tasks.
struct StopOptions {
  double target_sol = 0;   // the best's SOL score (log form) reached this; 0: not a condition
  int64_t stagnation = 0;  // this many evaluations without a better time; 0: not a condition
  int64_t evals = 0;       // the task evaluated this many configurations; 0: not a condition
  double seconds = 0;      // the task ran this long (wall time); 0: not a condition
  bool all = false;        // every condition set must hold (default: any one)
  bool any_set() const { return target_sol > 0 || stagnation > 0 || evals > 0 || seconds > 0; }
};

// How candidates are timed (docs/MEASUREMENT.md). The defaults are soltune's method; the others
// exist to set it beside other harnesses' (PyTorch's busy-waits between its flush and its launch), and
// a run that changes them says so in its backend's name, so that its results are told apart.
struct TimingOptions {
  bool gate = true;      // each timed launch held until the host has queued it whole
  double settle_us = 0;  // a GPU-side idle (a %globaltimer spin) between the L2 flush and the launch
  int input_sets = 0;    // input sets rotated between repetitions; 0: one (the default, see TaskState)
  double flush_mib = 0;  // the L2 flush's buffer; 0: four times L2, at least 256 MiB
  bool is_default() const { return gate && settle_us == 0 && input_sets == 0 && flush_mib == 0; }
  bool operator==(const TimingOptions&) const = default;
  std::string describe() const;  // "gate off, settle 100 us, 1 input set"; "" for the defaults
  // The backend's name a run records: "cuda", or "cuda (timing: ...)" for a timing of its own (the
  // knowledge base keeps those apart by this prefix).
  std::string backend_name() const { return is_default() ? "cuda" : kOtherTimingPrefix + describe() + ")"; }
  static constexpr const char* kOtherTimingPrefix = "cuda (timing: ";
};
SOLTUNE_FIELDS(TimingOptions, gate, settle_us, input_sets, flush_mib);

struct RunConfig {
  std::filesystem::path path;
  std::string problem;
  std::vector<std::string> variants;  // empty: all of the problem's variants
  std::vector<DType> dtypes;          // empty: all of the problem's dtypes
  std::vector<Shape> shapes;
  Budget budget;
  uint64_t seed = 0;
  std::string kb;  // may hold {gpu}: replaced by the device's slug, one knowledge base per GPU
  std::string backend = "auto";   // auto | cuda | model
  std::string model_gpu = "H200";  // the GPU the model backend predicts for
  std::string arch = "auto";       // NVRTC target; auto = the device's, sm_90 without one
  std::filesystem::path templates_dir;
  SearchOptions search;
  StopOptions stop;
  TimingOptions timing;
  ProblemSpec spec;  // the problem, loaded and checked with the config
};

// What a run's search depends on besides its config's tasks, one name and value each as a user writes
// them (seed, budget.evals, budget.seconds, search.*, stop.*, variants, dtypes, shapes): a resumed run
// must match every one. The one list; the knowledge base stores it as a canonical key.
std::vector<std::pair<std::string, std::string>> run_settings(const RunConfig& c);

// The config's tuning tasks, in a fixed order: variant (those the config names), dtype, shape; then
// fallback-only tasks per dtype at its smallest shape where the config's variants leave out the
// problem's fallback variant, one per layout the fallback compiles in (core/fallback.hpp's
// fallback_shapes: matmul's trans_b 0 and 1), except those a task of the run measures already.
std::vector<Task> config_tasks(const RunConfig& c);

// "NVIDIA H200" -> "nvidia-h200": for file names.
std::string slug(const std::string& s);
// The knowledge-base path for a device: {gpu} replaced, relative paths against the config's folder.
std::filesystem::path kb_path(const RunConfig& c, const DeviceInfo& d);

// Loads and checks a run config against its problem's sizes and dtypes. Relative paths in the file
// resolve against the file's folder; templates default to <config dir>/../templates.
RunConfig load_run_config(const std::filesystem::path& path);

}  // namespace soltune
