// Correctness reference: C = A * B in double precision, with the magnitude of each element's sum
// beside it (templates/common/gemm_reference.cuh). Output buffers of the problem arrive here as
// double*. trans_b 1: B is stored n x k (column-major k x n).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_reference.cuh"

template <typename T>
__global__ void __launch_bounds__(gemm_ref::THREADS, 2) matmul_reference(const T* __restrict__ a, const T* __restrict__ b,
                                                                      double* __restrict__ c, double* __restrict__ c_mag,
                                                                      long long m, long long n, long long k, long long trans_b) {
  gemm_reference(PlainOperands<T>{{a, b, trans_b != 0}}, c, c_mag, m, n, k);
}
