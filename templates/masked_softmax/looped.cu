// Masked softmax of any row length: a block a row. A first pass keeps an online max and sum of
// exp(x scale - max) over the row's vectors (UNROLL loads in flight a thread), combined across the
// block by warp shuffles and shared memory; a second pass reads the row again and writes
// exp(x scale - max) / sum. A causal row's vectors wholly past its last key are read by neither
// pass; their outputs are 0.
#include <cuda_bf16.h>

namespace masked_softmax_looped_detail {

#include "../common/types.cuh"
#include "../common/softmax_math.cuh"

// The scaled values of vector j (columns c0..c0 + VEC - 1), -inf past the row's last key.
template <typename T, int VEC, typename R>
__device__ __forceinline__ void scaled(const R& r, long long c0, long long last, float scale, float (&f)[VEC]) {
  unpack<T, VEC>(r, f);
#pragma unroll
  for (int k = 0; k < VEC; ++k) f[k] = c0 + k <= last ? f[k] * scale : neg_inf();
}

}  // namespace masked_softmax_looped_detail

template <typename T, int BLOCK, int VEC, int UNROLL, int CAUSAL, int FAST_EXP>
__global__ void __launch_bounds__(BLOCK)
    masked_softmax_looped(const T* __restrict__ x, T* __restrict__ y, long long heads, long long s_q, long long s_k, float scale) {
  static_assert(sizeof(T) * VEC <= 16 && VEC > 0 && (VEC & (VEC - 1)) == 0, "VEC: a power of two, at most 16 bytes");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: whole warps");
  using namespace masked_softmax_looped_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int NW = BLOCK / 32;
  __shared__ float red_m[NW], red_s[NW];

  const long long row = blockIdx.x;  // grid: a block per row
  const long long last = CAUSAL ? row % s_q + s_k - s_q : s_k - 1;
  const long long nvec = s_k / VEC;                                  // s_k % VEC == 0 (a constraint)
  const long long live = CAUSAL ? min(nvec, last / VEC + 1) : nvec;  // vectors holding a key
  const Raw* xv = reinterpret_cast<const Raw*>(x + row * s_k);
  Raw* yv = reinterpret_cast<Raw*>(y + row * s_k);

  float m = neg_inf(), s = 0.0f;
  for (long long j0 = threadIdx.x; j0 < live; j0 += static_cast<long long>(BLOCK) * UNROLL) {
    Raw r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (j0 + u * BLOCK < live) r[u] = xv[j0 + u * BLOCK];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long j = j0 + u * BLOCK;
      if (j >= live) break;
      float f[VEC];
      scaled<T, VEC>(r[u], j * VEC, last, scale, f);
      float vm = f[0];
#pragma unroll
      for (int k = 1; k < VEC; ++k) vm = fmaxf(vm, f[k]);
      const float nm = fmaxf(m, vm);  // finite: a live vector's first column is a key
      s *= ex<FAST_EXP>(m - nm);      // 0 while m is -inf
#pragma unroll
      for (int k = 0; k < VEC; ++k) s += ex<FAST_EXP>(f[k] - nm);
      m = nm;
    }
  }
  // The block's (max, sum): each warp's by butterflies, then the warps' in warp 0.
  warp_combine<FAST_EXP>(m, s);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    red_m[warp] = m;
    red_s[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < NW ? red_m[lane] : neg_inf();
    s = lane < NW ? red_s[lane] : 0.0f;
    warp_combine<FAST_EXP>(m, s);
    if (lane == 0) {
      red_m[0] = m;
      red_s[0] = s;
    }
  }
  __syncthreads();
  m = red_m[0];
  const float inv = 1.0f / red_s[0];

  for (long long j = threadIdx.x; j < nvec; j += BLOCK) {
    float o[VEC];
    if (j < live) {
      scaled<T, VEC>(xv[j], j * VEC, last, scale, o);
#pragma unroll
      for (int k = 0; k < VEC; ++k) o[k] = ex<FAST_EXP>(o[k] - m) * inv;
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k) o[k] = 0.0f;
    }
    yv[j] = pack<T, Raw, VEC>(o);
  }
}
