// A GEMM's epilogue, C = act(alpha acc + bias[col]) + beta R[row][col], applied to each f32
// accumulator before it is stored (templates/matmul_epilogue), and the activations in double for its
// reference. The GEMM templates call epi(v, row, col) per element of C; NoEpilogue leaves the plain
// product's code as it was (its `identity` skips the call).
// ACT: 0 none, 1 ReLU, 2 GELU (tanh form), 3 GELU (erf), 4 SiLU. The f32 forms use the accurate
// tanhf, erff and expf: an activation's own error then stays within a few ulps of its input, which
// the reference's magnitude covers.
// Include after <cuda_bf16.h> and <cuda_fp16.h>.
#pragma once

namespace gemm_epi {

__device__ __forceinline__ float math_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double math_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float math_erf(float x) { return erff(x); }
__device__ __forceinline__ double math_erf(double x) { return erf(x); }
__device__ __forceinline__ float math_exp(float x) { return expf(x); }
__device__ __forceinline__ double math_exp(double x) { return exp(x); }

// Past f32's range x^3 is inf and tanh(inf) 1: GELU(x) is then x, or 0 for x below zero, as in double.
template <int ACT, typename F>
__device__ __forceinline__ F activation(F x) {
  static_assert(ACT >= 0 && ACT <= 4, "ACT: 0 none, 1 ReLU, 2 GELU (tanh), 3 GELU (erf), 4 SiLU");
  if constexpr (ACT == 1) return x > F(0) ? x : F(0);
  if constexpr (ACT == 2) {
    const F u = F(0.7978845608028654) * (x + F(0.044715) * x * x * x);
    return F(0.5) * x * (F(1) + math_tanh(u));
  }
  if constexpr (ACT == 3) return F(0.5) * x * (F(1) + math_erf(x * F(0.7071067811865476)));
  if constexpr (ACT == 4) return x / (F(1) + math_exp(-x));
  return x;
}

// The largest slope of each activation (GELU's 1.129 at x = 1.5 in both forms, SiLU's 1.0998 at
// 2.4): an error in its input grows by at most this much.
template <int ACT>
__host__ __device__ constexpr double activation_slope() {
  return ACT == 2 || ACT == 3 ? 1.13 : ACT == 4 ? 1.1 : 1.0;
}

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }

// Each epilogue says whether it is the identity, whether it pairs columns (below), and whether it is
// staged: its sources (R's tile, the bias) loaded by TMA into the consumer's staging of C while
// the tile's product runs (templates/matmul_epilogue/wgmma_ws.cu, C stored by TMA).
struct NoEpilogue {
  static constexpr bool identity = true, pairs = false, staged = false;
  __device__ __forceinline__ float operator()(float v, long long, long long) const { return v; }
};

template <int ACT>
__device__ __forceinline__ float bias_act_residual(float v, float bias, float r, float alpha, float beta) {
  return activation<ACT>(alpha * v + bias) + beta * r;
}

// The bias and R read from global memory where each element of C is made.
template <typename T, int ACT>
struct BiasActResidual {
  static constexpr bool identity = false, pairs = false, staged = false;
  const T* bias;  // n
  const T* r;     // m x n, row-major
  long long n;
  float alpha, beta;
  __device__ __forceinline__ float operator()(float v, long long row, long long col) const {
    return bias_act_residual<ACT>(v, to_float(bias[col]), to_float(r[row * n + col]), alpha, beta);
  }
};

// SwiGLU's gate: the tile's accumulators are pairs of columns (x W_gate^T, x W_up^T), and C is
// SiLU(gate) * up (templates/swiglu). The f32 SiLU with the accurate expf, as ACT 4 above.
struct SiluGate {
  static constexpr bool identity = false, pairs = true, staged = false;
  __device__ __forceinline__ float pair(float gate, float up) const { return activation<4>(gate) * up; }
};

}  // namespace gemm_epi
