// matmul's SIMT tiled GEMM with the epilogue applied to each accumulator as C is stored: legal at
// every shape and alignment, the problem's fallback.
#include "../matmul/tiled.cu"

// ACT: the activation (common/gemm_epilogue.cuh); the other parameters are tiled's.
template <typename T, int BM, int BN, int BK, int TM, int TN, int VEC, int PAD, int STAGES, int ASYNC, int A_T,
          int SPLIT, int UNROLL, int TB, int ACT>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 1)
    matmul_epilogue_tiled(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, const T* __restrict__ bias,
                          const T* __restrict__ r, float alpha, float beta, long long m, long long n, long long k,
                          long long trans_b) {
  matmul_tiled_body<T, BM, BN, BK, TM, TN, VEC, PAD, STAGES, ASYNC, A_T, SPLIT, UNROLL, TB>(
      a, b, c, m, n, k, gemm_epi::BiasActResidual<T, ACT>{bias, r, n, alpha, beta});
  (void)trans_b;
}
