// matmul's wgmma_ws (warp-specialised TMA + wgmma, sm_90a) with the epilogue applied to the
// consumers' accumulators before C is stored, from registers (EPI 0) or through shared memory and
// TMA (EPI 1): the bias and R are read once, where each element of C is made.
#include "../matmul/wgmma_ws.cu"

// ACT: the activation (common/gemm_epilogue.cuh); the other parameters are wgmma_ws's.
template <typename T, int BM, int BN, int STAGES, int CM, int GROUP, int EPI, int TB, int ACT>
__global__ void __launch_bounds__(384, 1)
    matmul_epilogue_wgmma_ws(const __grid_constant__ wgmma_ws_detail::TmaMap ta,
                             const __grid_constant__ wgmma_ws_detail::TmaMap tb,
                             const __grid_constant__ wgmma_ws_detail::TmaMap tc, T* __restrict__ c,
                             const T* __restrict__ bias, const T* __restrict__ r, float alpha, float beta, long long m,
                             long long n, long long k, long long trans_b) {
  wgmma_ws_tiles<T, BM, BN, STAGES, CM, GROUP, EPI, TB>(ta, tb, tc, c, m, n, k,
                                                        gemm_epi::BiasActResidual<T, ACT>{bias, r, n, alpha, beta});
  (void)trans_b;
}
