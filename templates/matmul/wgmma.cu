// C = A * B on Hopper's tensor cores: wgmma (warpgroup MMA, sm_90a) from shared memory that TMA
// fills, 16-bit inputs (bf16 or f16), f32 accumulation, C stored in the input type. A block of two
// warpgroups (256 threads) computes a 128 x BN tile of C, each warpgroup 64 rows of it with one
// wgmma m64nBNk16 per k16 step. k is walked in BK = 64 slices through a STAGES-deep ring: thread 0
// issues each slice's TMA copies (A as 128 rows of 64 k values, B as 64-column chunks of 64 k rows
// in NN, or BN rows of 64 k values in NT), which complete on the stage's mbarrier; every thread waits
// on it, the warpgroups multiply, and after a block-wide barrier the stage read one step earlier
// takes the slice STAGES - 1 ahead. Shared memory uses TMA's 128-byte swizzle, which the wgmma
// descriptors name. TMA zero-fills past m, n and k, and every store of C is guarded; rows must be
// 16-byte aligned (k and n multiples of 8), which the variant's constraints require.
#include <cuda/ptx>
#include <cuda/std/cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace wgmma_detail {

#include "../common/wgmma.cuh"

}  // namespace wgmma_detail

// BN: columns of C per block (the wgmma's N: 128 or 256). STAGES: shared-memory slices in the ring.
// TB: B's layout, the problem's trans_b (compiled in; the argument is not read).
template <typename T, int BN, int STAGES, int TB>
__global__ void __launch_bounds__(256, 1)
    matmul_wgmma(const __grid_constant__ wgmma_detail::TmaMap ta, const __grid_constant__ wgmma_detail::TmaMap tb,
                 T* __restrict__ c, long long m, long long n, long long k, long long trans_b) {
  using namespace wgmma_detail;
  namespace ptx = cuda::ptx;
  static_assert(BN == 128 || BN == 256, "BN: 128 or 256");
  static_assert(STAGES >= 2, "at least two stages");
  constexpr int BM = 128, BK = 64;
  constexpr unsigned A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
  extern __shared__ unsigned char wgmma_smem[];
  __shared__ cuda::std::uint64_t full[STAGES];
  // 128-byte swizzled tiles start on 1024-byte boundaries (the pattern repeats every 8 rows of 128 B).
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(wgmma_smem));
  unsigned char* const base = wgmma_smem + ((1024 - (raw & 1023)) & 1023);
  const unsigned sbase = raw + ((1024 - (raw & 1023)) & 1023);

  const int tid = threadIdx.x, wg = tid / 128;
  const int m0 = static_cast<int>(blockIdx.y) * BM, n0 = static_cast<int>(blockIdx.x) * BN;
  const int kt_count = static_cast<int>((k + BK - 1) / BK);
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // visible to the copy engine
  }
  __syncthreads();

  // Slice kt into its stage: A's 128 x 64 tile, then B's (NN: BN / 64 chunks of 64 k rows x 64
  // columns; NT: BN rows of 64 k values), all completing on the stage's barrier.
  auto issue = [&](int kt) {
    const int s = kt % STAGES;
    unsigned char* const sa = base + s * STAGE_BYTES;
    unsigned char* const sb = sa + A_BYTES;
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s], STAGE_BYTES);
    const int ca[2] = {kt * BK, m0};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, sa, &ta, ca, &full[s]);
    if constexpr (TB) {
      const int cb[2] = {kt * BK, n0};
      ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, sb, &tb, cb, &full[s]);
    } else {
#pragma unroll
      for (int j = 0; j < BN / 64; ++j) {
        const int cb[2] = {n0 + 64 * j, kt * BK};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, sb + j * BK * 128, &tb, cb, &full[s]);
      }
    }
  };
  if (tid == 0)
    for (int kt = 0; kt < STAGES - 1 && kt < kt_count; ++kt) issue(kt);

  float d[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
  for (int kt = 0; kt < kt_count; ++kt) {
    const int s = kt % STAGES;
    while (!ptx::mbarrier_try_wait_parity(&full[s], static_cast<unsigned>((kt / STAGES) & 1))) {
    }
    const unsigned sa = sbase + s * STAGE_BYTES + wg * 64 * 128, sb = sbase + s * STAGE_BYTES + A_BYTES;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      // A, K-major: 8-row groups 1024 B apart; a k16 step is 32 bytes along the 128-byte rows.
      const unsigned long long da = smem_desc(sa + ks * 32, 16, 1024);
      // B, NT (K-major) like A; NN (MN-major): 64-column chunks BK * 128 B apart, 8-k-row groups
      // 1024 B apart, a k16 step 16 rows of 128 B.
      const unsigned long long db = TB ? smem_desc(sb + ks * 32, 16, 1024) : smem_desc(sb + ks * 16 * 128, BK * 128, 1024);
      mma<T, BN, TB>(d, da, db);
    }
    wgmma_commit();
    // This slice's wgmmas may still run; the one before is done, in both warpgroups after the
    // barrier, so its stage takes the slice STAGES - 1 ahead.
    wgmma_wait<1>();
    __syncthreads();
    if (tid == 0 && kt + STAGES - 1 < kt_count) issue(kt + STAGES - 1);
  }
  wgmma_wait<0>();

  store_acc<BN>(c, d, m0 + wg * 64, n0, m, n);
  (void)trans_b;
}
