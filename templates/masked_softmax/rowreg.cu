// Masked softmax with each row in registers as f32, scaled and masked as it is loaded: TPR threads
// a row (a few lanes, a warp, or up to the block), EPT vectors of VEC elements each, BLOCK / TPR
// rows a block; reductions over the row's threads by warp butterflies, then across its warps
// through shared memory. A causal row's vectors wholly past its last key are not read (their
// outputs are 0): a causal kernel reads about half of x.
#include <cuda_bf16.h>

namespace masked_softmax_rowreg_detail {

#include "../common/types.cuh"
#include "../common/row_reduce.cuh"

}  // namespace masked_softmax_rowreg_detail

template <typename T, int BLOCK, int TPR, int VEC, int EPT, int CAUSAL, int FAST_EXP>
__global__ void __launch_bounds__(BLOCK)
    masked_softmax_rowreg(const T* __restrict__ x, T* __restrict__ y, long long heads, long long s_q, long long s_k, float scale) {
  static_assert(sizeof(T) * VEC <= 16 && VEC > 0 && (VEC & (VEC - 1)) == 0, "VEC: a power of two, at most 16 bytes");
  static_assert(TPR > 0 && (TPR & (TPR - 1)) == 0 && TPR <= BLOCK && BLOCK % 32 == 0 && BLOCK <= 1024,
                "TPR: a power of two dividing BLOCK, a multiple of the warp size");
  using namespace masked_softmax_rowreg_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int RPB = BLOCK / TPR;  // rows per block
  __shared__ float red[2][TPR > 32 ? BLOCK / 32 : 1];

  const long long rows = heads * s_q;
  const int nvec = static_cast<int>(s_k / VEC);  // s_k % VEC == 0 (a constraint)
  const int slot = threadIdx.x / TPR, lane = threadIdx.x % TPR;
  const long long row = static_cast<long long>(blockIdx.x) * RPB + slot;
  const bool valid = row < rows;  // the last block's idle rows still take part in the reductions
  const long long last = CAUSAL ? (valid ? row % s_q : 0) + s_k - s_q : s_k - 1;  // the row's last key
  const Raw* xv = reinterpret_cast<const Raw*>(x + (valid ? row : 0) * s_k);
  Raw* yv = reinterpret_cast<Raw*>(y + (valid ? row : 0) * s_k);

  float v[EPT][VEC];
  float m = neg_inf();
#pragma unroll
  for (int e = 0; e < EPT; ++e) {
    const int j = e * TPR + lane;
    const long long c0 = static_cast<long long>(j) * VEC;
    if (valid && j < nvec && c0 <= last) {
      unpack<T, VEC>(xv[j], v[e]);
#pragma unroll
      for (int k = 0; k < VEC; ++k) v[e][k] = c0 + k <= last ? v[e][k] * scale : neg_inf();
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k) v[e][k] = neg_inf();
    }
#pragma unroll
    for (int k = 0; k < VEC; ++k) m = fmaxf(m, v[e][k]);
  }
  m = row_reduce<MaxOp, BLOCK, TPR, 0>(m, red[0], nullptr);

  // Every valid row has a key (s_q <= s_k where causal): m is finite there, and -inf - m is -inf,
  // whose exponential is 0. An idle row's m is -inf: its values are never stored.
  float s = 0.0f;
#pragma unroll
  for (int e = 0; e < EPT; ++e)
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      v[e][k] = valid ? ex<FAST_EXP>(v[e][k] - m) : 0.0f;
      s += v[e][k];
    }
  s = row_reduce<SumOp, BLOCK, TPR, 0>(s, red[1], nullptr);

  const float inv = 1.0f / s;
#pragma unroll
  for (int e = 0; e < EPT; ++e) {
    const int j = e * TPR + lane;
    if (valid && j < nvec) {
      float o[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) o[k] = v[e][k] * inv;
      yv[j] = pack<T, Raw, VEC>(o);
    }
  }
}
