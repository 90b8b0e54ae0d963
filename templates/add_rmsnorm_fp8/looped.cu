// Residual add, RMSNorm and e4m3 quantization for rows of any width, one element per access: a block
// of TPR threads per row writes h = x + r (rounded to T) while summing its squares, then each warp
// takes 128-column blocks of the row in turn, reading h back (from L2, where the first pass left
// it) for y, the block's maximum by shuffles, its scale and q (scale 2); with one scale per row, a
// pass for the row's maximum comes first. The kernel of last resort: legal at every shape.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

namespace add_rms_fp8_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/group_allreduce.cuh"
#include "../common/fp8_quant.cuh"

}  // namespace add_rms_fp8_detail

template <typename T, int TPR, int UNROLL>
__global__ void __launch_bounds__(TPR)
add_rmsnorm_fp8_looped(const T* __restrict__ x, const T* __restrict__ r, const T* __restrict__ weight, T* __restrict__ h,
                       __nv_fp8_e4m3* __restrict__ q, float* __restrict__ s, long long rows, long long cols, float eps,
                       long long scale) {
  using namespace add_rms_fp8_detail;
  static_assert(TPR % 32 == 0 && TPR <= 1024, "TPR: whole warps, at most 1024");
  __shared__ float scratch[2][TPR / 32];
  const long long row = blockIdx.x, at = row * cols;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;

  float sq = 0.f;
  for (long long base = 0; base < cols; base += static_cast<long long>(TPR) * UNROLL) {
    float a[UNROLL], b[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long c = base + u * TPR + tid;
      a[u] = c < cols ? to_f(x[at + c]) : 0.f;
      b[u] = c < cols ? to_f(r[at + c]) : 0.f;
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long c = base + u * TPR + tid;
      if (c >= cols) continue;
      const T hv = from_f<T>(a[u] + b[u]);
      h[at + c] = hv;
      const float v = to_f(hv);  // h as stored
      sq = fmaf(v, v, sq);
    }
  }
  const float rstd = rsqrtf(group_allreduce<TPR, 0>(sq, scratch[0]) / static_cast<float>(cols) + eps);
  __syncthreads();  // h, written by other threads of the block, is read below
  auto y_at = [&](long long c) { return to_f(h[at + c]) * rstd * to_f(weight[c]); };

  float row_factor = 0.f;
  if (scale == 1) {
    float m = 0.f;
    for (long long c = tid; c < cols; c += TPR) m = fmaxf(m, fabsf(y_at(c)));
    const float amax = fmaxf(group_allreduce<TPR, 0>(AbsMax{m}, reinterpret_cast<AbsMax*>(scratch[1])).v, 1e-10f);
    if (tid == 0) s[row] = amax / 448.f;
    row_factor = 448.f / amax;
  }
  // A warp per 128-column block: lane l holds columns l, l + 32, l + 64, l + 96 of it.
  for (long long b = warp; b * 128 < cols; b += TPR / 32) {
    float y[4], m = 0.f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long c = b * 128 + 32 * j + lane;
      y[j] = c < cols ? y_at(c) : 0.f;
      m = fmaxf(m, fabsf(y[j]));
    }
    float factor = row_factor;
    if (scale != 1) {
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
      const float amax = fmaxf(m, 1e-10f);
      if (lane == 0) s[b * rows + row] = amax / 448.f;
      factor = 448.f / amax;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long c = b * 128 + 32 * j + lane;
      if (c < cols) q[at + c] = __nv_fp8_e4m3(y[j] * factor);
    }
  }
}
