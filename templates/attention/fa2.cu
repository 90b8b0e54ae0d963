// Attention forward in FlashAttention-2's form on mma.sync (sm_80 and newer): a block owns BM
// queries of one head, a warp 16 of them, and walks the keys BN at a time without materialising the
// scores. Q stays in shared memory; K and V tiles come through a STAGES-deep cp.async ring into
// XOR-swizzled shared memory, so that the next tiles load while one is used. Per key tile a warp
// computes its 16 x BN scores (S = Q K^T, ldmatrix of K's rows), keeps an online softmax in f32
// registers (running maximum and row sum, the output rescaled when the maximum moves), and adds
// P V to its 16 x D output with the probabilities, rounded to the input type, taken straight from
// the score registers as the A operand (V through ldmatrix .trans). Under the causal mask the key
// range ends at the block's last visible key, and the blocks with the most keys run first. Tails of
// s_q and s_k are zero-filled and masked; any b, h, h_kv, s_q, s_k works.
// SPLIT > 1 (flash decoding, for few queries over many keys): the key tiles are shared out among
// SPLIT blocks per query block, each writing its unnormalised output and its rows' (max, sum) to
// scratch, and attention_combine merges the SPLIT parts of every row into O and the log-sum-exp.
// PACK 1 (grouped-query heads): a block's rows are those of the h / h_kv query heads that share a
// key/value head, one after another (they are adjacent in Q, O and the log-sum-exp), so each K and
// V tile is read once for all of them; a decoding step's one query per head then fills a warp's
// rows with the group's heads instead of 15 rows of padding.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/mma16.cuh"
#include "../common/softmax_math.cuh"
#include "split_combine.cuh"

namespace fa2_detail {

using namespace mma16;


// A rows x D tile from global rows [r0, r0 + rows) into swizzled shared memory; rows at or past
// `limit` are zeros (cp.async of 0 source bytes), so tails multiply as zeros, never as garbage.
template <int D, int NT>
__device__ __forceinline__ void load_tile(unsigned dst, const unsigned short* src, long long r0, long long limit,
                                          int rows, int tid) {
  constexpr int CPR = D / 8;
  for (int c = tid; c < rows * CPR; c += NT) {
    const int r = c / CPR, ch = c % CPR;
    const bool in = r0 + r < limit;
    cp_async16(dst + swizzle<CPR>(r, ch), src + (in ? (r0 + r) * D + ch * 8 : 0), in ? 16u : 0u);
  }
}

}  // namespace fa2_detail

