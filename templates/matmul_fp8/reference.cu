// Correctness reference: C = (sa A)(sb B)^T in double precision, with the magnitude of each
// element's sum beside it (templates/common/gemm_reference.cuh). An 8-bit value times its f32 scale
// is exact in double (4 + 24 significant bits), and so is every product of two of them.
#include <cuda_fp8.h>

#include "../common/gemm_reference.cuh"

template <typename T>
struct ScaledOperands : GemmOperandsOf<T> {  // trans_b: B is n x k, always
  const float* sa;
  const float* sb;
  long long scale, kblocks, m;  // the scales' granularity (problem.yaml), cdiv(k, 128), A's rows
  __device__ double a_value(T v, long long row, long long kk) const {
    const float s = scale == 0 ? sa[0] : scale == 1 ? sa[row] : sa[(kk / 128) * m + row];
    return static_cast<double>(static_cast<float>(v)) * s;
  }
  __device__ double b_value(T v, long long col, long long kk) const {
    const float s = scale == 0 ? sb[0] : scale == 1 ? sb[col] : sb[(col / 128) * kblocks + kk / 128];
    return static_cast<double>(static_cast<float>(v)) * s;
  }
};

template <typename T>
__global__ void __launch_bounds__(gemm_ref::THREADS, 2)
    matmul_fp8_reference(const T* __restrict__ a, const T* __restrict__ b, const float* __restrict__ sa,
                         const float* __restrict__ sb, double* __restrict__ c, double* __restrict__ c_mag, long long m,
                         long long n, long long k, long long scale) {
  gemm_reference(ScaledOperands<T>{{a, b, true}, sa, sb, scale, (k + 127) / 128, m}, c, c_mag, m, n, k);
}
