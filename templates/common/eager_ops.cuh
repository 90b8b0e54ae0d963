// The norms' eager baselines (LayerNorm, RMSNorm, add_rmsnorm baseline.cu): one kernel per operation, every
// intermediate stored in the tensor dtype, as eager PyTorch runs the written formula. Row means are
// a block per row accumulating in f32, as PyTorch's reductions do; the elementwise kernels are
// simple, one element per thread.
// Include after <cuda_bf16.h>.

__device__ inline float ld(const float* p, long long i) { return p[i]; }
__device__ inline float ld(const __nv_bfloat16* p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float* p, long long i, float v) { p[i] = v; }
__device__ inline void st(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }

#define SOLTUNE_INDEX(n)                                                               \
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; \
  if (i >= (n)) return;

// out[row] = mean of a[row, :]; a block of 256 threads per row.
template <typename T>
__global__ void op_row_mean(const T* a, T* out, long long rows, long long cols) {
  __shared__ float red[256];
  const long long row = blockIdx.x;
  float s = 0;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) s += ld(a, row * cols + c);
  red[threadIdx.x] = s;
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) {
    if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) st(out, row, red[0] / static_cast<float>(cols));
}

// Row and column broadcasts: a block per row striding over its columns, so that no thread
// divides by cols (a 64-bit division per element would make these kernels compute-bound).
#define SOLTUNE_ROW_LOOP                          \
  const long long row = blockIdx.x;               \
  if (row >= rows) return;                        \
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)

template <typename T>
__global__ void op_sub_row(const T* a, const T* r, T* out, long long rows, long long cols) {
  SOLTUNE_ROW_LOOP st(out, row * cols + c, ld(a, row * cols + c) - ld(r, row));
}

template <typename T>
__global__ void op_add(const T* a, const T* b, T* out, long long rows, long long cols) {
  SOLTUNE_INDEX(rows * cols)
  st(out, i, ld(a, i) + ld(b, i));
}

template <typename T>
__global__ void op_mul(const T* a, const T* b, T* out, long long rows, long long cols) {
  SOLTUNE_INDEX(rows * cols)
  st(out, i, ld(a, i) * ld(b, i));
}

template <typename T>
__global__ void op_add_scalar(const T* a, T* out, long long n, float s) {
  SOLTUNE_INDEX(n)
  st(out, i, ld(a, i) + s);
}

template <typename T>
__global__ void op_rsqrt(const T* a, T* out, long long n) {
  SOLTUNE_INDEX(n)
  st(out, i, rsqrtf(ld(a, i)));
}

template <typename T>
__global__ void op_mul_row(const T* a, const T* r, T* out, long long rows, long long cols) {
  SOLTUNE_ROW_LOOP st(out, row * cols + c, ld(a, row * cols + c) * ld(r, row));
}

template <typename T>
__global__ void op_mul_col(const T* a, const T* w, T* out, long long rows, long long cols) {
  SOLTUNE_ROW_LOOP st(out, row * cols + c, ld(a, row * cols + c) * ld(w, c));
}

template <typename T>
__global__ void op_add_col(const T* a, const T* w, T* out, long long rows, long long cols) {
  SOLTUNE_ROW_LOOP st(out, row * cols + c, ld(a, row * cols + c) + ld(w, c));
}
