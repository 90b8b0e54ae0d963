// The baseline whose time is T_ref where no library serves: what a first attempt at a scaled FP8
// GEMM looks like. One thread per output element walks its rows of A and B straight from global
// memory, dequantizing each value with its scale, accumulating in f32.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

template <typename T>
__global__ void matmul_fp8_naive(const T* a, const T* b, const float* sa, const float* sb, __nv_bfloat16* c,
                                 long long m, long long n, long long k, long long scale) {
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  const long long kb = (k + 127) / 128;
  float acc = 0.0f;
  for (long long i = 0; i < k; ++i) {
    const float x = scale == 0 ? sa[0] : scale == 1 ? sa[row] : sa[(i / 128) * m + row];
    const float y = scale == 0 ? sb[0] : scale == 1 ? sb[col] : sb[(col / 128) * kb + i / 128];
    acc += (static_cast<float>(a[row * k + i]) * x) * (static_cast<float>(b[col * k + i]) * y);
  }
  c[row * n + col] = __float2bfloat16_rn(acc);
}
