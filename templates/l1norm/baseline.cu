// The baseline whose time is T_ref: x.abs().sum() as eager PyTorch runs it, unfused: abs into a
// temporary in the tensor dtype, then a sum in two kernels, per-block partials (f32) and one block
// that sums them. Simple one-element-per-thread loads, as a generic path would be without
// vectorization.
#include <cuda_bf16.h>

__device__ inline float ld(const float* p, long long i) { return p[i]; }
__device__ inline float ld(const __nv_bfloat16* p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float* p, long long i, float v) { p[i] = v; }
__device__ inline void st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }

// The partial count: one per 256 elements, at most 1024 (problem.yaml's grid of sum_partials).
__device__ inline long long partial_count(long long n) { return min((n + 255) / 256, 1024LL); }

// Shared-memory tree over a block of BLOCK threads; the sum lands in s[0].
template <int BLOCK>
__device__ inline float block_sum(float v, float* s) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = BLOCK / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  return s[0];
}

template <typename T>
__global__ void op_abs(const T* a, T* out, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  st(out, i, fabsf(ld(a, i)));
}

// 256 threads per block, partial_count(n) blocks, grid-stride.
template <typename T>
__global__ void sum_partials(const T* a, float* parts, long long n) {
  __shared__ float s[256];
  float acc = 0;
  for (long long i = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x; i < n; i += static_cast<long long>(gridDim.x) * 256)
    acc += ld(a, i);
  const float total = block_sum<256>(acc, s);
  if (threadIdx.x == 0) parts[blockIdx.x] = total;
}

// One block of 1024 threads.
template <typename T>
__global__ void sum_final(const float* parts, T* y, long long n) {
  __shared__ float s[1024];
  const long long count = partial_count(n);
  const float total = block_sum<1024>(threadIdx.x < count ? parts[threadIdx.x] : 0.0f, s);
  if (threadIdx.x == 0) st(y, 0, total);
}
