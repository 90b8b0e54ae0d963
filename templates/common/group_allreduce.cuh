// The norms' all-reduce over the TPR threads of each row group (TPR a multiple of 32, groups
// warp-aligned), every thread getting the result; every thread of the block must call it. A state
// S has combine(S, S) and shfl(S, lane mask): float is a sum (here); LayerNorm's states are in
// ln_stats.cuh. RED 0: butterfly shuffles in each warp, then the warps' partials through shared
// memory and a second butterfly (one barrier). RED 1: a shared-memory tree (a barrier per level).
// Callers alternate between two scratch halves, so that a half is only rewritten after the
// barrier of the call in between.
__device__ __forceinline__ float combine(float a, float b) { return a + b; }
__device__ __forceinline__ float shfl(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }

template <int TPR, int RED, class S>
__device__ __forceinline__ S group_allreduce(S v, S* scratch) {
  const int lane = threadIdx.x % TPR, group = threadIdx.x / TPR;
  if constexpr (RED == 0) {
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) v = combine(v, shfl(v, m));
    if constexpr (TPR > 32) {
      constexpr int NW = TPR / 32;
      if ((threadIdx.x & 31) == 0) scratch[group * NW + lane / 32] = v;
      __syncthreads();
      v = scratch[group * NW + (threadIdx.x & (NW - 1))];  // each NW lanes hold all partials
#pragma unroll
      for (int m = NW / 2; m > 0; m >>= 1) v = combine(v, shfl(v, m));
    }
    return v;
  } else {
    scratch[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int s = TPR / 2; s > 0; s >>= 1) {
      if (lane < s) scratch[threadIdx.x] = combine(scratch[threadIdx.x], scratch[threadIdx.x + s]);
      __syncthreads();
    }
    return scratch[group * TPR];
  }
}
