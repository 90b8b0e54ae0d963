// Correctness reference: GELU (tanh form) in double precision, one element per thread.
// Output buffers of the problem arrive here as double*.
#include <cuda_bf16.h>

__device__ inline double to_double(float v) { return v; }
__device__ inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

template <typename T>
__global__ void gelu_reference(const T* __restrict__ x, double* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double v = to_double(x[i]);
  const double k0 = 0.7978845608028654;  // sqrt(2/pi)
  y[i] = 0.5 * v * (1.0 + tanh(k0 * (v + 0.044715 * v * v * v)));
}
