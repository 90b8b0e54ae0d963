// SiLU(gate) * up as its own elementwise kernel, after a GEMM has written gu = x w^T (m x 2n: the
// gate's columns, then the up's): the unfused pair's second launch (baseline.cu, unfused.cu).
// Include after <cuda_bf16.h>, <cuda_fp16.h> and common/gemm_epilogue.cuh.
#pragma once

__device__ inline void swiglu_st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ inline void swiglu_st(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

// A block per row (no division per element), as vLLM's silu_and_mul walks its rows.
template <typename T>
__global__ void silu_and_mul(const T* gu, T* h, long long m, long long n) {
  const long long row = blockIdx.x;
  if (row >= m) return;
  const gemm_epi::SiluGate gate;
  for (long long col = threadIdx.x; col < n; col += blockDim.x)
    swiglu_st(h, row * n + col,
              gate.pair(gemm_epi::to_float(gu[row * 2 * n + col]), gemm_epi::to_float(gu[row * 2 * n + n + col])));
}
