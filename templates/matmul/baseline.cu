// The baseline whose time is T_ref: what a first attempt at a GEMM looks like. One thread per
// output element walks its row of A and column of B straight from global memory (the caches do
// what they can), accumulating in f32. trans_b 1: B is stored n x k (column-major k x n).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ inline float ld(const float* p, long long i) { return p[i]; }
__device__ inline float ld(const __nv_bfloat16* p, long long i) { return __bfloat162float(p[i]); }
__device__ inline float ld(const __half* p, long long i) { return __half2float(p[i]); }
__device__ inline void st(float* p, long long i, float v) { p[i] = v; }
__device__ inline void st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ inline void st(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

template <typename T>
__global__ void matmul_naive(const T* a, const T* b, T* c, long long m, long long n, long long k, long long trans_b) {
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  if (trans_b)
    for (long long i = 0; i < k; ++i) acc += ld(a, row * k + i) * ld(b, col * k + i);
  else
    for (long long i = 0; i < k; ++i) acc += ld(a, row * k + i) * ld(b, i * n + col);
  st(c, row * n + col, acc);
}
