// Correctness reference: C = A * B in double precision, with the magnitude of each element's sum
// beside it (templates/common/gemm_reference.cuh). Output buffers of the problem arrive here as
// double*. trans_b 1: B is stored n x k (column-major k x n).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_reference.cuh"

__device__ inline double to_double(float v) { return v; }
__device__ inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }
__device__ inline double to_double(__half v) { return static_cast<double>(__half2float(v)); }

// The operands as they are stored: every 16- and 32-bit value is exact in double.
template <typename T>
struct PlainOperands : GemmOperandsOf<T> {
  __device__ double a_value(T v, long long, long long) const { return to_double(v); }
  __device__ double b_value(T v, long long, long long) const { return to_double(v); }
};

template <typename T>
__global__ void __launch_bounds__(gemm_ref::THREADS, 2) matmul_reference(const T* __restrict__ a, const T* __restrict__ b,
                                                                      double* __restrict__ c, double* __restrict__ c_mag,
                                                                      long long m, long long n, long long k, long long trans_b) {
  gemm_reference(PlainOperands<T>{{a, b, trans_b != 0}}, c, c_mag, m, n, k);
}
