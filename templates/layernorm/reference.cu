// Correctness reference: LayerNorm in double precision, one block of 256 threads per row, the
// variance from the centred values (two passes). Output buffers arrive here as double*.
#include <cuda_bf16.h>

__device__ inline double to_double(float v) { return v; }
__device__ inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

// Sum over the block's 256 threads; every thread gets the result.
__device__ inline double block_sum_256(double v, double* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const double r = red[0];
  __syncthreads();  // red is reused by the next call
  return r;
}

template <typename T>
__global__ void __launch_bounds__(256) layernorm_reference(const T* __restrict__ x, const T* __restrict__ weight,
                                                           const T* __restrict__ bias, double* __restrict__ y,
                                                           long long rows, long long cols, float eps) {
  __shared__ double red[256];
  const long long row = blockIdx.x;
  if (row >= rows) return;
  const T* xr = x + row * cols;
  double s = 0;
  for (long long c = threadIdx.x; c < cols; c += 256) s += to_double(xr[c]);
  const double mean = block_sum_256(s, red) / static_cast<double>(cols);
  double q = 0;
  for (long long c = threadIdx.x; c < cols; c += 256) {
    const double d = to_double(xr[c]) - mean;
    q += d * d;
  }
  const double var = block_sum_256(q, red) / static_cast<double>(cols);
  const double rstd = 1.0 / sqrt(var + static_cast<double>(eps));
  for (long long c = threadIdx.x; c < cols; c += 256)
    y[row * cols + c] = (to_double(xr[c]) - mean) * rstd * to_double(weight[c]) + to_double(bias[c]);
}
