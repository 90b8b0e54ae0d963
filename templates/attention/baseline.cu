// The unfused attention PyTorch's math path runs: the scores S = Q K^T / sqrt(d) materialised in the
// input type, a softmax over each row of S (in f32, written back as the probabilities), then O = P V.
// The products are one plain 16 x 16 shared-memory tiled kernel.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/softmax_math.cuh"

__device__ __forceinline__ float base_f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float base_f(__half x) { return __half2float(x); }
template <typename T> __device__ __forceinline__ T base_t(float x);
template <> __device__ __forceinline__ __nv_bfloat16 base_t<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ __half base_t<__half>(float x) { return __float2half_rn(x); }

// c[bh] = a[bh] b[kv] for one head bh (kv its key/value head): a is m x kk, b kk x n (B_T: stored
// n x kk), c m x n, all row-major; a 16 x 16 tile of c per block. S = Q K^T (B_T, scaled by
// 1 / sqrt(kk), SCALE) and O = P V are both this product.
template <typename T, int B_T, int SCALE>
__global__ void attention_product(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, long long h,
                                  long long h_kv, long long m, long long n, long long kk) {
  __shared__ float at[16][17], bt[16][17];  // at[row][t], bt[t][col]
  const long long bh = blockIdx.z, kv = (bh / h) * h_kv + (bh % h) / (h / h_kv);
  const long long i = static_cast<long long>(blockIdx.y) * 16 + threadIdx.y;
  const long long j = static_cast<long long>(blockIdx.x) * 16 + threadIdx.x;
  // B_T: this thread loads b's row jl (the tile's first column + ty) at t0 + tx; else row t0 + ty at column j.
  const long long jl = static_cast<long long>(blockIdx.x) * 16 + threadIdx.y;
  float acc = 0;
  for (long long t0 = 0; t0 < kk; t0 += 16) {
    const long long ta = t0 + threadIdx.x, tb = t0 + threadIdx.y;
    at[threadIdx.y][threadIdx.x] = i < m && ta < kk ? base_f(a[(bh * m + i) * kk + ta]) : 0.f;
    if (B_T) bt[threadIdx.x][threadIdx.y] = jl < n && ta < kk ? base_f(b[(kv * n + jl) * kk + ta]) : 0.f;
    else bt[threadIdx.y][threadIdx.x] = tb < kk && j < n ? base_f(b[(kv * kk + tb) * n + j]) : 0.f;
    __syncthreads();
    for (int t = 0; t < 16; ++t) acc += at[threadIdx.y][t] * bt[t][threadIdx.x];
    __syncthreads();
  }
  if (i < m && j < n) c[(bh * m + i) * n + j] = base_t<T>(SCALE ? acc * rsqrtf(static_cast<float>(kk)) : acc);
}

__device__ __forceinline__ float block_reduce(float x, bool is_max) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) {
    const float y = __shfl_xor_sync(0xffffffffu, x, o);
    x = is_max ? fmaxf(x, y) : x + y;
  }
  __syncthreads();  // part[] may still be read by the previous reduction
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = x;
  __syncthreads();
  x = part[0];
  for (unsigned w = 1; w < blockDim.x / 32; ++w) x = is_max ? fmaxf(x, part[w]) : x + part[w];
  return x;
}

// One row of S per block: the probabilities over the keys the mask keeps (0 past them), and the
// row's log-sum-exp.
template <typename T>
__global__ void attention_softmax(T* __restrict__ s, float* __restrict__ lse, long long s_q, long long s_k,
                                  long long causal, long long d) {
  (void)d;
  const long long i = blockIdx.x, bh = blockIdx.y;
  T* row = s + (bh * s_q + i) * s_k;
  const long long seen = causal ? min(s_k, i + s_k - s_q + 1) : s_k;
  float mx = neg_inf();
  for (long long j = threadIdx.x; j < seen; j += blockDim.x) mx = fmaxf(mx, base_f(row[j]));
  mx = block_reduce(mx, true);
  float sum = 0;
  for (long long j = threadIdx.x; j < seen; j += blockDim.x) sum += expf(base_f(row[j]) - mx);
  sum = block_reduce(sum, false);
  for (long long j = threadIdx.x; j < s_k; j += blockDim.x)
    row[j] = base_t<T>(j < seen ? expf(base_f(row[j]) - mx) / sum : 0.f);
  if (threadIdx.x == 0) lse[bh * s_q + i] = mx + logf(sum);
}
