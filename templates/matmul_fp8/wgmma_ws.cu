// C = (sa A)(sb B)^T on Hopper's FP8 tensor cores with warp specialisation (sm_90a): a producer
// warpgroup feeds a STAGES-deep ring of shared-memory slices by TMA, each 128 k values of A's BM
// rows and B's BN rows (one 128-byte swizzle span a row, and one block of the per-block scales),
// while one (BM 64) or two consumer warpgroups multiply them with wgmma m64nBNk32.
//
// Hopper's FP8 wgmma adds into an accumulator of about 14 significant bits, so a group of PROMOTE
// slices is multiplied into registers of their own and then promoted: added into the f32
// accumulators, times the slice's scales of A's rows and B's column block with scale 2 (a group of
// one slice). Scales 0 and 1 are applied once, as C is stored. Within a group the wgmmas of one
// slice overlap the wait for the next; the group's end waits for all of them. Block scales travel
// through the ring: the producer warp's lanes load a slice's scales of A's BM rows and B's column
// blocks while it waits for a free stage and store them beside the stage, so a consumer reads them
// from shared memory (loaded from global memory at each promotion, their latency stood between
// every slice and the next). The grid is persistent and walks the tiles in groups of GROUP rows
// along m. TMA zero-fills past m, n and k and every store of C is guarded or clipped; rows must be
// 16-byte aligned (k a multiple of 16, n of 8).
#include <cuda/ptx>
#include <cuda/std/cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace wgmma_fp8_detail {

#include "../common/wgmma.cuh"
#include "../common/wgmma_fp8.cuh"
#include "../common/hopper_pipe.cuh"

constexpr int BK = 128;  // k values (bytes) of a slice: one swizzle span, one scale block

// Slice k0.. of tile (m0, n0) into a stage: A's BM rows of BK bytes, then B's BN rows, completing on
// the stage's `full`.
template <int BM, int BN>
__device__ __forceinline__ void issue_slice(const TmaMap* ta, const TmaMap* tb, unsigned char* sa, cuda::std::uint64_t* full,
                                            int m0, int n0, int k0) {
  namespace ptx = cuda::ptx;
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, full, (BM + BN) * BK);
  const int ca[2] = {k0, m0}, cb[2] = {k0, n0};
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, sa, ta, ca, full);
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, sa + BM * BK, tb, cb, full);
}

// A producer lane's share of slice kt's block scales for the tile at rows m0.., columns n0..: A's rows
// m0 + lane + 32 i (0 past m), then on lanes 0 and 1 B's column blocks n0 / 128 and the next (0 past
// n). Loaded into registers while the producer waits for a free stage.
template <int BM>
__device__ __forceinline__ void load_block_scales(float (&v)[BM / 32 + 1], const float* sa, const float* sb, long long m0, int n0,
                                                  int kt, long long m, long long kb, long long nb) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < BM / 32; ++i) {
    const long long row = m0 + lane + 32 * i;
    v[i] = row < m ? __ldg(sa + kt * m + row) : 0.0f;
  }
  const long long jb = n0 / 128 + lane;
  v[BM / 32] = lane < 2 && jb < nb ? __ldg(sb + jb * kb + kt) : 0.0f;
}
// ... stored beside the stage: rows at 0.., B's blocks at BM and BM + 1.
template <int BM> __device__ __forceinline__ void store_block_scales(const float (&v)[BM / 32 + 1], float* ss) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < BM / 32; ++i) ss[lane + 32 * i] = v[i];
  if (lane < 2) ss[BM + lane] = v[BM / 32];
}

// A thread's rows of an m64 accumulator block whose first row is row0: r and r + 8 (wgmma's layout,
// see store_acc).
__device__ __forceinline__ long long acc_row(long long row0) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  return row0 + warp * 16 + lane / 4;
}

}  // namespace wgmma_fp8_detail