template <typename T, int D, int BM, int BN, int STAGES, int SPLIT, int PACK>
__global__ void __launch_bounds__(BM * 2) attention_fa2(const T* __restrict__ q, const T* __restrict__ k,
                                                        const T* __restrict__ v, T* __restrict__ o,
                                                        float* __restrict__ lse, float* __restrict__ part_o,
                                                        float* __restrict__ part_ml, long long b, long long h,
                                                        long long h_kv, long long s_q, long long s_k, long long causal) {
  using namespace fa2_detail;
  constexpr int NT = BM * 2;                 // a warp per 16 queries
  constexpr int CPR = D / 8;                 // 16-byte chunks per row of Q, K, V
  constexpr int NB = BN / 8, ND = D / 8;     // m16n8 tiles of a warp's scores and of its output
  constexpr unsigned Q_BYTES = BM * D * 2, TILE_BYTES = BN * D * 2;
  static_assert(sizeof(T) == 2, "16-bit inputs");
  static_assert(D % 64 == 0 && BM % 16 == 0 && BN % 16 == 0 && STAGES >= 1 && SPLIT >= 1, "tile shapes");
  static_assert(PACK == 0 || PACK == 1, "PACK: 0 or 1");

  extern __shared__ __align__(128) unsigned char attention_smem[];
  const unsigned q_s = smem_addr(attention_smem);
  const unsigned kv_s = q_s + Q_BYTES;  // stage st: K at kv_s + 2 st TILE_BYTES, V after it
  if (dynamic_smem_bytes() < Q_BYTES + 2 * STAGES * TILE_BYTES) __trap();

  // A unit is a query head, or with PACK the G query heads of one key/value head: `rows` rows of
  // Q, O and the log-sum-exp, adjacent in memory, row p being query p % s_q.
  const long long G = PACK ? h / h_kv : 1, rows = G * s_q, units = PACK ? h_kv : h;
  // Block x: query block innermost (the blocks of one unit share its K and V in L2), then unit,
  // batch, and the split of the keys outermost.
  const long long nq = (rows + BM - 1) / BM, per_split = nq * units * b;
  const long long x = SPLIT > 1 ? blockIdx.x % per_split : blockIdx.x, split = SPLIT > 1 ? blockIdx.x / per_split : 0;
  const long long unit = (x / nq) % units, bi = x / (nq * units);
  const long long qb = causal ? nq - 1 - x % nq : x % nq;
  const long long head = PACK ? unit * G : unit;  // the unit's first query head
  const long long bh = bi * h + head, kvh = bi * h_kv + head / (h / h_kv);
  const long long i0 = qb * BM, shift = s_k - s_q;  // causal: query i sees keys j <= i + shift
  // The block's queries: rows i0 .. p_last; within one head they are i0 % s_q .. p_last % s_q,
  // across a head's end every query up to s_q - 1 may be among them.
  const long long p_last = min(i0 + BM, rows) - 1;
  const bool one_head = !PACK || i0 / s_q == p_last / s_q;
  const long long i_first = !PACK ? i0 : one_head ? i0 % s_q : 0, i_last = !PACK ? p_last : one_head ? p_last % s_q : s_q - 1;
  const long long end = causal ? min(s_k, i_last + 1 + shift) : s_k;
  // This block's key tiles: a balanced share of the visible ones (all of them without a split).
  const long long all_tiles = (end + BN - 1) / BN;
  const int t0 = static_cast<int>(all_tiles * split / SPLIT), tiles = static_cast<int>(all_tiles * (split + 1) / SPLIT);
  const auto* qg = reinterpret_cast<const unsigned short*>(q) + bh * s_q * D;
  const auto* kg = reinterpret_cast<const unsigned short*>(k) + kvh * s_k * D;
  const auto* vg = reinterpret_cast<const unsigned short*>(v) + kvh * s_k * D;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  load_tile<D, NT>(q_s, qg, i0, rows, BM, tid);
  cp_async_commit();
  auto load_kv = [&](int t) {
    if (t < tiles) {
      const unsigned st = kv_s + 2u * static_cast<unsigned>((t - t0) % STAGES) * TILE_BYTES;
      load_tile<D, NT>(st, kg, static_cast<long long>(t) * BN, s_k, BN, tid);
      load_tile<D, NT>(st + TILE_BYTES, vg, static_cast<long long>(t) * BN, s_k, BN, tid);
    }
    cp_async_commit();  // one group per tile, empty past the last: the wait below counts them alike
  };
  for (int t = t0; t < t0 + STAGES - 1; ++t) load_kv(t);

  const float scale = scale_log2<D>();
  // This thread's rows of the warp's 16 (g and g + 8) and its accumulator columns (2 c, 2 c + 1 of each tile).
  const int g = lane / 4, c2 = 2 * (lane % 4);
  const long long row0 = i0 + warp * 16 + g;
  float m[2] = {neg_inf(), neg_inf()}, l[2] = {0.f, 0.f};
  float acc[ND][4];
#pragma unroll
  for (int n = 0; n < ND; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;

  for (int t = t0; t < tiles; ++t) {
    load_kv(t + STAGES - 1);
    cp_async_wait<STAGES - 1>();
    __syncthreads();
    const unsigned k_s = kv_s + 2u * static_cast<unsigned>((t - t0) % STAGES) * TILE_BYTES, v_s = k_s + TILE_BYTES;
    const long long j0 = static_cast<long long>(t) * BN;

    // S = Q K^T over D in k16 steps: Q's fragment (rows of the warp) against two key tiles at a time.
    float s[NB][4];
#pragma unroll
    for (int n = 0; n < NB; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      unsigned a[4];
      ldmatrix_x4(a, q_s + swizzle<CPR>(warp * 16 + lane % 16, 2 * kk + lane / 16));
#pragma unroll
      for (int n = 0; n < NB; n += 2) {
        unsigned b0[2], b1[2];
        ldmatrix_x4(b0[0], b0[1], b1[0], b1[1], k_s + swizzle<CPR>(n * 8 + lane % 8 + (lane / 16) * 8, 2 * kk + (lane / 8) % 2));
        Mma<T>::run(s[n], a, b0);
        Mma<T>::run(s[n + 1], a, b1);
      }
    }
    // Keys past s_k, and under the causal mask past a row's last visible key, score -inf.
    if (j0 + BN > s_k || (causal && j0 + BN - 1 > i_first + shift)) {
#pragma unroll
      for (int n = 0; n < NB; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const long long j = j0 + n * 8 + c2 + (e & 1), i = PACK ? (row0 + 8 * (e >> 1)) % s_q : row0 + 8 * (e >> 1);
          if (j >= s_k || (causal && j > i + shift)) s[n][e] = neg_inf();
        }
    }
    // The online softmax, per row: the new maximum over the quad that holds the row, the old sums
    // and outputs rescaled by 2^(m_old - m_new) (scaled), the probabilities 2^(s - m_new).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = m[r];
#pragma unroll
      for (int n = 0; n < NB; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float base = mx == neg_inf() ? 0.f : mx * scale;  // a row with no key yet keeps zeros
      const float alpha = exp2f(m[r] * scale - base);
      m[r] = mx;
      float sum = 0.f;
#pragma unroll
      for (int n = 0; n < NB; ++n) {
        s[n][2 * r] = exp2f(fmaf(s[n][2 * r], scale, -base));
        s[n][2 * r + 1] = exp2f(fmaf(s[n][2 * r + 1], scale, -base));
        sum += s[n][2 * r] + s[n][2 * r + 1];
      }
      l[r] = l[r] * alpha + sum;
#pragma unroll
      for (int n = 0; n < ND; ++n) {
        acc[n][2 * r] *= alpha;
        acc[n][2 * r + 1] *= alpha;
      }
    }
    // O += P V: the accumulators of score tiles 2 kb and 2 kb + 1 are the A fragment of k16 step kb.
#pragma unroll
    for (int kb = 0; kb < BN / 16; ++kb) {
      const unsigned a[4] = {Mma<T>::pack(s[2 * kb][0], s[2 * kb][1]), Mma<T>::pack(s[2 * kb][2], s[2 * kb][3]),
                             Mma<T>::pack(s[2 * kb + 1][0], s[2 * kb + 1][1]),
                             Mma<T>::pack(s[2 * kb + 1][2], s[2 * kb + 1][3])};
#pragma unroll
      for (int n = 0; n < ND; n += 2) {
        unsigned b0[2], b1[2];
        ldmatrix_x4_trans(b0[0], b0[1], b1[0], b1[1], v_s + swizzle<CPR>(kb * 16 + lane % 8 + ((lane / 8) % 2) * 8, n + lane / 16));
        Mma<T>::run(acc[n], a, b0);
        Mma<T>::run(acc[n + 1], a, b1);
      }
    }
    __syncthreads();  // the stage is refilled by the next iteration's load
  }
  cp_async_wait<0>();

  // The row sums over the quad, then O / l and the log-sum-exp (natural log) for rows inside s_q; a
  // split's part instead: its output unnormalised, its maximum (-inf where it saw no key) and sum.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    const long long i = row0 + 8 * r;  // the unit's row: query i % s_q of head head + i / s_q
    if (i >= rows) continue;
    if constexpr (SPLIT > 1) {
      const long long part = (split * b * h + bh) * s_q + i;
      float2* out = reinterpret_cast<float2*>(part_o + part * D + c2);
#pragma unroll
      for (int n = 0; n < ND; ++n) out[n * 4] = make_float2(acc[n][2 * r], acc[n][2 * r + 1]);
      if (lane % 4 == 0) reinterpret_cast<float2*>(part_ml)[part] = make_float2(m[r], l[r]);
      continue;
    }
    const float inv = 1.f / l[r];
    unsigned* out = reinterpret_cast<unsigned*>(o + (bh * s_q + i) * D + c2);
#pragma unroll
    for (int n = 0; n < ND; ++n) out[n * 4] = Mma<T>::pack(acc[n][2 * r] * inv, acc[n][2 * r + 1] * inv);
    if (lane % 4 == 0) lse[bh * s_q + i] = log_sum_exp<D>(m[r], l[r]);
  }
}
