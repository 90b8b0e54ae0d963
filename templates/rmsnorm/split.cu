// RMSNorm of rows of any width split over the whole grid in two launches, for rows too long for one
// block to walk quickly (few rows of 2^17 columns and more). Each row is cut into chunks of
// CHUNK = BLOCK * VEC * UNROLL * STEPS elements, one block per chunk of every row:
//   rmsnorm_split_stats  reduces its chunk to its sum of squares and writes it;
//   rmsnorm_split_apply  sums its row's partial sums, then reads its chunk again and writes y.
// x is read twice; while the data fits in L2 the second read hits there (HINT 2, REVERSE: as in
// softmax split). No block waits for another, so any grid is safe.
// The second launch is a programmatic dependent of the first (sm_90): its blocks start while the
// first drains, read their first step of x, and only then wait for the first launch's results.
#include <cuda_bf16.h>

namespace rms_split_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/group_allreduce.cuh"
#include "../common/split_chunk.cuh"

}  // namespace rms_split_detail

template <typename T, int BLOCK, int VEC, int UNROLL, int STEPS, int HINT>
__global__ void __launch_bounds__(BLOCK)
    rmsnorm_split_stats(const T* __restrict__ x, float* __restrict__ part, long long rows, long long cols) {
  using namespace rms_split_detail;
  using Block = SplitBlock<T, BLOCK, VEC, UNROLL, STEPS, HINT>;
  using Raw = typename Block::Raw;
  __shared__ float scratch[BLOCK / 32];
  const Block ch(blockIdx.x, x, cols);
  split_release_dependents();  // the second launch may start: it waits for these sums itself

  float q = 0.f;
  for (int j0 = threadIdx.x; j0 < ch.nvec; j0 += Block::STEP) {
    Raw buf[UNROLL];
    ch.first(buf, j0);
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (ch.in(j0, e)) {
        float v[VEC];
        unpack<T>(buf[e], v);
#pragma unroll
        for (int k = 0; k < VEC; ++k) q = fmaf(v[k], v[k], q);
      }
  }
  q = group_allreduce<BLOCK, 0>(q, scratch);
  if (threadIdx.x == 0) part[blockIdx.x] = q;
}

template <typename T, int BLOCK, int VEC, int UNROLL, int STEPS, int HINT, int REVERSE>
__global__ void __launch_bounds__(BLOCK)
    rmsnorm_split_apply(const T* __restrict__ x, const T* __restrict__ weight, T* __restrict__ y,
                        const float* __restrict__ part, long long rows, long long cols, float eps) {
  using namespace rms_split_detail;
  using Block = SplitBlock<T, BLOCK, VEC, UNROLL, STEPS, HINT>;
  using Raw = typename Block::Raw;
  __shared__ float scratch[BLOCK / 32];
  const long long b = REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const Block ch(b, x, cols);

  const Raw* wv = reinterpret_cast<const Raw*>(weight + ch.col);
  Raw* yv = reinterpret_cast<Raw*>(y + ch.begin);
  Raw buf[UNROLL];  // a step of x: the next one is read while this one is stored
  ch.last(buf, threadIdx.x);  // x is no launch's output: its first step is read before the wait
  split_wait_for_stats();

  // The row's partial sums, a share per thread (written by the previous launch: plain loads).
  const float* pr = part + ch.row * ch.chunks;
  float q = 0.f;
  for (long long j = threadIdx.x; j < ch.chunks; j += BLOCK) q += pr[j];
  const float rstd = rsqrtf(group_allreduce<BLOCK, 0>(q, scratch) / static_cast<float>(cols) + eps);

  for (int j0 = threadIdx.x; j0 < ch.nvec; j0 += Block::STEP) {
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (ch.in(j0, e)) {
        float v[VEC], w[VEC];
        unpack<T>(buf[e], v);
        unpack<T>(param_read<HINT>(wv + j0 + e * BLOCK), w);
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[k] = v[k] * rstd * w[k];
        store<HINT == 2 ? 1 : HINT>(yv + j0 + e * BLOCK, pack<T, Raw>(v));
      }
    ch.last(buf, j0 + Block::STEP);
  }
}