// T: e4m3 or e5m2; BM: rows of C per block (64: one consumer; 128, 256: two, BM / 2 rows each); BN:
// columns (the wgmma's N: 64, 128, 176 or 192); STAGES: slices in the ring; GROUP: rows of tiles per
// group of the walk; PROMOTE: slices of 128 k the tensor cores add up before their sum is promoted into
// f32 (0: all of k, once); EPI: C stored from registers (0) or staged in shared memory and written by
// TMA (1) while the consumers go on to the next tile; SCALE: the problem's scale mode, compiled in (the argument is not read);
// PINGPONG 1 (two consumers): they take turns issuing a slice's wgmmas (named barriers 3 and 4), so
// that one's promotion runs while the other's products keep the tensor cores busy (both wait on the
// same stage, and without turns they promote at once).
template <typename T, int BM, int BN, int STAGES, int GROUP, int PROMOTE, int EPI, int SCALE, int PINGPONG>
__global__ void __launch_bounds__(BM == 64 ? 256 : 384, 1)
    matmul_fp8_wgmma_ws(const __grid_constant__ wgmma_fp8_detail::TmaMap ta, const __grid_constant__ wgmma_fp8_detail::TmaMap tb,
                        const __grid_constant__ wgmma_fp8_detail::TmaMap tc, const float* __restrict__ sa, const float* __restrict__ sb, __nv_bfloat16* __restrict__ c, long long m,
                        long long n, long long k, long long scale) {
  using namespace wgmma_fp8_detail;
  namespace ptx = cuda::ptx;
  static_assert(BM == 64 || BM == 128 || BM == 256, "BM: 64, 128 or 256");
  static_assert(BN == 64 || BN == 128 || BN == 176 || BN == 192, "BN: 64, 128, 176 or 192");
  static_assert(EPI == 0 || BN % 64 == 0, "the TMA store writes C in boxes of 64 columns");
  constexpr int NC = BM == 64 ? 1 : 2, ROWS = BM / NC, MI = ROWS / 64;  // consumers, their rows, m64 blocks each
  static_assert(MI * BN <= 192, "a slice's and the promoted accumulators: at most 192 registers each");
  static_assert(PINGPONG == 0 || NC == 2, "ping-pong takes two consumers");
  constexpr unsigned STAGE_BYTES = (BM + BN) * BK;
  extern __shared__ unsigned char wgmma_fp8_smem[];
  __shared__ cuda::std::uint64_t full[STAGES], empty[STAGES];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(wgmma_fp8_smem));
  unsigned char* const base = wgmma_fp8_smem + swizzle_pad(raw);  // where the swizzled tiles start
  const unsigned sbase = raw + swizzle_pad(raw);
  // Block scales, a slice's beside each stage: A's BM rows, then B's two column blocks.
  constexpr int SCALE_STRIDE = BM + 4;
  float* const sscale = reinterpret_cast<float*>(base + STAGES * STAGE_BYTES + EPI * BM * BN * 2);

  const int tid = threadIdx.x, wg = tid / 128;
  const int tiles_m = static_cast<int>((m + BM - 1) / BM), tiles_n = static_cast<int>((n + BN - 1) / BN);
  const int kt_count = static_cast<int>((k + BK - 1) / BK);
  const long long kb = kt_count, nb = (n + 127) / 128;  // scale blocks along k and along B's rows
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], SCALE == 2 ? 33 : 1);  // the copy's arrival, and with block scales the producer warp's lanes
      ptx::mbarrier_init(&empty[s], 4 * NC);  // every consumer warp
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // visible to the copy engine
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (tid < 32) {
      int it = 0;  // slices issued over all of this block's tiles: the ring's position and phase
      for (int u = blockIdx.x; u < tiles_m * tiles_n; u += gridDim.x) {
        const TileAt t = tile_at<GROUP>(u, tiles_m, tiles_n);
        for (int kt = 0; kt < kt_count; ++kt, ++it) {
          const int s = it % STAGES;
          float scales[BM / 32 + 1];
          if constexpr (SCALE == 2) load_block_scales<BM>(scales, sa, sb, static_cast<long long>(t.tm) * BM, t.tn * BN, kt, m, kb, nb);
          if (it >= STAGES) wait_parity(&empty[s], static_cast<unsigned>((it / STAGES - 1) & 1));
          if (tid == 0) issue_slice<BM, BN>(&ta, &tb, base + s * STAGE_BYTES, &full[s], t.tm * BM, t.tn * BN, kt * BK);
          if constexpr (SCALE == 2) {
            // Each lane's stores, released by its own arrival (the barrier counts the 32 of them).
            store_block_scales<BM>(scales, sscale + s * SCALE_STRIDE);
            cuda::ptx::mbarrier_arrive(&full[s]);
          }
          __syncwarp();
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int cw = wg - 1;  // this consumer's rows: cw * ROWS ..
    const int lane = tid % 32;
    const bool signals = lane == 0;
    float acc[MI][BN / 2], part[MI][BN / 2];
    int it = 0;
    // PINGPONG: the consumers take turns issuing a slice's wgmmas on named barriers 3 and 4 (1 and 2
    // are consumer_sync's).
    const Turns<PINGPONG != 0, NC, 3> turns{cw};
    turns.start();
    for (int u = blockIdx.x; u < tiles_m * tiles_n; u += gridDim.x) {
      const TileAt t = tile_at<GROUP>(u, tiles_m, tiles_n);
      const long long m0 = static_cast<long long>(t.tm) * BM + cw * ROWS, n0 = static_cast<long long>(t.tn) * BN;
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[mi][i] = 0.0f;
      // Groups of PROMOTE slices (all of k with 0): the tensor cores add a group up in `part`, its
      // first slice clearing it, and the group's sum is then promoted. Nothing reads `part` inside a
      // group, so one slice's wgmmas overlap the wait for the next.
      constexpr int kNone = 1 << 30;
      const int group = PROMOTE == 0 ? kNone : PROMOTE;
      for (int g0 = 0; g0 < kt_count; g0 += group) {
        const int g1 = min(kt_count, g0 + min(group, kt_count));
        int prev = -1;  // the slice whose wgmmas may still be running
        for (int kt = g0; kt < g1; ++kt, ++it) {
          const int s = it % STAGES;
          wait_parity(&full[s], static_cast<unsigned>((it / STAGES) & 1));
          const unsigned sa_s = sbase + s * STAGE_BYTES + cw * ROWS * BK, sb_s = sbase + s * STAGE_BYTES + BM * BK;
          turns.mine();
          wgmma_fence();
#pragma unroll
          for (int ks = 0; ks < BK / 32; ++ks)
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
              mma_fp8<T, BN>(part[mi], smem_desc(sa_s + mi * 64 * BK + ks * 32, 16, 1024),
                             smem_desc(sb_s + ks * 32, 16, 1024), ks > 0 || kt > g0);
          wgmma_commit();
          turns.pass();
          // The slice before this one has been read: its stage goes back to the producer.
          wgmma_wait<1>();
          if (prev >= 0 && signals) cuda::ptx::mbarrier_arrive(&empty[prev]);
          prev = s;
        }
        // SCALE 2 (a group of one slice): the slice's scales of the thread's rows, and of the (at most
        // two) column blocks of B the tile spans, read from beside the stage before it is released.
        float rs[MI][2], cs[2];
        if constexpr (SCALE == 2) {
          const float* const ss = sscale + prev * SCALE_STRIDE;
#pragma unroll
          for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int h = 0; h < 2; ++h) rs[mi][h] = ss[acc_row(cw * ROWS + mi * 64) + 8 * h];
          cs[0] = ss[BM];
          cs[1] = ss[BM + 1];
        }
        wgmma_wait<0>();
        if (signals) cuda::ptx::mbarrier_arrive(&empty[prev]);
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
          for (int j = 0; j < BN / 8; ++j) {
            if constexpr (SCALE == 2) {
              // 8-column blocks never straddle a 128-column block of B's scales.
              const float bs = ((n0 + 8 * j) / 128 == n0 / 128) ? cs[0] : cs[1];
              const float s0 = rs[mi][0] * bs, s1 = rs[mi][1] * bs;
              acc[mi][4 * j] = fmaf(part[mi][4 * j], s0, acc[mi][4 * j]);
              acc[mi][4 * j + 1] = fmaf(part[mi][4 * j + 1], s0, acc[mi][4 * j + 1]);
              acc[mi][4 * j + 2] = fmaf(part[mi][4 * j + 2], s1, acc[mi][4 * j + 2]);
              acc[mi][4 * j + 3] = fmaf(part[mi][4 * j + 3], s1, acc[mi][4 * j + 3]);
            } else {
#pragma unroll
              for (int e = 0; e < 4; ++e) acc[mi][4 * j + e] += part[mi][4 * j + e];
            }
          }
      }
      if constexpr (SCALE != 2) {
        // Per tensor: one factor; per row: A's rows' and B's columns' (past m or n: never stored).
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
          const long long row = acc_row(m0 + mi * 64);
          const float r0 = SCALE == 0 ? __ldg(sa) * __ldg(sb) : (row < m ? __ldg(sa + row) : 0.0f);
          const float r1 = SCALE == 0 ? r0 : (row + 8 < m ? __ldg(sa + row + 8) : 0.0f);
#pragma unroll
          for (int j = 0; j < BN / 8; ++j) {
            const long long col = n0 + 8 * j + 2 * (lane % 4);
            const float c0 = SCALE == 0 ? 1.0f : (col < n ? __ldg(sb + col) : 0.0f);
            const float c1 = SCALE == 0 ? 1.0f : (col + 1 < n ? __ldg(sb + col + 1) : 0.0f);
            acc[mi][4 * j] *= r0 * c0;
            acc[mi][4 * j + 1] *= r0 * c1;
            acc[mi][4 * j + 2] *= r1 * c0;
            acc[mi][4 * j + 3] *= r1 * c1;
          }
        }
      }
      if constexpr (EPI == 0) {
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) store_acc<BN>(c, acc[mi], m0 + mi * 64, n0, m, n);
      } else {
        store_tile_tma<BN, ROWS, MI, __nv_bfloat16>(&tc, base + STAGES * STAGE_BYTES + cw * ROWS * BN * 2, acc,
                                                    static_cast<int>(m0), static_cast<int>(n0), cw);
      }
    }
    turns.finish();
    if (EPI == 1 && tid % 128 == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>());
  }
  (void)c;
  (void)scale;
}
