// SwiGLU's gated projection on CUDA cores, legal at every shape and alignment (the problem's
// fallback): a TILE x TILE block of h, each thread one element, x's tile and both weights' tiles
// staged in shared memory k-slice by k-slice, the gate and the up accumulated side by side in f32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_epilogue.cuh"

__device__ inline void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ inline void store(__half* p, float v) { *p = __float2half_rn(v); }

template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE) swiglu_simt(const T* __restrict__ x, const T* __restrict__ w,
                                                            T* __restrict__ h, long long m, long long n, long long k) {
  __shared__ float xs[TILE][TILE + 1], gs[TILE][TILE + 1], us[TILE][TILE + 1];
  const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
  const long long col = static_cast<long long>(blockIdx.x) * TILE + tx;
  const long long wrow = static_cast<long long>(blockIdx.x) * TILE + ty;  // the weights' row this thread loads
  // Rows of tiles gridDim.y apart: a grid's y stops at 65535, m does not.
  for (long long by = blockIdx.y; by * TILE < m; by += gridDim.y) {
    const long long row = by * TILE + ty;
    float gate = 0.0f, up = 0.0f;
    for (long long k0 = 0; k0 < k; k0 += TILE) {
      const long long kk = k0 + tx;
      xs[ty][tx] = row < m && kk < k ? gemm_epi::to_float(x[row * k + kk]) : 0.0f;
      gs[ty][tx] = wrow < n && kk < k ? gemm_epi::to_float(w[wrow * k + kk]) : 0.0f;
      us[ty][tx] = wrow < n && kk < k ? gemm_epi::to_float(w[(n + wrow) * k + kk]) : 0.0f;
      __syncthreads();
#pragma unroll
      for (int q = 0; q < TILE; ++q) {
        gate = fmaf(xs[ty][q], gs[tx][q], gate);
        up = fmaf(xs[ty][q], us[tx][q], up);
      }
      __syncthreads();
    }
    if (row < m && col < n) store(h + row * n + col, gemm_epi::SiluGate{}.pair(gate, up));
  }
}
