// The unfused pair whose time is T_ref: a GEMM (cuBLAS where the library serves, else the naive
// kernel below: one thread per output element from global memory, f32 accumulation) writes C, then
// epilogue_apply reads it back with the bias and R and writes the result.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_epilogue.cuh"

__device__ inline void st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ inline void st(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

template <typename T>
__global__ void matmul_naive(const T* a, const T* b, T* c, long long m, long long n, long long k, long long trans_b) {
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  if (trans_b)
    for (long long i = 0; i < k; ++i) acc += gemm_epi::to_float(a[row * k + i]) * gemm_epi::to_float(b[col * k + i]);
  else
    for (long long i = 0; i < k; ++i) acc += gemm_epi::to_float(a[row * k + i]) * gemm_epi::to_float(b[i * n + col]);
  st(c, row * n + col, acc);
}

// A block per row of C (no division per element), 8 columns a thread by 16-byte accesses where the
// rows allow them, as PyTorch's vectorised elementwise kernels move them.
template <typename T, int ACT>
__global__ void epilogue_apply(T* c, const T* bias, const T* r, float alpha, float beta, long long m, long long n) {
  const long long row = blockIdx.x;
  if (row >= m) return;
  const gemm_epi::BiasActResidual<T, ACT> epi{bias, r, n, alpha, beta};
  T* const cr = c + row * n;
  if (n % 8 == 0) {
    for (long long col = 8 * threadIdx.x; col < n; col += 8 * blockDim.x) {
      uint4 v = *reinterpret_cast<const uint4*>(cr + col);
      T* e = reinterpret_cast<T*>(&v);
#pragma unroll
      for (int i = 0; i < 8; ++i) st(e, i, epi(gemm_epi::to_float(e[i]), row, col + i));
      *reinterpret_cast<uint4*>(cr + col) = v;
    }
  } else {
    for (long long col = threadIdx.x; col < n; col += blockDim.x) st(cr, col, epi(gemm_epi::to_float(cr[col]), row, col));
  }
}
