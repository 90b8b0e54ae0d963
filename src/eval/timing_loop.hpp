#pragma once
// The one timing protocol every measurement goes through (the baseline, candidates, re-timing):
// warm-up, a three-repetition probe (one beside a kernel of milliseconds) that sizes the run and
// stops clearly slow candidates, then timed batches. Each repetition: part of its input set drawn
// afresh, L2 flushed (or the input sets rotated: rotation_sets), the stream gated
// until the host has queued the repetition whole (timing_gate.hpp), CUDA events around the launch. A repetition whose gate timed
// out may contain a CPU gap: it is dropped and run again, and the outcome's note says so.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "core/measure.hpp"
#include "core/run_config.hpp"
#include "eval/cuda_task_state.hpp"

namespace soltune {

struct CudaEvalOptions {
  int check_rounds = 3;      // correctness rounds, each on fresh inputs of another distribution
  double slow_factor = 1.5;  // stop timing a candidate this much slower than the task's best
  double target_cv = 0.02;   // repeat the timed batch while (q3 - q1) / median is wider than this
  int extra_batches = 2;     // at most this many more batches
  double target_ms = 100;    // timed work per candidate
  int min_reps = 10, max_reps = 100;
  int warmup = 3;
  uint64_t seed = 0;
  bool measure_ceilings = true;
  TimingOptions timing;           // the run config's `timing:` (gate off in the test that shows what it prevents)
  double gate_timeout_ms = 1000;  // a gate opens by itself after this long (the host stalled)
  bool operator==(const CudaEvalOptions&) const = default;
};
SOLTUNE_FIELDS(CudaEvalOptions, check_rounds, slow_factor, target_cv, extra_batches, target_ms, min_reps, max_reps,
               warmup, seed, measure_ceilings, timing, gate_timeout_ms);

// Repetitions of the probe that sizes a run (never checked, never an admitted time).
inline constexpr int kProbeReps = 3;
// A second warm-up launch that takes this long on the GPU (events around it) ends the warm-up and
// is the probe: its time alone sizes the run.
inline constexpr double kLongRunMs = 2.0;
// The launches before a run's first timed repetition, for a kernel of run_ms: the warm-up and the
// probe (two in all for a long run). The estimates of a run's cost count them.
inline int launches_before_timing(double run_ms, int warmup) {
  return warmup > 1 && run_ms >= kLongRunMs ? 2 : (warmup > 1 ? warmup : 1) + kProbeReps;
}
// Timed repetitions checked per batch of a candidate's timing (and of a re-timing), at random: a
// kernel that skips the work in a fraction f of them passes a batch with probability (1 - f)^2, and
// must skip in most of them to move the median.
inline constexpr int kChecksPerBatch = 2;
// Rows of an m-row GEMM that a checked timed repetition computes exactly (eval/timed_check.cpp): a
// 256th, at least 16 (a block's rows) or all of them. With a 64th, a check at 8192 x 28672 x 8192
// cost about four runs of the kernel it checked (docs/MEASUREMENT.md).
constexpr int64_t exact_check_rows(int64_t m) { return m <= 16 ? m : std::max<int64_t>(16, (m + 255) / 256); }
// Rows the reference recomputes in a check on sampled rows (reference_rows): 64 or a 32nd of them,
// a 32nd of the reference's cost; a repetition with a share f of its rows wrong escapes one check
// with probability (1 - f)^rows (a tile of 128 rows in 2048: 1.6%).
constexpr int64_t reference_check_rows(int64_t m) { return m <= 64 ? m : std::max<int64_t>(64, (m + 31) / 32); }

struct TimingPlan {
  double incumbent_us = 0;  // 0: never stop early
  // Check about this many repetitions of every timed batch (the gate's re-runs and extra batches
  // too; not the probe, whose times are never an admitted time), each by a draw the config does
  // not determine, at least one; 0: none.
  int checks_per_batch = 0;
};

struct TimingOutcome {
  cudaError_t err = cudaSuccess;
  Timing time;
  bool slow = false, verified = true;
  Accuracy loop_acc;
  int checked_reps = 0;  // how many timed repetitions were checked
  int failed_rep = -1;   // the first checked one that failed, counted over every batch; -1: none
  int gate_timeouts = 0;  // repetitions dropped because their gate timed out
  int short_reps = 0;     // of those, how many were still missing after the re-runs
  std::string note;       // empty, or what the gate dropped, for the result's log
  // Host wall clock (ms) of the warm-up and probe, of the timed batches (their checks excluded) and of
  // the checks; and the timed repetitions' own event times, the probe's included.
  double warmup_ms = 0, batches_ms = 0, checks_ms = 0, kernels_ms = 0;
};

// Times `launch(set)` (set: the input set to use) with the protocol above. A launch error is
// returned in err, not thrown; CUDA failures of soltune's own calls throw. Throws Error too when
// no repetition at all passed its gate in time: there is then no GPU-only time to report.
TimingOutcome time_launches(TaskState& st, const CudaEvalOptions& opt, const std::function<cudaError_t(int)>& launch,
                            const TimingPlan& plan);

}  // namespace soltune
