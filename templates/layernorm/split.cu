// LayerNorm of rows of any width split over the whole grid in two launches, for rows too long for
// one block to walk quickly (few rows of 2^17 columns and more). Each row is cut into chunks of
// CHUNK = BLOCK * VEC * UNROLL * STEPS elements, one block per chunk of every row:
//   layernorm_split_stats  reduces its chunk to (mean, M2) by Welford steps merged with Chan's
//                          formula, and writes the pair (the count follows from the chunk's place);
//   layernorm_split_apply  merges its row's pairs, then reads its chunk again and writes y.
// Statistics are taken on x - x[row, 0] (as in rowreg and looped), and each step's mean and M2
// about the step's own mean, so that a large common offset of the row costs no digits: over
// uniform(1000, 1001) rows, f32 merges of unshifted means erred by up to 4.6e-4 in y (H200).
// x is read twice; while the data fits in L2 the second read hits there (HINT 2, REVERSE: as in
// softmax split). No block waits for another, so any grid is safe.
// The second launch is a programmatic dependent of the first (sm_90): its blocks start while the
// first drains, read their first step of x, and only then wait for the first launch's results.
#include <cuda_bf16.h>

namespace ln_split_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/group_allreduce.cuh"
#include "../common/ln_stats.cuh"
#include "../common/split_chunk.cuh"

}  // namespace ln_split_detail

template <typename T, int BLOCK, int VEC, int UNROLL, int STEPS, int HINT>
__global__ void __launch_bounds__(BLOCK)
    layernorm_split_stats(const T* __restrict__ x, float* __restrict__ part, long long rows, long long cols) {
  using namespace ln_split_detail;
  using Block = SplitBlock<T, BLOCK, VEC, UNROLL, STEPS, HINT>;
  using Raw = typename Block::Raw;
  __shared__ Wel scratch[BLOCK / 32];
  const Block ch(blockIdx.x, x, cols);
  split_release_dependents();  // the second launch may start: it waits for these pairs itself
  const float x0 = to_f(x[ch.row * cols]);  // the row's shift, the same in every block of the row

  Wel st{0.f, 0.f, 0.f};
  for (int j0 = threadIdx.x; j0 < ch.nvec; j0 += Block::STEP) {
    Raw buf[UNROLL];
    ch.first(buf, j0);
    float v[UNROLL][VEC], n = 0.f, s = 0.f;
#pragma unroll
    for (int e = 0; e < UNROLL; ++e) {
      const bool in = ch.in(j0, e);
      if (in) unpack<T>(buf[e], v[e]);
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        v[e][k] = in ? v[e][k] - x0 : 0.f;
        s += v[e][k];
      }
      n += in ? VEC : 0;
    }
    const float m = s / n;  // n > 0: the step's first vector is this thread's j0
    float m2 = 0.f;
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (ch.in(j0, e))
#pragma unroll
        for (int k = 0; k < VEC; ++k) m2 = fmaf(v[e][k] - m, v[e][k] - m, m2);
    st = combine(st, Wel{n, m, m2});
  }
  const Wel r = group_allreduce<BLOCK, 0>(st, scratch);
  if (threadIdx.x == 0) reinterpret_cast<float2*>(part)[blockIdx.x] = make_float2(r.m, r.m2);
}

template <typename T, int BLOCK, int VEC, int UNROLL, int STEPS, int HINT, int REVERSE>
__global__ void __launch_bounds__(BLOCK)
    layernorm_split_apply(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias,
                          T* __restrict__ y, const float* __restrict__ part, long long rows, long long cols, float eps) {
  using namespace ln_split_detail;
  using Block = SplitBlock<T, BLOCK, VEC, UNROLL, STEPS, HINT>;
  using Raw = typename Block::Raw;
  __shared__ Wel scratch[BLOCK / 32];
  const long long b = REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const Block ch(b, x, cols);

  const Raw* wv = reinterpret_cast<const Raw*>(weight + ch.col);
  const Raw* bv = reinterpret_cast<const Raw*>(bias + ch.col);
  Raw* yv = reinterpret_cast<Raw*>(y + ch.begin);
  Raw buf[UNROLL];  // a step of x: the next one is read while this one is stored
  ch.last(buf, threadIdx.x);  // x is no launch's output: its first step is read before the wait
  split_wait_for_stats();

  // The row's pairs, a share per thread (written by the previous launch: plain loads).
  const float2* pr = reinterpret_cast<const float2*>(part) + ch.row * ch.chunks;
  Wel st{0.f, 0.f, 0.f};
  for (long long j = threadIdx.x; j < ch.chunks; j += BLOCK) {
    const float2 p = pr[j];
    st = combine(st, Wel{split_chunk_count(j, Block::CHUNK, cols), p.x, p.y});
  }
  const Wel r = group_allreduce<BLOCK, 0>(st, scratch);
  const float x0 = to_f(x[ch.row * cols]);
  const float mean = r.m, rstd = rsqrtf(r.m2 / static_cast<float>(cols) + eps);  // mean of x - x0

  for (int j0 = threadIdx.x; j0 < ch.nvec; j0 += Block::STEP) {
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (ch.in(j0, e)) {
        float v[VEC], w[VEC], bb[VEC];
        unpack<T>(buf[e], v);
        unpack<T>(param_read<HINT>(wv + j0 + e * BLOCK), w);
        unpack<T>(param_read<HINT>(bv + j0 + e * BLOCK), bb);
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[k] = fmaf((v[k] - x0 - mean) * rstd, w[k], bb[k]);
        store<HINT == 2 ? 1 : HINT>(yv + j0 + e * BLOCK, pack<T, Raw>(v));
      }
    ch.last(buf, j0 + Block::STEP);
  }
}
