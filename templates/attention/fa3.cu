// FlashAttention-style fused attention forward on Hopper (sm_90a) with warp specialisation: a
// producer warp loads the block's query tile once and then the key and value tiles of its key loop
// by TMA into a STAGES-deep ring (K and V on barriers of their own, so the scores start before V
// lands); NC consumer warpgroups, 64 query rows each, compute S = Q K^T with wgmma from shared
// memory, the online softmax in f32 registers, and O += P V with wgmma taking the probabilities
// from registers (the accumulator layout of S is the A fragment's) and V MN-major. Q, K and V are
// read as boxes of 64 columns (128 bytes, one 128-byte swizzle span) by D / 64 copies a tile. The
// two consumers' wgmmas and softmaxes interleave on the SM's tensor cores and ALUs. Rows of Q past
// s_q (the tile's tail) read the next head's rows or zeros and are never stored; keys past s_k
// score -inf. One block per query tile of a head; with the causal mask the blocks with the most
// keys start first.
#include <cuda/ptx>
#include <cuda/std/cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/mma16.cuh"
#include "../common/softmax_math.cuh"

namespace fa3_detail {

#include "../common/wgmma.cuh"
#include "../common/wgmma_rs.cuh"
#include "../common/hopper_pipe.cuh"

// D / 64 boxes of 64 columns x `rows` rows from row r0 of a tensor map over (rows of all heads) x D,
// into consecutive 128-byte-swizzled chunks of rows x 128 bytes, completing on `bar`.
template <int D>
__device__ __forceinline__ void load_rows(const TmaMap* map, unsigned char* dst, int rows, long long r0, cuda::std::uint64_t* bar) {
  namespace ptx = cuda::ptx;
#pragma unroll
  for (int c = 0; c < D / 64; ++c) {
    const int at[2] = {64 * c, static_cast<int>(r0)};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst + c * rows * 128, map, at, bar);
  }
}

}  // namespace fa3_detail

