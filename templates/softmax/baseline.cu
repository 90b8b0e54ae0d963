// The baseline whose time is T_ref: softmax as eager PyTorch runs the written formula
// x.max(-1) -> x - max -> exp -> .sum(-1) -> / sum: five kernels, each reading and writing its
// operands in the tensor dtype (so bf16 rounds after every step, as it does there). Row
// reductions are a block per row accumulating in f32; elementwise kernels take one element per
// thread, as a framework's generic elementwise path would without vectorization.
#include <cuda_bf16.h>

namespace softmax_baseline_detail {

// -inf (NVRTC has no INFINITY macro).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

__device__ inline float ld(const float* p, long long i) { return p[i]; }
__device__ inline float ld(const __nv_bfloat16* p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float* p, long long i, float v) { p[i] = v; }
__device__ inline void st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }

// Sum (MAX = 0) or max (MAX = 1) over a block of 256 threads: warp shuffles, then one warp.
template <int MAX>
__device__ float block_reduce(float v) {
  __shared__ float red[8];
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, w) : v + w;
  }
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < 8 ? red[threadIdx.x] : (MAX ? neg_inf() : 0.0f);
  if (threadIdx.x < 32)
    for (int o = 4; o > 0; o >>= 1) {
      const float w = __shfl_xor_sync(0xffffffffu, v, o);
      v = MAX ? fmaxf(v, w) : v + w;
    }
  return v;  // valid in thread 0
}

// The row of element i; 32-bit division where the tensor allows it, as frameworks do.
__device__ inline long long row_of(long long i, long long rows, long long cols) {
  if (rows * cols <= 0xffffffffLL) return static_cast<unsigned>(i) / static_cast<unsigned>(cols);
  return i / cols;
}

}  // namespace softmax_baseline_detail

#define SOLTUNE_ROW                                   \
  using namespace softmax_baseline_detail;            \
  const long long row = blockIdx.x;                   \
  if (row >= rows) return;                            \
  const long long base = row * cols;

#define SOLTUNE_INDEX                                                                  \
  using namespace softmax_baseline_detail;                                             \
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; \
  if (i >= rows * cols) return;

template <typename T>
__global__ void __launch_bounds__(256) row_max(const T* a, T* out, long long rows, long long cols) {
  SOLTUNE_ROW
  float m = neg_inf();
  for (long long c = threadIdx.x; c < cols; c += 256) m = fmaxf(m, ld(a, base + c));
  m = block_reduce<1>(m);
  if (threadIdx.x == 0) st(out, row, m);
}

template <typename T>
__global__ void __launch_bounds__(256) row_sum(const T* a, T* out, long long rows, long long cols) {
  SOLTUNE_ROW
  float s = 0.0f;
  for (long long c = threadIdx.x; c < cols; c += 256) s += ld(a, base + c);
  s = block_reduce<0>(s);
  if (threadIdx.x == 0) st(out, row, s);
}

template <typename T>
__global__ void sub_row(const T* a, const T* r, T* out, long long rows, long long cols) {
  SOLTUNE_INDEX
  st(out, i, ld(a, i) - ld(r, row_of(i, rows, cols)));
}

template <typename T>
__global__ void exp_op(const T* a, T* out, long long rows, long long cols) {
  SOLTUNE_INDEX
  st(out, i, expf(ld(a, i)));
}

template <typename T>
__global__ void div_row(const T* a, const T* r, T* out, long long rows, long long cols) {
  SOLTUNE_INDEX
  st(out, i, ld(a, i) / ld(r, row_of(i, rows, cols)));
}
