// Correctness reference: C = act(alpha A B + bias) + beta R in double precision from the exact
// product (templates/common/gemm_reference.cuh), and beside each element the scale of the errors a
// correct f32 kernel can make in it: the accumulation's, at most mtol (|A| |B|)_ij, scaled by |alpha|
// and the activation's largest slope; the f32 additions' and the activation's few ulps, relative to
// |bias_j| and |beta R_ij|.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_epilogue.cuh"
#include "../common/gemm_reference.cuh"

template <typename T, int ACT>
struct EpilogueStore {
  const T* bias;
  const T* r;
  double alpha, beta;
  __device__ void operator()(double* c, double* c_mag, long long row, long long col, long long n, double v,
                             double mag) const {
    const double bj = gemm_ref::stored(bias[col]), rij = beta * gemm_ref::stored(r[row * n + col]);
    c[row * n + col] = gemm_epi::activation<ACT>(alpha * v + bj) + rij;
    c_mag[row * n + col] = gemm_epi::activation_slope<ACT>() * (fabs(alpha) * mag + fabs(bj)) + fabs(rij);
  }
};

template <typename T, int ACT>
__global__ void __launch_bounds__(gemm_ref::THREADS, 2)
    matmul_epilogue_reference(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ bias,
                              const T* __restrict__ r, double* __restrict__ c, double* __restrict__ c_mag, float alpha,
                              float beta, long long m, long long n, long long k, long long trans_b) {
  gemm_reference(PlainOperands<T>{{a, b, trans_b != 0}}, c, c_mag, m, n, k, EpilogueStore<T, ACT>{bias, r, alpha, beta});
}
