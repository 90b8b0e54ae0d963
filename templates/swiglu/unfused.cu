// The unfused pair as a rival of the fused kernel: matmul's wgmma_ws (tuned like it) writes
// gu = x w^T (m x 2n in the input type: the gate's columns, then the up's) to scratch, then
// silu_and_mul reads it back and writes h. Where holding each gate beside its up slows the fused
// kernel more than the second pass costs, this wins and export picks it for the shape.
#include "../matmul/wgmma_ws.cu"

#include "silu_and_mul.cuh"

template <typename T, int BM, int BN, int STAGES, int CM, int GROUP, int EPI>
__global__ void __launch_bounds__(384, 1)
    swiglu_unfused_gemm(const __grid_constant__ wgmma_ws_detail::TmaMap tx, const __grid_constant__ wgmma_ws_detail::TmaMap tw,
                        const __grid_constant__ wgmma_ws_detail::TmaMap tgu, T* __restrict__ gu, long long m, long long n,
                        long long k) {
  wgmma_ws_tiles<T, BM, BN, STAGES, CM, GROUP, EPI, 1>(tx, tw, tgu, gu, m, 2 * n, k, gemm_epi::NoEpilogue{});
}