// T: bf16 or f16; D: head dimension (64, 128 or 256); BM: query rows per block (64 per consumer
// warpgroup); BN: keys per tile (the scores' wgmma N: 64 or 128); STAGES: K and V tiles in the ring.
template <typename T, int D, int BM, int BN, int STAGES>
__global__ void __launch_bounds__(2 * BM + 128, 1)
    attention_fa3(const __grid_constant__ fa3_detail::TmaMap tq, const __grid_constant__ fa3_detail::TmaMap tk,
                  const __grid_constant__ fa3_detail::TmaMap tv, T* __restrict__ o, float* __restrict__ lse, long long b,
                  long long h, long long h_kv, long long s_q, long long s_k, long long causal) {
  using namespace fa3_detail;
  namespace ptx = cuda::ptx;
  static_assert(D == 64 || D == 128 || D == 256, "D: 64, 128 or 256");
  static_assert(BM == 64 || BM == 128, "BM: 64 per consumer warpgroup, one or two of them");
  static_assert(BN == 64 || BN == 128, "BN: 64 or 128");
  constexpr int NC = BM / 64;
  constexpr unsigned Q_BYTES = BM * D * 2, KV_BYTES = BN * D * 2;
  extern __shared__ unsigned char fa3_smem[];
  __shared__ cuda::std::uint64_t q_full, k_full[STAGES], v_full[STAGES], empty[STAGES];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(fa3_smem));
  unsigned char* const base = fa3_smem + swizzle_pad(raw);
  const unsigned sbase = raw + swizzle_pad(raw);  // Q, then each stage's K and V

  // The block's query tile: heaviest first under the causal mask (tile index reversed).
  const long long q_tiles = (s_q + BM - 1) / BM, heads = b * h;
  const long long qt = q_tiles - 1 - blockIdx.x / heads, bh = blockIdx.x % heads;
  const long long q0 = qt * BM, kv_head = (bh / h) * h_kv + (bh % h) / (h / h_kv);
  const long long shift = s_k - s_q;  // the causal mask lets query i see keys j <= i + shift
  const long long q_last = min(q0 + BM, s_q) - 1;
  const long long key_end = causal ? min(s_k, q_last + shift + 1) : s_k;
  const int tiles = static_cast<int>((key_end + BN - 1) / BN);

  const int tid = threadIdx.x, wg = tid / 128;
  if (tid == 0) {
    ptx::mbarrier_init(&q_full, 1);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&k_full[s], 1);
      ptx::mbarrier_init(&v_full[s], 1);
      ptx::mbarrier_init(&empty[s], 4 * NC);  // every consumer warp
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<24>();
    if (tid == 0) {
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &q_full, Q_BYTES);
      load_rows<D>(&tq, base, BM, bh * s_q + q0, &q_full);
      for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        if (t >= STAGES) wait_parity(&empty[s], static_cast<unsigned>((t / STAGES - 1) & 1));
        unsigned char* const st = base + Q_BYTES + s * 2 * KV_BYTES;
        const long long r0 = kv_head * s_k + static_cast<long long>(t) * BN;
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &k_full[s], KV_BYTES);
        load_rows<D>(&tk, st, BN, r0, &k_full[s]);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &v_full[s], KV_BYTES);
        load_rows<D>(&tv, st + KV_BYTES, BN, r0, &v_full[s]);
      }
    }
    return;
  }
  setmaxnreg_inc<240>();  // 24 + 2 x 240 of 512 a lane
  const int cw = wg - 1, warp = (tid % 128) / 32, lane = tid % 32;
  const float scale = 1.4426950408889634f * rsqrtf(static_cast<float>(D));  // scores to base-2 exponents
  // This thread's rows (r and r + 8 of its warp's 16) and its first column of each 8-column block.
  const long long row0 = q0 + cw * 64 + warp * 16 + lane / 4;
  const int c2 = 2 * (lane % 4);
  float m[2] = {neg_inf(), neg_inf()}, l[2] = {0.f, 0.f};
  float acc[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) acc[i] = 0.f;
  wait_parity(&q_full, 0);
  const unsigned sq = sbase + cw * 64 * 128;  // this consumer's 64 rows of each Q chunk

  for (int t = 0; t < tiles; ++t) {
    const int s = t % STAGES;
    const unsigned parity = static_cast<unsigned>((t / STAGES) & 1);
    const unsigned sk = sbase + Q_BYTES + s * 2 * KV_BYTES, sv = sk + KV_BYTES;
    float sc[BN / 2];
    wait_parity(&k_full[s], parity);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      // k16 step ks: chunk ks / 4 of Q (BM rows) and of K (BN rows), 32 bytes a step within its 128-byte rows
      const unsigned step = (ks % 4) * 32;
      wgmma_ss<T, BN>(sc, smem_desc(sq + (ks / 4) * BM * 128 + step, 16, 1024), smem_desc(sk + (ks / 4) * BN * 128 + step, 16, 1024),
                      ks > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();

    // Keys past s_k, and under the causal mask past a row's last visible key, score -inf.
    const long long j0 = static_cast<long long>(t) * BN;
    if (j0 + BN > s_k || (causal && j0 + BN - 1 > q0 + cw * 64 + shift)) {
#pragma unroll
      for (int jb = 0; jb < BN / 8; ++jb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const long long j = j0 + 8 * jb + c2 + (e & 1), i = row0 + 8 * (e >> 1);
          if (j >= s_k || (causal && j > i + shift)) sc[4 * jb + e] = neg_inf();
        }
    }
    // The online softmax per row (the quad of lanes that holds it): the new maximum, the old sum
    // and output rescaled by 2^(m_old - m_new) (scaled), the probabilities 2^(s - m_new).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = m[r];
#pragma unroll
      for (int jb = 0; jb < BN / 8; ++jb) mx = fmaxf(mx, fmaxf(sc[4 * jb + 2 * r], sc[4 * jb + 2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float base_r = mx == neg_inf() ? 0.f : mx * scale;  // a row with no key yet keeps zeros
      const float alpha = exp2f(m[r] * scale - base_r);
      m[r] = mx;
      float sum = 0.f;
#pragma unroll
      for (int jb = 0; jb < BN / 8; ++jb) {
        float& p0 = sc[4 * jb + 2 * r];
        float& p1 = sc[4 * jb + 2 * r + 1];
        p0 = exp2f(fmaf(p0, scale, -base_r));
        p1 = exp2f(fmaf(p1, scale, -base_r));
        sum += p0 + p1;
      }
      l[r] = l[r] * alpha + sum;
#pragma unroll
      for (int jb = 0; jb < D / 8; ++jb) {
        acc[4 * jb + 2 * r] *= alpha;
        acc[4 * jb + 2 * r + 1] *= alpha;
      }
    }
    // O += P V, k16 step kb: score blocks 2 kb and 2 kb + 1 are its A fragment; V's k16 rows are 16
    // rows of 128 bytes in each 64-column chunk, the chunks BN rows apart.
    unsigned pa[BN / 16][4];
#pragma unroll
    for (int kb = 0; kb < BN / 16; ++kb) {
      pa[kb][0] = mma16::Mma<T>::pack(sc[8 * kb], sc[8 * kb + 1]);
      pa[kb][1] = mma16::Mma<T>::pack(sc[8 * kb + 2], sc[8 * kb + 3]);
      pa[kb][2] = mma16::Mma<T>::pack(sc[8 * kb + 4], sc[8 * kb + 5]);
      pa[kb][3] = mma16::Mma<T>::pack(sc[8 * kb + 6], sc[8 * kb + 7]);
    }
    wait_parity(&v_full[s], parity);
    wgmma_fence();
#pragma unroll
    for (int kb = 0; kb < BN / 16; ++kb) wgmma_rs<T, D>(acc, pa[kb], smem_desc(sv + kb * 16 * 128, BN * 128, 1024));
    wgmma_commit();
    wgmma_wait<0>();
    if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
  }

  // The row sums over the quad, then O / l and the natural log-sum-exp for rows inside s_q.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    const long long i = row0 + 8 * r;
    if (i >= s_q) continue;
    const float inv = 1.f / l[r];
    unsigned* out = reinterpret_cast<unsigned*>(o + (bh * s_q + i) * D + c2);
#pragma unroll
    for (int jb = 0; jb < D / 8; ++jb) out[jb * 4] = mma16::Mma<T>::pack(acc[4 * jb + 2 * r] * inv, acc[4 * jb + 2 * r + 1] * inv);
    if (lane % 4 == 0) lse[bh * s_q + i] = (m[r] * scale + __log2f(l[r])) * 0.6931471805599453f;
  }
}
