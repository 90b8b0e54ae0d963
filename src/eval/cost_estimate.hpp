#pragma once
// What measuring costs on the GPU, estimated before anything runs: from the device's ceilings and the
// measurement protocol (timing_loop.hpp, cuda_runner.cpp). `soltune tune` says what it expects its
// first steps to take; the dispatcher plans on measured costs as soon as a task's first evaluation
// is in (agents/dispatcher.cpp), so an estimate off by a factor costs a message, not a budget.
#include <string>

#include "core/run_config.hpp"
#include "core/task.hpp"
#include "eval/timing_loop.hpp"

namespace soltune {

struct CostEstimate {
  double reference_s = 0;  // one run of the double-precision reference
  double baseline_s = 0;   // checking and timing T_ref
  double candidate_s = 0;  // one candidate: its correctness rounds, timed repetitions and their checks
};

CostEstimate estimate_costs(const Task& t, const DeviceInfo& d, const CudaEvalOptions& o);

// What a run's first steps take: each dtype and shape's baseline once, each task's first evaluation
// (tasks of variants the device cannot run left out), and the costliest evaluation.
struct RunEstimate {
  size_t baselines = 0, tasks = 0;
  double baseline_s = 0, first_s = 0, costliest_s = 0;
  std::string costliest;  // its task's id
};

RunEstimate estimate_run(const RunConfig& cfg, const DeviceInfo& d);

}  // namespace soltune
