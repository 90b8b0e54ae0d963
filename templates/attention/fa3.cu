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

// k16 step ks of S = Q K^T reads chunk ks / 4 of Q (BM rows) and of K (BN rows), 32 bytes a step
// within their 128-byte rows; the first step writes S, the rest add.
template <typename T, int D, int BM, int BN>
__device__ __forceinline__ void issue_scores(float (&sc)[BN / 2], unsigned sq, unsigned sk) {
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    const unsigned step = (ks % 4) * 32;
    wgmma_ss<T, BN>(sc, smem_desc(sq + (ks / 4) * BM * 128 + step, 16, 1024), smem_desc(sk + (ks / 4) * BN * 128 + step, 16, 1024),
                    ks > 0);
  }
}

// A thread's two rows of a consumer's 64 (r and r + 8 of its warp's 16): the mask, and the online
// softmax's running maximum m (unscaled scores) and sum l of 2^((s - m) scale).
template <int D> struct Rows {
  bool causal;
  long long s_k, limit0, first;  // keys past s_k are out; causally, row r sees keys <= limit0 + 8 r; the consumer's first row sees keys <= first
  int c2;
  float m[2] = {neg_inf(), neg_inf()}, l[2] = {0.f, 0.f};

  // Keys past s_k, and under the causal mask past a row's last visible key, score -inf (tiles
  // wholly inside both limits skip the test).
  template <int H> __device__ __forceinline__ void mask(float (&sc)[H], long long j0) const {
    constexpr int BN = 2 * H;
    if (j0 + BN <= s_k && (!causal || j0 + BN - 1 <= first)) return;
#pragma unroll
    for (int jb = 0; jb < BN / 8; ++jb)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const long long j = j0 + 8 * jb + c2 + (e & 1);
        if (j >= s_k || (causal && j > limit0 + 8 * (e >> 1))) sc[4 * jb + e] = neg_inf();
      }
  }

  // The new maximum per row over the quad of lanes that holds it, the probabilities 2^(s - m_new)
  // (scaled) in place of the scores, the sum rescaled by alpha = 2^(m_old - m_new) and grown.
  template <int H> __device__ __forceinline__ void softmax(float (&sc)[H], float (&alpha)[2]) {
    const float sc_log2 = scale_log2<D>();
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = m[r];
#pragma unroll
      for (int jb = 0; jb < H / 4; ++jb) mx = fmaxf(mx, fmaxf(sc[4 * jb + 2 * r], sc[4 * jb + 2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float base = mx == neg_inf() ? 0.f : mx * sc_log2;  // a row with no key yet keeps zeros
      alpha[r] = ex2_ftz(m[r] * sc_log2 - base);
      m[r] = mx;
      float sum = 0.f;
#pragma unroll
      for (int jb = 0; jb < H / 4; ++jb) {
        float& p0 = sc[4 * jb + 2 * r];
        float& p1 = sc[4 * jb + 2 * r + 1];
        p0 = ex2_ftz(fmaf(p0, sc_log2, -base));
        p1 = ex2_ftz(fmaf(p1, sc_log2, -base));
        sum += p0 + p1;
      }
      l[r] = l[r] * alpha[r] + sum;
    }
  }
};

// The output's rows rescaled when their maximum moved.
template <int D> __device__ __forceinline__ void rescale(float (&acc)[D / 2], const float (&alpha)[2]) {
#pragma unroll
  for (int jb = 0; jb < D / 8; ++jb) {
    acc[4 * jb] *= alpha[0];
    acc[4 * jb + 1] *= alpha[0];
    acc[4 * jb + 2] *= alpha[1];
    acc[4 * jb + 3] *= alpha[1];
  }
}

// The probabilities in the input type as P V's A fragments: score blocks 2 kb and 2 kb + 1 (rows
// r and r + 8, columns 2 (lane % 4) and + 8) are k16 step kb's four registers.
template <typename T, int BN> __device__ __forceinline__ void pack_probabilities(const float (&sc)[BN / 2], unsigned (&pa)[BN / 16][4]) {
#pragma unroll
  for (int kb = 0; kb < BN / 16; ++kb)
#pragma unroll
    for (int q = 0; q < 4; ++q) pa[kb][q] = mma16::Mma<T>::pack(sc[8 * kb + 2 * q], sc[8 * kb + 2 * q + 1]);
}

}  // namespace fa3_detail

