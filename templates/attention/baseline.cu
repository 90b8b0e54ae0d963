// The unfused attention PyTorch's math path runs: the scores S = Q K^T / sqrt(d) materialised in the
// input type, a softmax over each row of S (in f32, written back as the probabilities), then O = P V.
// The products are plain 16 x 16 shared-memory tiled kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float base_f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float base_f(__half x) { return __half2float(x); }
template <typename T> __device__ __forceinline__ T base_t(float x);
template <> __device__ __forceinline__ __nv_bfloat16 base_t<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ __half base_t<__half>(float x) { return __float2half_rn(x); }

// s[bh][i][j] = q[bh][i] . k[kv][j] / sqrt(d): a 16 x 16 tile of S per block.
template <typename T>
__global__ void attention_scores(const T* __restrict__ q, const T* __restrict__ k, T* __restrict__ s, long long h,
                                 long long h_kv, long long s_q, long long s_k, long long d) {
  __shared__ float qt[16][17], kt[16][17];
  const long long bh = blockIdx.z, kv = (bh / h) * h_kv + (bh % h) / (h / h_kv);
  const long long i = static_cast<long long>(blockIdx.y) * 16 + threadIdx.y;
  const long long j = static_cast<long long>(blockIdx.x) * 16 + threadIdx.x;
  const long long jl = static_cast<long long>(blockIdx.x) * 16 + threadIdx.y;  // the key this thread loads
  float acc = 0;
  for (long long x0 = 0; x0 < d; x0 += 16) {
    const long long x = x0 + threadIdx.x;
    qt[threadIdx.y][threadIdx.x] = i < s_q && x < d ? base_f(q[(bh * s_q + i) * d + x]) : 0.f;
    kt[threadIdx.y][threadIdx.x] = jl < s_k && x < d ? base_f(k[(kv * s_k + jl) * d + x]) : 0.f;
    __syncthreads();
    for (int t = 0; t < 16; ++t) acc += qt[threadIdx.y][t] * kt[threadIdx.x][t];
    __syncthreads();
  }
  if (i < s_q && j < s_k) s[(bh * s_q + i) * s_k + j] = base_t<T>(acc * rsqrtf(static_cast<float>(d)));
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
  float mx = __int_as_float(0xff800000);  // -inf: NVRTC has no INFINITY
  for (long long j = threadIdx.x; j < seen; j += blockDim.x) mx = fmaxf(mx, base_f(row[j]));
  mx = block_reduce(mx, true);
  float sum = 0;
  for (long long j = threadIdx.x; j < seen; j += blockDim.x) sum += expf(base_f(row[j]) - mx);
  sum = block_reduce(sum, false);
  for (long long j = threadIdx.x; j < s_k; j += blockDim.x)
    row[j] = base_t<T>(j < seen ? expf(base_f(row[j]) - mx) / sum : 0.f);
  if (threadIdx.x == 0) lse[bh * s_q + i] = mx + logf(sum);
}

// o[bh][i][x] = sum_j p[bh][i][j] v[kv][j][x]: a 16 x 16 tile of O per block.
template <typename T>
__global__ void attention_pv(const T* __restrict__ p, const T* __restrict__ v, T* __restrict__ o, long long h,
                             long long h_kv, long long s_q, long long s_k, long long d) {
  __shared__ float pt[16][17], vt[16][17];
  const long long bh = blockIdx.z, kv = (bh / h) * h_kv + (bh % h) / (h / h_kv);
  const long long i = static_cast<long long>(blockIdx.y) * 16 + threadIdx.y;
  const long long x = static_cast<long long>(blockIdx.x) * 16 + threadIdx.x;
  float acc = 0;
  for (long long j0 = 0; j0 < s_k; j0 += 16) {
    const long long jp = j0 + threadIdx.x, jv = j0 + threadIdx.y;
    pt[threadIdx.y][threadIdx.x] = i < s_q && jp < s_k ? base_f(p[(bh * s_q + i) * s_k + jp]) : 0.f;
    vt[threadIdx.y][threadIdx.x] = jv < s_k && x < d ? base_f(v[(kv * s_k + jv) * d + x]) : 0.f;
    __syncthreads();
    for (int t = 0; t < 16; ++t) acc += pt[threadIdx.y][t] * vt[t][threadIdx.x];
    __syncthreads();
  }
  if (i < s_q && x < d) o[(bh * s_q + i) * d + x] = base_t<T>(acc);
}
