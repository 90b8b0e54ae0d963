#pragma once
// What measuring costs on the GPU, estimated before anything runs: from the device's ceilings and the
// measurement protocol (timing_loop.hpp, cuda_runner.cpp). `soltune tune` says what it expects its
// first steps to take; the dispatcher plans on measured costs as soon as a task's first evaluation
// is in (agents/dispatcher.cpp), so an estimate off by a factor costs a message, not a budget.
#include "core/task.hpp"
#include "eval/timing_loop.hpp"

namespace soltune {

struct CostEstimate {
  double reference_s = 0;  // one run of the double-precision reference
  double baseline_s = 0;   // checking and timing T_ref
  double candidate_s = 0;  // one candidate: its correctness rounds, timed repetitions and their checks
};

CostEstimate estimate_costs(const Task& t, const DeviceInfo& d, const CudaEvalOptions& o);

}  // namespace soltune
