// The row references' pieces (softmax, masked_softmax reference.cu): inputs read as double, and a
// block's sum or max in double through shared memory. Include inside the reference's namespace,
// after <cuda_bf16.h>.

__device__ inline double to_double(float v) { return v; }
__device__ inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

// Sum (MAX = 0) or max (MAX = 1) over the block (a power of two threads, red one double each);
// every thread gets the result.
template <int MAX>
__device__ double block_reduce(double v, double* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = MAX ? fmax(red[threadIdx.x], red[threadIdx.x + s]) : red[threadIdx.x] + red[threadIdx.x + s];
    __syncthreads();
  }
  const double r = red[0];
  __syncthreads();  // before red is written again
  return r;
}
