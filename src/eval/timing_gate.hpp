#pragma once
// Makes a timed repetition measure GPU time only. Each repetition queues a gate (a one-thread
// kernel, soltune_gate) just before its start event; the gate holds the stream until the host has
// queued the whole repetition (start event, launches, end event) and called release(), which
// stores a counter in pinned host-mapped memory that the gate polls. Without it the GPU reaches the
// start event while the CPU is still launching, and the idle time is counted: under CPU load
// (soltune compiles on every core while it measures) T_ref of five short launches came out 74.9 us
// in one run and 282 us in another.
//
// Each gate waits for its own target, and targets only grow over the gate's life: a repetition
// queued and released long ago passes at once, and no gate waits on a later repetition, so a CPU
// that queues far ahead cannot deadlock the stream. A gate gives up after a timeout (a stalled or
// dead host never hangs the GPU) and records that in device memory: such a repetition may contain a
// CPU gap, and the timing loop drops it (timing_loop.hpp).
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "eval/cuda_raii.hpp"

namespace soltune {

class TimingGate {
 public:
  explicit TimingGate(cudaKernel_t gate_kernel);  // soltune_gate from the loaded builtins
  ~TimingGate();
  TimingGate(const TimingGate&) = delete;
  TimingGate& operator=(const TimingGate&) = delete;

  // Room for the flags of `slots` gates per batch. Only between batches: grows the flag buffer,
  // which no queued gate may still be writing.
  void reserve(int slots);
  // Queues on `s` a gate that holds it until the next release(), or for at most timeout_ns; it
  // records in flag `slot` (< reserve's count) whether it timed out.
  void hold(cudaStream_t s, int slot, uint64_t timeout_ns);
  // Opens every gate held so far. Only a store to host memory: cheap, and never throws.
  void release() noexcept;
  // After `s` has finished: for each of the flags [0, slots), whether that gate timed out.
  std::vector<bool> timed_out(cudaStream_t s, int slots);

  // After a sticky error destroyed the context: forget the buffers without releasing them.
  void abandon();

  // Calls release() however the scope ends (an error return, an exception): a gate left held
  // would stall the stream for its whole timeout.
  struct ReleaseOnExit {
    TimingGate& gate;
    ~ReleaseOnExit() { gate.release(); }
  };

 private:
  cudaKernel_t kernel_;
  MappedHostBuffer counter_;  // the host's count of released gates, polled by the device
  DeviceBuffer flags_;        // one unsigned int per slot: 1 where the gate timed out
  int slots_ = 0;
  uint64_t held_ = 0;  // target of the last gate queued (the first is 1: the counter starts at 0)
  cudaStream_t last_ = nullptr;  // where the last gate was queued, waited on before freeing
};

}  // namespace soltune
