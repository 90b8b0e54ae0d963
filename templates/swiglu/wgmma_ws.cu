// matmul's wgmma_ws (warp-specialised TMA + wgmma, sm_90a) computing both of SwiGLU's products in
// one tile: B's BN rows are BN / 2 of the gate's and the same BN / 2 of the up's (two TMA boxes of
// the stacked weights), so each consumer thread holds a gate and its up side by side, and stores
// SiLU(gate) * up: BN / 2 columns of h a tile, x's slices read once for both weights.
#include "../matmul/wgmma_ws.cu"

template <typename T, int BM, int BN, int STAGES, int GROUP, int EPI>
__global__ void __launch_bounds__(384, 1)
    swiglu_wgmma_ws(const __grid_constant__ wgmma_ws_detail::TmaMap tx, const __grid_constant__ wgmma_ws_detail::TmaMap tw,
                    const __grid_constant__ wgmma_ws_detail::TmaMap th, T* __restrict__ h, long long m, long long n,
                    long long k) {
  wgmma_ws_tiles<T, BM, BN, STAGES, 1, GROUP, EPI, 1>(tx, tw, th, h, m, n, k, gemm_epi::SiluGate{});
}
