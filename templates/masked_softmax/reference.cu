// Correctness reference: each row's softmax of x * scale in double precision, keys past a causal
// query's position at -inf; a block of 256 threads per row, reductions in double through shared
// memory. The output arrives here as double*.
#include <cuda_bf16.h>

namespace masked_softmax_reference_detail {

#include "../common/double_reduce.cuh"

}  // namespace masked_softmax_reference_detail

// blockDim.x must be a power of two (the problem launches 256). A causal row keeps keys 0 to
// i + s_k - s_q for query i (s_q <= s_k: at least one).
template <typename T>
__global__ void __launch_bounds__(256) masked_softmax_reference(const T* __restrict__ x, double* __restrict__ y, long long heads,
                                                                long long s_q, long long s_k, float scale, long long causal) {
  using namespace masked_softmax_reference_detail;
  __shared__ double red[256];
  const long long row = blockIdx.x;
  if (row >= heads * s_q) return;  // block-uniform: no barrier is skipped by part of a block
  const long long last = causal ? row % s_q + s_k - s_q : s_k - 1;
  const T* xr = x + row * s_k;
  double* yr = y + row * s_k;
  const double sc = scale;
  double m = -__longlong_as_double(0x7ff0000000000000LL);
  for (long long c = threadIdx.x; c <= last; c += blockDim.x) m = fmax(m, to_double(xr[c]) * sc);
  m = block_reduce<1>(m, red);
  double s = 0;
  for (long long c = threadIdx.x; c < s_k; c += blockDim.x) {
    const double e = c <= last ? exp(to_double(xr[c]) * sc - m) : 0.0;
    yr[c] = e;  // read back below by this same thread
    s += e;
  }
  s = block_reduce<0>(s, red);
  for (long long c = threadIdx.x; c < s_k; c += blockDim.x) yr[c] /= s;
}
