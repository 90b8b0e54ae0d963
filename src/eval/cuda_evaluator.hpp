#pragma once
// The cuda backend: runs candidates on a real GPU. For each candidate: device limits checked
// before launch; correctness on fresh random inputs against the double-precision reference with
// poisoned outputs; then warm-up and timing with CUDA events, L2 flushed before every repetition,
// inputs rotated when they fit in cache, median and quartiles kept. A candidate that faults costs
// itself only: the device is reset and the task's state rebuilt.
#include <functional>
#include <map>
#include <memory>

#include "codegen/compiler.hpp"
#include "core/task.hpp"
#include "eval/candidates.hpp"
#include "eval/cuda_task_state.hpp"

namespace soltune {

struct CudaEvalOptions {
  int check_rounds = 2;      // correctness rounds, each on freshly drawn inputs
  double target_ms = 100;    // timed work per candidate
  int min_reps = 10, max_reps = 100;
  int warmup = 3;
  uint64_t seed = 0;
  bool measure_ceilings = true;
};

class CudaEvaluator final : public Evaluator {
 public:
  CudaEvaluator(int device, const Compiler& c, std::string arch, CudaEvalOptions o);
  ~CudaEvaluator() override;
  const DeviceInfo& device() const override { return dev_; }
  std::string backend_name() const override { return "cuda"; }
  TimeKind kind() const override { return TimeKind::measured; }
  TaskBaseline baseline(const Task& t) override;
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) override;

 private:
  TaskState& state_for(const Task& t);
  void run_candidate(const Task& t, Candidate& c, const CompileResult& r);
  // Times `launch(set)` with the protocol above. A launch error is returned, not thrown.
  cudaError_t time_it(TaskState& st, const std::function<cudaError_t(int)>& launch, Timing& out);
  // After a sticky error: forget all device state, reset the device.
  void recover(const std::string& why);
  void measure_ceilings();

  int index_;
  DeviceInfo dev_;
  const Compiler& compiler_;
  std::string arch_;
  CudaEvalOptions opt_;
  std::unique_ptr<TaskState> state_;
};

}  // namespace soltune
