// Correctness reference: h = x + r rounded to T (as the kernels store it and PyTorch computes it), y =
// RMSNorm(h) * weight in double, s = max(amax, 1e-10) / 448 per 1 x 128 block or per row, and q = y /
// s unrounded: the band holds e4m3's rounding. One block of 256 threads per row; outputs as double*.
#include <cuda_bf16.h>

__device__ inline double to_double(float v) { return v; }
__device__ inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }
__device__ inline float round_to(float v, float*) { return v; }
__device__ inline float round_to(float v, __nv_bfloat16*) { return __bfloat162float(__float2bfloat16_rn(v)); }

template <typename T>
__global__ void __launch_bounds__(256) add_rmsnorm_fp8_reference(const T* __restrict__ x, const T* __restrict__ r,
                                                                 const T* __restrict__ weight, double* __restrict__ h,
                                                                 double* __restrict__ q, double* __restrict__ s,
                                                                 long long rows, long long cols, float eps, long long scale) {
  __shared__ double red[256];
  const long long row = blockIdx.x;
  if (row >= rows) return;
  const long long base = row * cols;
  double sq = 0;
  for (long long c = threadIdx.x; c < cols; c += 256) {
    // The sum in f32, then rounded to T: what the kernels store (exact for f32 inputs up to f32's rounding).
    const double v = round_to(static_cast<float>(x[base + c]) + static_cast<float>(r[base + c]), static_cast<T*>(nullptr));
    h[base + c] = v;
    sq += v * v;
  }
  red[threadIdx.x] = sq;
  __syncthreads();
  for (int st = 128; st > 0; st >>= 1) {
    if (threadIdx.x < st) red[threadIdx.x] += red[threadIdx.x + st];
    __syncthreads();
  }
  const double rstd = 1.0 / sqrt(red[0] / static_cast<double>(cols) + static_cast<double>(eps));
  __syncthreads();
  // Scales: a block of 128 columns (or the whole row) at a time, its maximum over the threads.
  const long long span = scale == 1 ? cols : 128, spans = (cols + span - 1) / span;
  for (long long b = 0; b < spans; ++b) {
    double amax = 0;
    for (long long c = b * span + threadIdx.x; c < min(cols, (b + 1) * span); c += 256)
      amax = fmax(amax, fabs(h[base + c] * rstd * to_double(weight[c])));
    red[threadIdx.x] = amax;
    __syncthreads();
    for (int st = 128; st > 0; st >>= 1) {
      if (threadIdx.x < st) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + st]);
      __syncthreads();
    }
    const double sc = fmax(red[0], 1e-10) / 448.0;
    __syncthreads();
    if (threadIdx.x == 0) s[scale == 1 ? row : b * rows + row] = sc;
    for (long long c = b * span + threadIdx.x; c < min(cols, (b + 1) * span); c += 256)
      q[base + c] = h[base + c] * rstd * to_double(weight[c]) / sc;
  }
}
