// Correctness reference: softmax over each row in double precision, a block of 256 threads per
// row, reductions in double through shared memory. Output buffers arrive here as double*.
#include <cuda_bf16.h>

namespace softmax_reference_detail {

#include "../common/double_reduce.cuh"

}  // namespace softmax_reference_detail

// blockDim.x must be a power of two (the problem launches 256).
template <typename T>
__global__ void __launch_bounds__(256) softmax_reference(const T* __restrict__ x, double* __restrict__ y, long long rows, long long cols) {
  using namespace softmax_reference_detail;
  __shared__ double red[256];
  const long long row = blockIdx.x;
  if (row >= rows) return;  // block-uniform: no barrier is skipped by part of a block
  const T* xr = x + row * cols;
  double* yr = y + row * cols;
  double m = -__longlong_as_double(0x7ff0000000000000LL);
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) m = fmax(m, to_double(xr[c]));
  m = block_reduce<1>(m, red);
  double s = 0;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
    const double e = exp(to_double(xr[c]) - m);
    yr[c] = e;  // read back below by this same thread
    s += e;
  }
  s = block_reduce<0>(s, red);
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) yr[c] /= s;
}
