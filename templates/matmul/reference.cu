// Correctness reference: C = A * B in double precision, 16 x 16 tiles staged in shared memory
// (about 3 ms at 2048^3 on an H200). Output buffers of the problem arrive here as double*. Beside
// each element it writes the magnitude of its sum, (|A| |B|)_ij: the scale of any rounding error a
// correct kernel's accumulation can make in that element (problem.yaml's mtol). trans_b 1: B is
// stored n x k (column-major k x n).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ inline double to_double(float v) { return v; }
__device__ inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }
__device__ inline double to_double(__half v) { return static_cast<double>(__half2float(v)); }

template <typename T>
__global__ void matmul_reference(const T* __restrict__ a, const T* __restrict__ b, double* __restrict__ c,
                                 double* __restrict__ c_mag, long long m, long long n, long long k, long long trans_b) {
  __shared__ double as[16][16];
  __shared__ double bs[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long row = static_cast<long long>(blockIdx.y) * 16 + ty;
  const long long col = static_cast<long long>(blockIdx.x) * 16 + tx;
  double acc = 0.0, mag = 0.0;
  for (long long k0 = 0; k0 < k; k0 += 16) {
    as[ty][tx] = (row < m && k0 + tx < k) ? to_double(a[row * k + k0 + tx]) : 0.0;
    if (trans_b) {
      // Threads along k read consecutive elements of B's n x k rows.
      const long long bc = static_cast<long long>(blockIdx.x) * 16 + ty;
      bs[tx][ty] = (k0 + tx < k && bc < n) ? to_double(b[bc * k + k0 + tx]) : 0.0;
    } else {
      bs[ty][tx] = (k0 + ty < k && col < n) ? to_double(b[(k0 + ty) * n + col]) : 0.0;
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < 16; ++q) {
      acc = fma(as[ty][q], bs[q][tx], acc);
      mag = fma(fabs(as[ty][q]), fabs(bs[q][tx]), mag);
    }
    __syncthreads();
  }
  if (row < m && col < n) {
    c[row * n + col] = acc;
    c_mag[row * n + col] = mag;
  }
}
