// The baseline whose time is T_ref: h = x + r and RMSNorm as eager PyTorch runs them (a kernel per
// operation, intermediates in T: ../common/eager_ops.cuh), then the blocks' (or rows') maxima and
// scales, and y / s cast to e4m3.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "../common/eager_ops.cuh"

// s = max(amax, 1e-10) / 448 over a 1 x 128 block (scale 2: block blockIdx.x of row blockIdx.y) or
// a whole row (scale 1); 128 threads.
template <typename T>
__global__ void op_block_scale(const T* y, float* s, long long rows, long long cols, long long scale) {
  __shared__ float red[128];
  const long long row = blockIdx.y, c0 = scale == 1 ? 0 : 128LL * blockIdx.x, c1 = scale == 1 ? cols : min(cols, c0 + 128);
  float amax = 0.f;
  for (long long c = c0 + threadIdx.x; c < c1; c += 128) amax = fmaxf(amax, fabsf(ld(y, row * cols + c)));
  red[threadIdx.x] = amax;
  __syncthreads();
  for (int st = 64; st > 0; st >>= 1) {
    if (threadIdx.x < st) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + st]);
    __syncthreads();
  }
  if (threadIdx.x == 0) s[scale == 1 ? row : blockIdx.x * rows + row] = fmaxf(red[0], 1e-10f) / 448.f;
}

// q = y / s in e4m3 (saturating), one element per thread.
template <typename T>
__global__ void op_quantize(const T* y, const float* s, __nv_fp8_e4m3* q, long long rows, long long cols, long long scale) {
  SOLTUNE_INDEX(rows * cols)
  const long long row = i / cols, c = i % cols;
  q[i] = __nv_fp8_e4m3(ld(y, i) / s[scale == 1 ? row : (c / 128) * rows + row]);
}
