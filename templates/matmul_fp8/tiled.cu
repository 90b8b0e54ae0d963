// SIMT tiled scaled FP8 GEMM: the kernel of last resort, legal at every shape. A block computes
// BM x BN of C; each thread TM x TN of it in registers. Tiles of A and B are dequantized once (the
// 8-bit value times its scale, in f32) into shared memory, k-major, so that a thread's TM rows and
// TN columns at one k are contiguous reads.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    matmul_fp8_tiled(const T* __restrict__ a, const T* __restrict__ b, const float* __restrict__ sa,
                     const float* __restrict__ sb, __nv_bfloat16* __restrict__ c, long long m, long long n, long long k,
                     long long scale) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  __shared__ float as[BK][BM];
  __shared__ float bs[BK][BN];
  const int tid = threadIdx.x;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);  // the thread's micro-tile: rows tr * TM.., columns tc * TN..
  const long long n0 = static_cast<long long>(blockIdx.x) * BN, kb = (k + 127) / 128;
  auto a_at = [&](long long row, long long kk) -> float {
    if (row >= m || kk >= k) return 0.0f;
    const float s = scale == 0 ? sa[0] : scale == 1 ? sa[row] : sa[(kk / 128) * m + row];
    return static_cast<float>(a[row * k + kk]) * s;
  };
  auto b_at = [&](long long col, long long kk) -> float {
    if (col >= n || kk >= k) return 0.0f;
    const float s = scale == 0 ? sb[0] : scale == 1 ? sb[col] : sb[(col / 128) * kb + kk / 128];
    return static_cast<float>(b[col * k + kk]) * s;
  };
  // Rows of blocks past the grid's 65535 are taken in turns: any m is served.
  for (long long m0 = static_cast<long long>(blockIdx.y) * BM; m0 < m; m0 += static_cast<long long>(gridDim.y) * BM) {
    float acc[TM][TN] = {};
    for (long long k0 = 0; k0 < k; k0 += BK) {
      // Consecutive threads take consecutive k of a row: the byte loads of a warp share sectors.
      for (int i = tid; i < BM * BK; i += THREADS) as[i % BK][i / BK] = a_at(m0 + i / BK, k0 + i % BK);
      for (int i = tid; i < BN * BK; i += THREADS) bs[i % BK][i / BK] = b_at(n0 + i / BK, k0 + i % BK);
      __syncthreads();
#pragma unroll 4
      for (int kk = 0; kk < BK; ++kk) {
        float x[TM], y[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) x[i] = as[kk][tr * TM + i];
#pragma unroll
        for (int j = 0; j < TN; ++j) y[j] = bs[kk][tc * TN + j];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(x[i], y[j], acc[i][j]);
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const long long row = m0 + tr * TM + i, col = n0 + tc * TN + j;
        if (row < m && col < n) c[row * n + col] = __float2bfloat16_rn(acc[i][j]);
      }
  }
}
