#pragma once
// Runs compiled candidates on a real GPU, inside the worker process (worker.hpp). For each
// candidate: device limits checked before launch; correctness on fresh random inputs against the
// double-precision reference with poisoned outputs; then warm-up and timing with CUDA events, L2
// flushed before every repetition, inputs rotated when they fit in cache, median and quartiles
// kept. After a fault the context is lost: lost() turns true and the worker process must end.
#include <functional>
#include <map>
#include <memory>

#include "codegen/compiler.hpp"
#include "core/task.hpp"
#include "eval/candidates.hpp"
#include "eval/cuda_task_state.hpp"
#include "eval/nvml_clock.hpp"

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
};

class CudaRunner {
 public:
  CudaRunner(int device, const Compiler& c, std::string arch, CudaEvalOptions o);
  ~CudaRunner();
  const DeviceInfo& device() const { return dev_; }
  const std::string& arch() const { return arch_; }
  TaskBaseline baseline(const Task& t);
  // Checks and times one compiled candidate; its outcome is written into c.result. incumbent_us:
  // the task's best time so far (0: none), for the early stop of clearly slower candidates.
  void run(const Task& t, Candidate& c, const CompileResult& r, double incumbent_us = 0);
  // Times the baseline and the candidates (which passed before) interleaved, `rounds` times.
  // Throws Error if any of them fails now.
  Retimed retime(const Task& t, const std::vector<Candidate>& cs, const std::vector<CompileResult>& rs, int rounds);
  // True once a sticky error destroyed the context: nothing more can run in this process.
  bool lost() const { return lost_; }

 private:
  TaskState& state_for(const Task& t);
  struct TimingPlan {
    double incumbent_us = 0;  // 0: never stop early
    bool verify = false;      // check the output of one timed repetition
    uint64_t pick = 0;        // which one (modulo the repetitions)
  };
  struct TimingOutcome {
    cudaError_t err = cudaSuccess;
    Timing time;
    bool slow = false, verified = true;
    Accuracy loop_acc;
    int checked_rep = -1;
  };
  // Times `launch(set)` with the protocol above. A launch error is returned, not thrown.
  TimingOutcome time_it(TaskState& st, const std::function<cudaError_t(int)>& launch, const TimingPlan& plan);
  void measure_ceilings();

  int index_;
  DeviceInfo dev_;
  const Compiler& compiler_;
  std::string arch_;
  CudaEvalOptions opt_;
  std::unique_ptr<TaskState> state_;
  std::unique_ptr<SmClock> clock_;
  bool lost_ = false;
};

}  // namespace soltune
