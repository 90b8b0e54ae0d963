// The baseline whose time is T_ref: (x * scale).masked_fill(mask, -inf).softmax(-1) as eager
// PyTorch runs it: an elementwise kernel for the scale, one for the causal mask, then its softmax
// kernel (a block per row, f32 inside: max, sum, normalise, each a pass over the row), the
// intermediate in the tensor dtype. Elementwise kernels take one element per thread, as a
// framework's generic elementwise path would without vectorization.
#include <cuda_bf16.h>

namespace masked_softmax_baseline_detail {

// -inf (NVRTC has no INFINITY macro).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// ld, st (the tensor dtype to and from f32) and SOLTUNE_INDEX, as the norms' eager baselines.
#include "../common/eager_ops.cuh"

// Sum (MAX = 0) or max (MAX = 1) over a block of 256 threads: warp shuffles, then one warp; every
// thread gets the result.
template <int MAX>
__device__ float block_reduce(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, w) : v + w;
  }
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  v = red[threadIdx.x % 8];
  for (int o = 4; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, w) : v + w;
  }
  __syncthreads();  // every thread has read red before it is written again
  return v;
}

}  // namespace masked_softmax_baseline_detail

template <typename T>
__global__ void scale_op(const T* x, T* out, float scale, long long heads, long long s_q, long long s_k) {
  using namespace masked_softmax_baseline_detail;
  SOLTUNE_INDEX(heads * s_q * s_k)
  st(out, i, ld(x, i) * scale);
}

// Keys past query i's position (j > i + s_k - s_q) to -inf.
template <typename T>
__global__ void causal_fill(T* t, long long heads, long long s_q, long long s_k) {
  using namespace masked_softmax_baseline_detail;
  SOLTUNE_INDEX(heads * s_q * s_k)
  const long long row = i / s_k, j = i % s_k;
  if (j > row % s_q + s_k - s_q) st(t, i, neg_inf());
}

template <typename T>
__global__ void __launch_bounds__(256) row_softmax(const T* t, T* y, long long heads, long long s_q, long long s_k) {
  using namespace masked_softmax_baseline_detail;
  __shared__ float red[8];
  const long long row = blockIdx.x;
  if (row >= heads * s_q) return;
  const long long base = row * s_k;
  float m = neg_inf();
  for (long long c = threadIdx.x; c < s_k; c += 256) m = fmaxf(m, ld(t, base + c));
  m = block_reduce<1>(m, red);
  float s = 0.0f;
  for (long long c = threadIdx.x; c < s_k; c += 256) s += expf(ld(t, base + c) - m);
  s = block_reduce<0>(s, red);
  const float inv = 1.0f / s;
  for (long long c = threadIdx.x; c < s_k; c += 256) st(y, base + c, expf(ld(t, base + c) - m) * inv);
}
