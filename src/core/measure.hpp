#pragma once
// Plain value types for what one evaluation of one candidate produced. A candidate's failure is a
// status with a log, never an exception.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/fields.hpp"
#include "core/space.hpp"

namespace soltune {

enum class Status {
  ok,             // compiled, correct (on a GPU) and timed, or predicted (model backend)
  compile_error,  // NVRTC rejected the source (static_assert messages land in the log)
  illegal,        // violates a constraint or a device limit; never compiled or launched
  launch_error,   // the launch itself failed (too many resources, bad geometry)
  wrong_answer,   // output differs from the reference beyond tolerance, NaN, or left unwritten
  fault,          // the kernel faulted (illegal address...): the context was lost and rebuilt
  timeout,        // exceeded its time limit
  slow,           // correct, but clearly slower than the task's best after a few repetitions: not timed further
};
std::string_view status_name(Status s);
Status parse_status(std::string_view s);

// Whether a time was measured on a GPU or predicted by the model: never mixed.
enum class TimeKind { measured, predicted };
std::string_view time_kind_name(TimeKind k);

// A ptxas note that a Hopper kernel lost part of its design: it stays correct, but runs far slower
// than its configuration was built for.
struct PtxasNote {
  enum class Kind {
    wgmma_serialized,    // C7517, C7519, "wgmma.mma_async instructions are serialized": waits on every wgmma
    setmaxnreg_ignored,  // C7508: a warp-specialised kernel's register reallocation did not happen
  };
  Kind kind = Kind::wgmma_serialized;
  std::string line;  // the function's first note of this kind, from its code on: "(C7519) warpgroup..."
  int count = 0;     // the function's notes of this kind
};

struct Resources {  // from the ptxas report
  int registers = 0;
  int spill_stores = 0, spill_loads = 0;  // bytes
  int stack = 0;                          // bytes of stack frame
  int smem_static = 0;                    // bytes
  int cmem = 0;                           // bytes of constant bank 0
  bool parsed = false;
  std::vector<PtxasNote> notes;  // at most one per kind, in the order ptxas printed them
};

struct Timing {
  double median_us = 0, min_us = 0, q1_us = 0, q3_us = 0, max_us = 0;
  int reps = 0;
  double cv() const;  // robust spread: IQR / median
};
SOLTUNE_FIELDS(Timing, median_us, min_us, q1_us, q3_us, max_us, reps);
// Median and quartiles of samples (microseconds). Empty input gives an empty Timing.
Timing summarize(std::vector<double> samples_us);
// Spearman's rank correlation of two equally long series (ties share their mean rank); 0 when either
// is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);
// How well predicted times rank measured ones (infinity: cannot run, or stopped as slow): Spearman's
// rho over the pairs where both are finite, and for each k the best measured time among the k
// best-predicted, over the best measured time.
struct RankAgreement {
  double rho = 0;
  std::vector<double> top_over_best;  // one per k
};
RankAgreement rank_agreement(const std::vector<double>& predicted, const std::vector<double>& measured,
                             const std::vector<size_t>& ks);

struct Accuracy {
  int64_t checked = 0, mismatches = 0, nonfinite = 0, unwritten = 0;
  int64_t out_of_bounds = 0;  // guard-zone bytes around the outputs and workspaces that the kernel changed
  int64_t workspace_dirty = 0;  // workspace bytes left non-zero (a kernel must leave its workspace zeroed)
  int64_t inputs_written = 0;   // input bytes the kernel changed (inputs are read-only)
  std::string written_input;    // the first input it changed
  double max_abs_err = 0, max_rel_err = 0, rel_l2 = 0;
  int rounds = 0;
  bool precision_ok = true;  // rel L2 within the dtype's limit: the declared compute precision was used
  bool pass = false;
  std::string detail;  // how a check other than the full comparison went, for the log (not recorded)
  std::string summary() const;
  // pass: something was compared, the band held (band_ok: mismatches within min_match), and no
  // element is NaN or unwritten, the precision held, and nothing was written out of bounds, left in a
  // workspace or written into an input.
  void settle(bool band_ok);
};
SOLTUNE_FIELDS(Accuracy, checked, mismatches, nonfinite, unwritten, out_of_bounds, workspace_dirty, inputs_written,
               written_input, max_abs_err, max_rel_err, rel_l2, rounds, precision_ok, pass, detail);

struct Geometry {
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t smem = 0;
  std::array<int64_t, 3> cluster{1, 1, 1};  // blocks per thread-block cluster, given at launch
  int64_t threads() const { return grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]; }
  int64_t block_threads() const { return block[0] * block[1] * block[2]; }
  int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
  int64_t cluster_blocks() const { return cluster[0] * cluster[1] * cluster[2]; }
  std::string str() const;  // "grid=(1024,1,1) block=(256,1,1) smem=0", then " cluster=(2,1,1)" if any
};

// Where a measured candidate's time on the GPU side went, in ms of the worker's wall clock (phases
// end at stream synchronisations), beside the timed repetitions' own event times. Not recorded: the
// summary reports their medians.
struct GpuPhases {
  double load = 0;     // module load, launch attributes, constants, tensor maps
  double rounds = 0;   // correctness rounds: inputs, the reference where no earlier candidate's serves, comparison
  double reference = 0;  // of the rounds: drawing inputs and running the reference where none was kept
  double warmup = 0;   // warm-up launches and the probe that sizes the run
  double batches = 0;  // timed batches: draws, flushes, gates, the kernels; their checks excluded
  double checks = 0;   // checks of timed repetitions
  double after = 0;    // workspace and input checks after the timed loop
  double kernels = 0;  // event times of the timed repetitions, the probe's included
};
// The one list of GpuPhases' fields: the wire and the summary derive from it.
inline constexpr std::array<std::pair<const char*, double GpuPhases::*>, 8> kGpuPhaseFields{{
    {"load", &GpuPhases::load},
    {"correctness rounds", &GpuPhases::rounds},
    {"references", &GpuPhases::reference},
    {"warm-up and probe", &GpuPhases::warmup},
    {"timed batches", &GpuPhases::batches},
    {"checks of timed repetitions", &GpuPhases::checks},
    {"final checks", &GpuPhases::after},
    {"in timed kernels", &GpuPhases::kernels},
}};

struct EvalResult {
  Config config;
  std::string key;
  Status status = Status::ok;
  TimeKind kind = TimeKind::measured;
  std::string log;  // compile log, error text, or notes
  Resources res;
  Geometry geo;
  Timing time;
  Accuracy acc;
  double compile_ms = 0;
  bool cache_hit = false;
  int occupancy_blocks = 0;  // active blocks per SM (occupancy calculator)
  double wall_ms = 0;        // wall time the evaluation took on the GPU side (checks, timing, transfers)
  GpuPhases phases;          // the worker's share of wall_ms, by phase (measured candidates only)
  bool replayed = false;     // answered from the knowledge base when a run resumes: recorded already
  // Re-timed at its task's end interleaved with T_ref: its time and that T_ref were taken together,
  // under the same clock, and compare (search times, taken minutes apart, may not).
  bool retimed = false;
  std::string proposer;      // what proposed it: seed, random, evolution, enumeration
};

}  // namespace soltune
