// Residual add, RMSNorm and e4m3 quantization with the row held in registers: TPR threads share a row
// (a warp up to a whole block), RPB rows per block, each thread EPT vectors of VEC elements of x and
// of r, all loads issued before the first use. h = x + r is rounded to T, stored and normed as
// stored; y stays in registers for its maxima: over a 1 x 128 block (scale 2) the 128 / VEC
// consecutive lanes that hold it (shuffles only), over the row (scale 1) the row group's
// all-reduce. q = y * (448 / amax) is stored VEC bytes at a time, each block's scale by its first lane.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

namespace add_rms_fp8_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/group_allreduce.cuh"
#include "../common/residual_add.cuh"
#include "../common/fp8_quant.cuh"

}  // namespace add_rms_fp8_detail

template <typename T, int TPR, int RPB, int VEC, int EPT, int BPS, int SCALE>
__global__ void __launch_bounds__(TPR * RPB, BPS)
add_rmsnorm_fp8_rowreg(const T* __restrict__ x, const T* __restrict__ r, const T* __restrict__ weight, T* __restrict__ h,
                       __nv_fp8_e4m3* __restrict__ q, float* __restrict__ s, long long rows, long long cols, float eps,
                       long long scale) {
  using namespace add_rms_fp8_detail;
  static_assert(TPR % 32 == 0 && TPR * RPB <= 1024, "TPR: whole warps; a block of at most 1024 threads");
  static_assert(VEC == 4 || VEC == 8, "VEC: 4 or 8 (a 128-column block is 32 or 16 lanes of a warp)");
  static_assert(VEC * sizeof(T) <= 16, "at most 16-byte accesses");
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  __shared__ float scratch[2][RPB * TPR / 32];

  const int lane = threadIdx.x % TPR;
  const long long row = static_cast<long long>(blockIdx.x) * RPB + threadIdx.x / TPR;
  const bool active = row < rows;
  const long long at = (active ? row : 0) * cols;
  auto col = [&](int e) { return static_cast<long long>(e * TPR + lane) * VEC; };

  Raw xv[EPT], rv[EPT];
#pragma unroll
  for (int e = 0; e < EPT; ++e) {
    if (col(e) < cols) {
      xv[e] = load<0>(reinterpret_cast<const Raw*>(x + at + col(e)));
      rv[e] = load<0>(reinterpret_cast<const Raw*>(r + at + col(e)));
    }
  }
  float v[EPT][VEC];
  const float sq = residual_add<T>(xv, rv, h, at, cols, active, col, v);
  const float rstd = rsqrtf(group_allreduce<TPR, 0>(sq, scratch[0]) / static_cast<float>(cols) + eps);
  // y in place of h, and each vector's largest magnitude.
  float vmax[EPT];
#pragma unroll
  for (int e = 0; e < EPT; ++e) {
    vmax[e] = 0.f;
    if (col(e) >= cols) continue;
    float w[VEC];
    unpack<T>(param_read<0>(reinterpret_cast<const Raw*>(weight + col(e))), w);
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      v[e][k] = v[e][k] * rstd * w[k];
      vmax[e] = fmaxf(vmax[e], fabsf(v[e][k]));
    }
  }
  if constexpr (SCALE == 1) {
    float m = 0.f;
#pragma unroll
    for (int e = 0; e < EPT; ++e) m = fmaxf(m, vmax[e]);
    const AbsMax all = group_allreduce<TPR, 0>(AbsMax{m}, reinterpret_cast<AbsMax*>(scratch[1]));
    const float amax = fmaxf(all.v, 1e-10f);
    if (active && lane == 0) s[row] = amax / 448.f;
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (active && col(e) < cols) store_e4m3<VEC>(q + at + col(e), v[e], 448.f / amax);
  } else {
    constexpr int LANES = 128 / VEC;  // lanes of a warp holding one 128-column block of vector e
#pragma unroll
    for (int e = 0; e < EPT; ++e) {
      float m = vmax[e];
#pragma unroll
      for (int o = LANES / 2; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
      const float amax = fmaxf(m, 1e-10f);
      if (!active || col(e) >= cols) continue;
      if (lane % LANES == 0) s[(col(e) / 128) * rows + row] = amax / 448.f;
      store_e4m3<VEC>(q + at + col(e), v[e], 448.f / amax);
    }
  }
}
