// The unfused pair whose time is T_ref: one GEMM of x by the stacked weights into gu (m x 2n: the
// gate's columns, then the up's; cuBLAS where the library serves, else the naive kernel below, one
// thread per element from global memory), then silu_and_mul reads gu back and writes h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_epilogue.cuh"
#include "silu_and_mul.cuh"

template <typename T>
__global__ void swiglu_naive_gemm(const T* x, const T* w, T* gu, long long m, long long n, long long k) {
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= m || col >= 2 * n) return;
  float acc = 0.0f;
  for (long long i = 0; i < k; ++i) acc += gemm_epi::to_float(x[row * k + i]) * gemm_epi::to_float(w[col * k + i]);
  swiglu_st(gu, row * 2 * n + col, acc);
}
