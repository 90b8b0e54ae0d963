// Softmax of rows of any width split over the whole grid in two launches. Each row is cut into
// chunks of CHUNK = BLOCK * VEC * UNROLL * STEPS elements, one block per chunk of every row:
//   softmax_split_stats  reduces its chunk to (max, sum of exp(x - max)) and writes the pair;
//   softmax_split_apply  combines its row's pairs, then reads its chunk again and writes y.
// x is read twice; while the data fits in L2 the second read hits there (HINT 2 keeps the first
// read's lines in L2 and lets the second read drop them; REVERSE walks the chunks from the end, so
// that the chunks read last by the stats, the likeliest still in L2, are read first). No block
// waits for another, so any grid is safe however few blocks are resident. With cols a multiple of
// VEC and no alignment beyond an element's, it serves every shape (VEC 1). Computes in f32.
// The second launch is a programmatic dependent of the first (sm_90): its blocks start while the
// first drains, read their first step of x, and only then wait for the first launch's results.
#include <cuda_bf16.h>

namespace softmax_split_detail {

#include "../common/types.cuh"
#include "../common/softmax_math.cuh"
#include "../common/norm_access.cuh"
#include "../common/split_chunk.cuh"

// (m, s) over the block; every thread gets it. red: 2 * BLOCK / 32 floats.
template <int FAST, int BLOCK> __device__ __forceinline__ void block_combine(float& m, float& s, float* red) {
  constexpr int NW = BLOCK / 32;
  warp_combine<FAST>(m, s);
  if constexpr (NW > 1) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { red[warp] = m; red[NW + warp] = s; }
    __syncthreads();
    m = lane < NW ? red[lane] : neg_inf();
    s = lane < NW ? red[NW + lane] : 0.0f;
    warp_combine<FAST>(m, s);
  }
}

}  // namespace softmax_split_detail

template <typename T, int BLOCK, int VEC, int UNROLL, int STEPS, int HINT, int FAST_EXP>
__global__ void __launch_bounds__(BLOCK)
    softmax_split_stats(const T* __restrict__ x, float* __restrict__ part, long long rows, long long cols) {
  using namespace softmax_split_detail;
  using Block = SplitBlock<T, BLOCK, VEC, UNROLL, STEPS, HINT>;
  using Raw = typename Block::Raw;
  __shared__ float red[2 * BLOCK / 32];
  const Block ch(blockIdx.x, x, cols);
  split_release_dependents();  // the second launch may start: it waits for these pairs itself

  float m = neg_inf(), s = 0.0f;
  for (int j0 = threadIdx.x; j0 < ch.nvec; j0 += Block::STEP) {
    Raw buf[UNROLL];
    ch.first(buf, j0);
    float cm = neg_inf();  // this step's max: one rescale per step, not per element
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (ch.in(j0, e)) {
        float v[VEC];
        unpack<T, VEC>(buf[e], v);
#pragma unroll
        for (int k = 0; k < VEC; ++k) cm = fmaxf(cm, v[k]);
      }
    if (cm > m) {  // from m = -inf: s = 0 * exp(-inf) = 0
      s *= ex<FAST_EXP>(m - cm);
      m = cm;
    }
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (ch.in(j0, e)) {
        float v[VEC];
        unpack<T, VEC>(buf[e], v);
#pragma unroll
        for (int k = 0; k < VEC; ++k) s += ex<FAST_EXP>(v[k] - m);
      }
  }
  block_combine<FAST_EXP, BLOCK>(m, s, red);
  if (threadIdx.x == 0) reinterpret_cast<float2*>(part)[blockIdx.x] = make_float2(m, s);
}

template <typename T, int BLOCK, int VEC, int UNROLL, int STEPS, int HINT, int FAST_EXP, int REVERSE>
__global__ void __launch_bounds__(BLOCK)
    softmax_split_apply(const T* __restrict__ x, T* __restrict__ y, const float* __restrict__ part, long long rows,
                        long long cols) {
  using namespace softmax_split_detail;
  using Block = SplitBlock<T, BLOCK, VEC, UNROLL, STEPS, HINT>;
  using Raw = typename Block::Raw;
  __shared__ float red[2 * BLOCK / 32];
  const long long b = REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const Block ch(b, x, cols);

  Raw* yv = reinterpret_cast<Raw*>(y + ch.begin);
  Raw buf[UNROLL];  // a step of x: the next one is read while this one is stored
  ch.last(buf, threadIdx.x);  // x is no launch's output: its first step is read before the wait
  split_wait_for_stats();

  // The row's pairs, a share per thread (they were written by the previous launch: plain loads).
  const float2* pr = reinterpret_cast<const float2*>(part) + ch.row * ch.chunks;
  float m = neg_inf(), s = 0.0f;
  for (long long j = threadIdx.x; j < ch.chunks; j += BLOCK) {
    const float2 p = pr[j];
    combine<FAST_EXP>(m, s, p.x, p.y);
  }
  block_combine<FAST_EXP, BLOCK>(m, s, red);
  const float inv = 1.0f / s;

  for (int j0 = threadIdx.x; j0 < ch.nvec; j0 += Block::STEP) {
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (ch.in(j0, e)) {
        float v[VEC];
        unpack<T, VEC>(buf[e], v);
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[k] = ex<FAST_EXP>(v[k] - m) * inv;
        store<HINT == 2 ? 1 : HINT>(yv + j0 + e * BLOCK, pack<T, Raw>(v));
      }
    ch.last(buf, j0 + Block::STEP);
  }
}