// T: bf16 or f16; D: head dimension (64, 128 or 256); BM: query rows per block (64 per consumer
// warpgroup, up to three); BN: keys per tile (the scores' wgmma N: 64 or 128); STAGES: K and V tiles in the ring;
// OVERLAP 1: the next tile's scores issued with this tile's product, before this tile's softmax;
// PINGPONG 1 (two or three consumers): they take turns issuing wgmmas.
template <typename T, int D, int BM, int BN, int STAGES, int OVERLAP, int PINGPONG>
__global__ void __launch_bounds__(2 * BM + 128, 1)
    attention_fa3(const __grid_constant__ fa3_detail::TmaMap tq, const __grid_constant__ fa3_detail::TmaMap tk,
                  const __grid_constant__ fa3_detail::TmaMap tv, T* __restrict__ o, float* __restrict__ lse, long long b,
                  long long h, long long h_kv, long long s_q, long long s_k, long long causal) {
  using namespace fa3_detail;
  namespace ptx = cuda::ptx;
  static_assert(D == 64 || D == 128 || D == 256, "D: 64, 128 or 256");
  static_assert(BM == 64 || BM == 128 || BM == 192, "BM: 64 per consumer warpgroup, one to three of them");
  static_assert(BN == 64 || BN == 128, "BN: 64 or 128");
  constexpr int NC = BM / 64;
  static_assert(PINGPONG == 0 || NC >= 2, "ping-pong takes two consumers or more");
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
  setmaxnreg_inc<NC == 3 ? 160 : 240>();  // 24 + 2 x 240 (3 x 160) of 512 a lane
  const int cw = wg - 1, warp = (tid % 128) / 32, lane = tid % 32;
  // This thread's rows (r and r + 8 of its warp's 16) and its first column of each 8-column block.
  const long long row0 = q0 + cw * 64 + warp * 16 + lane / 4;
  const int c2 = 2 * (lane % 4);
  Rows<D> rows;
  rows.causal = causal != 0;
  rows.s_k = s_k;
  rows.limit0 = row0 + shift;
  rows.first = q0 + cw * 64 + shift;
  rows.c2 = c2;
  float acc[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) acc[i] = 0.f;
  float sc[BN / 2];
  unsigned pa[BN / 16][4];
  wait_parity(&q_full, 0);
  const unsigned sq = sbase + cw * 64 * 128;  // this consumer's 64 rows of each Q chunk
  auto stage = [&](int t) { return sbase + Q_BYTES + (t % STAGES) * 2 * KV_BYTES; };
  auto parity = [](int t) { return static_cast<unsigned>((t / STAGES) & 1); };
  // S = Q K^T of tile t, issued and committed (not waited for).
  auto scores = [&](int t) {
    wait_parity(&k_full[t % STAGES], parity(t));
    wgmma_fence();
    issue_scores<T, D, BM, BN>(sc, sq, stage(t));
    wgmma_commit();
  };
  // O += P V of tile t, issued and committed.
  auto product = [&](int t) {
    wait_parity(&v_full[t % STAGES], parity(t));
    wgmma_fence();
#pragma unroll
    for (int kb = 0; kb < BN / 16; ++kb) wgmma_rs<T, D>(acc, pa[kb], smem_desc(stage(t) + KV_BYTES + kb * 16 * 128, BN * 128, 1024));
    wgmma_commit();
  };
  auto release = [&](int t) {
    if (lane == 0) ptx::mbarrier_arrive(&empty[t % STAGES]);
  };
  // PINGPONG: the consumers take turns issuing their wgmmas (named barriers 2..), so one's softmax
  // runs while another's products keep the tensor cores busy.
  const Turns<PINGPONG != 0, NC, 2> turns{cw};
  turns.start();

  if constexpr (OVERLAP == 0) {
    for (int t = 0; t < tiles; ++t) {
      turns.mine();
      scores(t);
      turns.pass();
      wgmma_wait<0>();
      rows.mask(sc, t * BN);
      float alpha[2];
      rows.softmax(sc, alpha);
      rescale<D>(acc, alpha);
      pack_probabilities<T, BN>(sc, pa);
      product(t);
      wgmma_wait<0>();
      release(t);
    }
  } else {
    // The scores of tile t + 1 are on the tensor cores while the softmax of tile t runs: S(t + 1) and
    // O += P(t) V(t) issued together, then the softmax of S(t + 1) while the product finishes.
    turns.mine();
    scores(0);
    turns.pass();
    wgmma_wait<0>();
    rows.mask(sc, 0);
    {
      float alpha[2];
      rows.softmax(sc, alpha);  // O is still zero
    }
    pack_probabilities<T, BN>(sc, pa);
    for (int t = 1; t < tiles; ++t) {
      turns.mine();
      scores(t);
      product(t - 1);
      turns.pass();
      wgmma_wait<1>();  // S(t) is in
      rows.mask(sc, static_cast<long long>(t) * BN);
      float alpha[2];
      rows.softmax(sc, alpha);
      wgmma_wait<0>();  // O += P(t - 1) V(t - 1) is in
      release(t - 1);
      rescale<D>(acc, alpha);
      pack_probabilities<T, BN>(sc, pa);
    }
    turns.mine();
    product(tiles - 1);
    turns.pass();
    wgmma_wait<0>();
    release(tiles - 1);
  }
  turns.finish();

  float (&l)[2] = rows.l;

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
    if (lane % 4 == 0) lse[bh * s_q + i] = log_sum_exp<D>(rows.m[r], l[r]);
  }
}
