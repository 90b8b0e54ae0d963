#include "eval/timing_gate.hpp"

#include <atomic>
#include <string>

namespace soltune {

TimingGate::TimingGate(cudaKernel_t gate_kernel) : kernel_(gate_kernel), counter_(sizeof(uint64_t)) {}

TimingGate::~TimingGate() {
  release();
  // Freeing the counter while a gate still polls it would fault: all are released, let them pass.
  if (last_ && counter_.host()) (void)cudaStreamSynchronize(last_);
}

void TimingGate::reserve(int slots) {
  if (slots <= slots_) return;
  flags_ = DeviceBuffer(static_cast<size_t>(slots) * sizeof(unsigned int));
  slots_ = slots;
}

void TimingGate::hold(cudaStream_t s, int slot, uint64_t timeout_ns) {
  if (slot < 0 || slot >= slots_)
    throw Error("timing gate: slot " + std::to_string(slot) + " outside the " + std::to_string(slots_) + " reserved");
  const void* counter = counter_.device();
  unsigned long long target = ++held_;
  unsigned long long timeout = timeout_ns;
  unsigned int* flag = static_cast<unsigned int*>(flags_.get()) + slot;
  void* args[] = {&counter, &target, &timeout, &flag};
  SOLTUNE_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(1), dim3(1), args, 0, s));
  last_ = s;
}

void TimingGate::release() noexcept {
  if (!counter_.host()) return;  // abandoned
  // The device polls this word while the host writes it: an atomic store, ordered after the
  // launches queued before it.
  std::atomic_ref<uint64_t>(*static_cast<uint64_t*>(counter_.host())).store(held_, std::memory_order_release);
}

std::vector<bool> TimingGate::timed_out(cudaStream_t s, int slots) {
  if (slots > slots_)
    throw Error("timing gate: " + std::to_string(slots) + " flags asked for, " + std::to_string(slots_) + " reserved");
  std::vector<unsigned int> flags(static_cast<size_t>(slots));
  if (slots > 0) {
    SOLTUNE_CUDA(cudaMemcpyAsync(flags.data(), flags_.get(), flags.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost, s));
    SOLTUNE_CUDA(cudaStreamSynchronize(s));
  }
  return std::vector<bool>(flags.begin(), flags.end());
}

void TimingGate::abandon() {
  counter_.abandon();
  flags_.abandon();
  last_ = nullptr;
}

}  // namespace soltune
