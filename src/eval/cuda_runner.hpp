#pragma once
// Runs compiled candidates on a real GPU, inside the worker process (worker.hpp). For each
// candidate: device limits checked before launch; correctness on fresh random inputs against the
// double-precision reference with poisoned outputs; then timing (timing_loop.hpp: CUDA events, L2
// flushed and the stream gated before every repetition, fresh inputs before the checked one,
// median and quartiles kept). After a fault the context is lost: lost() turns true and the worker
// process must end.
#include <map>
#include <memory>
#include <vector>

#include "codegen/compiler.hpp"
#include "core/task.hpp"
#include "eval/candidates.hpp"
#include "eval/cuda_task_state.hpp"
#include "eval/nvml_clock.hpp"
#include "eval/timing_loop.hpp"

namespace soltune {

class CudaRunner {
 public:
  CudaRunner(int device, const Compiler& c, std::string arch, CudaEvalOptions o);
  ~CudaRunner();
  const DeviceInfo& device() const { return dev_; }
  const std::string& arch() const { return arch_; }
  // limit_s > 0: not timed where its first run says the timing would take longer (skipped says why).
  TaskBaseline baseline(const Task& t, double limit_s = 0);
  // Checks and times one compiled candidate; its outcome is written into c.result. incumbent_us:
  // the task's best time so far (0: none), for the early stop of clearly slower candidates.
  void run(const Task& t, Candidate& c, const CompileResult& r, double incumbent_us = 0);
  // The first correctness round only, nothing timed: what runs under compute-sanitizer (an
  // audit), where times mean nothing and every launch costs 10-1000x. Status ok when it passed.
  void check(const Task& t, Candidate& c, const CompileResult& r);
  // The group of candidates the next run belongs to: a group's candidates (of the variants at one
  // dtype and shape) share their correctness rounds' inputs and reference results
  // (TaskState::round_inputs); 0: none shared.
  void set_batch(uint64_t batch) { batch_ = batch; }
  // Times the baseline and the candidates (which passed before) interleaved, `rounds` times.
  // Throws Error if any of them fails now.
  Retimed retime(const Task& t, const std::vector<Candidate>& cs, const std::vector<CompileResult>& rs, int rounds);
  // True once a sticky error destroyed the context: nothing more can run in this process.
  bool lost() const { return lost_; }
  // The device state t runs on. The states of the tasks run last stay, as many as leave the device
  // room: a search moves between tasks.
  TaskState& state_for(const Task& t);

 private:
  uint64_t batch_ = 0;
  void measure_ceilings();
  void run_checked(const Task& t, Candidate& c, const CompileResult& r, double incumbent_us, bool time_it);

  int index_;
  DeviceInfo dev_;
  const Compiler& compiler_;
  std::string arch_;
  CudaEvalOptions opt_;
  std::vector<std::unique_ptr<TaskState>> states_;  // the most recently used last
  // The kept correctness rounds of the group running at each dtype and shape (Task::dtype_shape()).
  // They outlive the task states: a GEMM's reference takes 50 times a candidate's run.
  std::map<std::string, KeptRounds> kept_;
  uint64_t uses_ = 0;  // a clock for kept_'s least-recently-used order
  // The kept rounds of t's shape for group `group` (those of an earlier group dropped), after room is
  // made for them: other tasks' states go first, then other shapes' kept rounds, the least recently
  // used first. Null where nothing is kept (group 0).
  KeptRounds* kept_for(const Task& t, uint64_t group);
  // After a fault the context is gone: every buffer is let go without freeing (it would fail).
  void abandon_device_state();
  // t's state among those kept, or states_.end().
  std::vector<std::unique_ptr<TaskState>>::iterator find_state(const Task& t);
  // Frees device memory until `bytes` more leave an eighth of the device free: the least recently
  // used states other than `keep`, then, if `kept_too`, kept rounds of shapes other than `shape`.
  void make_room(double bytes, const TaskState* keep, const std::string& shape, bool kept_too);
  std::unique_ptr<SmClock> clock_;
  bool lost_ = false;
};

}  // namespace soltune
