#pragma once
// The headers `soltune export` wrote (found on the include path), less those of problems left out
// of the export (SOLTUNE_NO_<PROBLEM>: bench/exported_bench.sh). Each user guards its own uses.
#ifndef SOLTUNE_NO_GELU
#include "gelu.cuh"
#endif
#ifndef SOLTUNE_NO_L1NORM
#include "l1norm.cuh"
#endif
#ifndef SOLTUNE_NO_LAYERNORM
#include "layernorm.cuh"
#endif
#ifndef SOLTUNE_NO_RMSNORM
#include "rmsnorm.cuh"
#endif
#ifndef SOLTUNE_NO_SOFTMAX
#include "softmax.cuh"
#endif

#include <cstddef>
#include <type_traits>

namespace soltune_bench {
// Scratch for the plans that take it (rows split over the grid keep partial statistics per
// chunk there): one 64 MiB device allocation, made at the first call, that every call shares.
inline constexpr size_t kScratchBytes = size_t{64} << 20;
inline void* scratch() {
  static void* p = [] {
    void* q = nullptr;
    return cudaMalloc(&q, kScratchBytes) == cudaSuccess ? q : nullptr;
  }();
  return p;
}
// Calls an exported launch function, with the shared scratch where its header takes scratch.
template <typename F, typename... A> cudaError_t launch(F f, cudaStream_t s, A... a) {
  if constexpr (std::is_invocable_v<F, A..., void*, size_t, cudaStream_t>) {
    void* p = scratch();
    return p ? f(a..., p, kScratchBytes, s) : cudaErrorMemoryAllocation;
  } else {
    return f(a..., s);
  }
}
}  // namespace soltune_bench
