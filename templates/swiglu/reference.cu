// Correctness reference: gate = x W_gate^T and up = x W_up^T exactly in double (templates/common/
// gemm_reference.cuh, the two products of one tile by the same threads), then h = SiLU(gate) * up,
// and beside each element the scale of the errors a correct f32 kernel can make in it: the
// accumulations' errors, at most mtol of each product's |x| |W|, carried through the gate (SiLU's
// slope is at most 1.1).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_epilogue.cuh"
#include "../common/gemm_reference.cuh"

// The second product's store: the gate and its magnitude, which the first left in h's place, meet
// the up. The same thread wrote that element (gemm_reference's ownership depends on the thread only).
struct GateStore {
  __device__ void operator()(double* h, double* h_mag, long long row, long long col, long long n, double up,
                             double up_mag) const {
    const long long i = row * n + col;
    const double gate = h[i], gate_mag = h_mag[i];
    h[i] = gemm_epi::activation<4>(gate) * up;
    h_mag[i] = gemm_epi::activation_slope<4>() * gate_mag * fabs(up) + fabs(gemm_epi::activation<4>(gate)) * up_mag;
  }
};

template <typename T>
__global__ void __launch_bounds__(gemm_ref::THREADS, 2)
    swiglu_reference(const T* __restrict__ x, const T* __restrict__ w, double* __restrict__ h, double* __restrict__ h_mag,
                     long long m, long long n, long long k) {
  gemm_reference(PlainOperands<T>{{x, w, true}}, h, h_mag, m, n, k);
  gemm_reference(PlainOperands<T>{{x, w + n * k, true}}, h, h_mag, m, n, k, GateStore{});
}
