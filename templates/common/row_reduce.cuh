// The softmax templates' reductions over a row's threads (cached, multipass): max and sum by warp
// butterflies, then across the row's warps through shared memory (REDUCE 0) or a shared-memory tree
// (REDUCE 1).
#include "softmax_math.cuh"

struct MaxOp {
  static __device__ __forceinline__ float id() { return neg_inf(); }
  static __device__ __forceinline__ float op(float a, float b) { return fmaxf(a, b); }
};
struct SumOp {
  static __device__ __forceinline__ float id() { return 0.0f; }
  static __device__ __forceinline__ float op(float a, float b) { return a + b; }
};

// Butterfly over aligned groups of W lanes: every lane gets its group's result.
template <typename Op, int W> __device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v = Op::op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Reduction over the TPR threads of each row; every thread of the block calls it (it may hold
// barriers) and gets its row's result. red: BLOCK / 32 floats, a separate array per call site of
// one row (so two successive reductions need no barrier between them); tree: BLOCK floats.
template <typename Op, int BLOCK, int TPR, int REDUCE>
__device__ __forceinline__ float row_reduce(float v, float* red, float* tree) {
  if constexpr (TPR <= 32) {
    return warp_reduce<Op, TPR>(v);
  } else if constexpr (REDUCE == 0) {
    constexpr int NW = TPR / 32;  // warps per row
    v = warp_reduce<Op, 32>(v);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < NW ? red[warp / NW * NW + lane] : Op::id();
    return warp_reduce<Op, 32>(v);
  } else {
    const int l = threadIdx.x % TPR;
    tree[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int s = TPR / 2; s > 0; s >>= 1) {
      if (l < s) tree[threadIdx.x] = Op::op(tree[threadIdx.x], tree[threadIdx.x + s]);
      __syncthreads();
    }
    v = tree[threadIdx.x - l];
    __syncthreads();  // everyone has read the result before the tree is written again
    return v;
  }
}
