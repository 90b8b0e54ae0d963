// The epilogue as its own elementwise kernel, after a GEMM has written C: the unfused pair's second
// launch (baseline.cu). Include after
// <cuda_bf16.h>, <cuda_fp16.h> and common/gemm_epilogue.cuh.
#pragma once

__device__ inline void epi_st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ inline void epi_st(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

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
      for (int i = 0; i < 8; ++i) epi_st(e, i, epi(gemm_epi::to_float(e[i]), row, col + i));
      *reinterpret_cast<uint4*>(cr + col) = v;
    }
  } else {
    for (long long col = threadIdx.x; col < n; col += blockDim.x) epi_st(cr, col, epi(gemm_epi::to_float(cr[col]), row, col));
  }
}
