// The baseline whose time is T_ref: GELU as eager PyTorch runs the written formula, one kernel per
// elementary operation, each reading and writing its operands in the tensor dtype (so bf16 rounds
// after every step, as it does there). Simple one-element-per-thread kernels, as a framework's
// generic elementwise path would be without vectorization.
#include <cuda_bf16.h>

__device__ inline float ld(const float* p, long long i) { return p[i]; }
__device__ inline float ld(const __nv_bfloat16* p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float* p, long long i, float v) { p[i] = v; }
__device__ inline void st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }

#define SOLTUNE_INDEX                                                    \
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; \
  if (i >= n) return;

template <typename T>
__global__ void op_cube(const T* a, T* out, long long n) {
  SOLTUNE_INDEX
  const float v = ld(a, i);
  st(out, i, v * v * v);
}

// K selects the constant: 0 -> 0.044715, 1 -> sqrt(2/pi), 2 -> 0.5.
template <typename T, int K>
__global__ void op_scale(const T* a, T* out, long long n) {
  SOLTUNE_INDEX
  const float c = K == 0 ? 0.044715f : (K == 1 ? 0.7978845608028654f : 0.5f);
  st(out, i, c * ld(a, i));
}

template <typename T>
__global__ void op_add(const T* a, const T* b, T* out, long long n) {
  SOLTUNE_INDEX
  st(out, i, ld(a, i) + ld(b, i));
}

template <typename T>
__global__ void op_tanh(const T* a, T* out, long long n) {
  SOLTUNE_INDEX
  st(out, i, tanhf(ld(a, i)));
}

template <typename T>
__global__ void op_add_one(const T* a, T* out, long long n) {
  SOLTUNE_INDEX
  st(out, i, 1.0f + ld(a, i));
}

template <typename T>
__global__ void op_mul(const T* a, const T* b, T* out, long long n) {
  SOLTUNE_INDEX
  st(out, i, ld(a, i) * ld(b, i));
}
