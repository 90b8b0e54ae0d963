// matmul's wgmma_ws (warp-specialised TMA + wgmma, sm_90a) with the epilogue applied to the
// consumers' accumulators before C is stored. EPI 1 (C through shared memory and TMA): R's tile and
// the bias's columns are loaded by TMA into the consumer's staging while the tile's product runs,
// so the epilogue reads them from shared memory. EPI 0 (C from registers): the bias and R are read
// from global memory where each element of C is made.
#include "../matmul/wgmma_ws.cu"

namespace wgmma_ws_detail {

// The staged epilogue: tr maps R as tc maps C (boxes of 64 columns x ROWS rows, 128-byte swizzle),
// tbias the bias (one box of BN columns); TMA zero-fills past m and n.
template <typename T, int ACT>
struct BiasActResidualStaged {
  static constexpr bool identity = false, pairs = false, staged = true;
  const TmaMap* tr;
  const TmaMap* tbias;
  float alpha, beta;

  // From lane 0 of a consumer: its ROWS x BN tile of R at (row0, col0) into its staging `sr` and the
  // bias's BN columns into `sbias`, completing on `full`, once the staging's last store has read it.
  template <int BN, int ROWS>
  __device__ __forceinline__ void load(unsigned char* sr, T* sbias, cuda::std::uint64_t* full, int row0, int col0) const {
    namespace ptx = cuda::ptx;
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, full, (ROWS + 1) * BN * 2);
#pragma unroll
    for (int j = 0; j < BN / 64; ++j) {
      const int cr[2] = {col0 + 64 * j, row0};
      ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, sr + j * ROWS * 128, tr, cr, full);
    }
    const int cb[1] = {col0};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, sbias, tbias, cb, full);
  }
  __device__ __forceinline__ float operator()(float v, float bias, float r) const {
    return gemm_epi::bias_act_residual<ACT>(v, bias, r, alpha, beta);
  }
};

}  // namespace wgmma_ws_detail

// ACT: the activation (common/gemm_epilogue.cuh); the other parameters are wgmma_ws's. tr and tbias
// are read with EPI 1 only.
template <typename T, int BM, int BN, int STAGES, int CM, int GROUP, int EPI, int TB, int ACT>
__global__ void __launch_bounds__(384, 1)
    matmul_epilogue_wgmma_ws(const __grid_constant__ wgmma_ws_detail::TmaMap ta,
                             const __grid_constant__ wgmma_ws_detail::TmaMap tb,
                             const __grid_constant__ wgmma_ws_detail::TmaMap tc,
                             const __grid_constant__ wgmma_ws_detail::TmaMap tr,
                             const __grid_constant__ wgmma_ws_detail::TmaMap tbias, T* __restrict__ c,
                             const T* __restrict__ bias, const T* __restrict__ r, float alpha, float beta, long long m,
                             long long n, long long k, long long trans_b) {
  if constexpr (EPI == 1)
    wgmma_ws_tiles<T, BM, BN, STAGES, CM, GROUP, EPI, TB>(
        ta, tb, tc, c, m, n, k, wgmma_ws_detail::BiasActResidualStaged<T, ACT>{&tr, &tbias, alpha, beta});
  else
    wgmma_ws_tiles<T, BM, BN, STAGES, CM, GROUP, EPI, TB>(ta, tb, tc, c, m, n, k,
                                                          gemm_epi::BiasActResidual<T, ACT>{bias, r, n, alpha, beta});
  (void)trans_b;
}
