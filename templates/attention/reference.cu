// Attention in double precision: O, its magnitude (sum_j (p_j + e) |v_j| over the visible keys, e
// the input type's smallest normal: the band's scale) and the row log-sum-exp. A block takes QR queries of one head and walks the keys KT at a time with an online
// softmax in double (a rescale by exp(m_old - m_new) is exact to double's rounding, so the result is
// the two-pass one); the 16-bit inputs are exact in the float tiles. Keys a query may not see are
// never visited (causal: past i + s_k - s_q), so s_k of any length costs time, not memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float ref_f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float ref_f(__half x) { return __half2float(x); }
// The smallest normal number of the input type: a probability below it rounds by an absolute step.
__device__ __forceinline__ double ref_min_normal(__nv_bfloat16) { return 1.1754943508222875e-38; }
__device__ __forceinline__ double ref_min_normal(__half) { return 6.103515625e-05; }
__device__ __forceinline__ double ref_neg_inf() { return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull)); }

template <typename T, int D>
__global__ void __launch_bounds__(256) attention_reference(const T* __restrict__ q, const T* __restrict__ k,
                                                           const T* __restrict__ v, double* __restrict__ o,
                                                           double* __restrict__ mag, double* __restrict__ lse,
                                                           long long b, long long h, long long h_kv, long long s_q,
                                                           long long s_k, long long causal) {
  constexpr int QR = 8, KT = 16, NT = 256, TPR = NT / QR, PER = D / TPR;  // TPR threads per query, PER dims each
  __shared__ float qs[QR][D], ks[KT][D], vs[KT][D];
  __shared__ double p[QR][KT], alpha[QR];
  const long long bh = blockIdx.y, head = bh % h, kv = (bh / h) * h_kv + head / (h / h_kv);
  const long long i0 = static_cast<long long>(blockIdx.x) * QR;
  const int tid = threadIdx.x, r = tid / TPR, lane = tid % TPR;
  const T* qb = q + (bh * s_q) * D;
  const T* kb = k + (kv * s_k) * D;
  const T* vb = v + (kv * s_k) * D;
  for (int e = tid; e < QR * D; e += NT) {
    const long long i = i0 + e / D;
    qs[e / D][e % D] = i < s_q ? ref_f(qb[i * D + e % D]) : 0.f;
  }
  const double scale = 1.0 / sqrt(static_cast<double>(D));
  const long long shift = s_k - s_q;  // query i sees keys j <= i + shift under the causal mask
  long long end = s_k;
  if (causal) end = min(s_k, min(i0 + QR, s_q) + shift);
  double m = ref_neg_inf(), l = 0;  // threads r * TPR.. keep the row's; thread r * TPR's copy is the one used
  double acc[PER], am[PER], av[PER];  // av: sum of |v_j| over visible keys, never rescaled (e's part)
  for (int t = 0; t < PER; ++t) acc[t] = am[t] = av[t] = 0;
  __shared__ bool seen[QR][KT];
  for (long long j0 = 0; j0 < end; j0 += KT) {
    __syncthreads();
    for (int e = tid; e < KT * D; e += NT) {
      const long long j = j0 + e / D;
      ks[e / D][e % D] = j < s_k ? ref_f(kb[j * D + e % D]) : 0.f;
      vs[e / D][e % D] = j < s_k ? ref_f(vb[j * D + e % D]) : 0.f;
    }
    __syncthreads();
    if (tid < QR * KT) {
      const int qr = tid / KT, c = tid % KT;
      const long long i = i0 + qr, j = j0 + c;
      double s = ref_neg_inf();
      if (i < s_q && j < s_k && !(causal && j > i + shift)) {
        s = 0;
        for (int x = 0; x < D; ++x) s += static_cast<double>(qs[qr][x]) * ks[c][x];
        s *= scale;
      }
      p[qr][c] = s;
    }
    __syncthreads();
    if (tid < QR) {
      double mx = m;
      for (int c = 0; c < KT; ++c) mx = fmax(mx, p[tid][c]);
      double sum = 0;
      for (int c = 0; c < KT; ++c) {
        seen[tid][c] = p[tid][c] != ref_neg_inf();
        const double e = seen[tid][c] ? exp(p[tid][c] - mx) : 0.0;
        p[tid][c] = e;
        sum += e;
      }
      alpha[tid] = m == ref_neg_inf() ? 0.0 : exp(m - mx);
      l = l * alpha[tid] + sum;
      m = mx;
    }
    __syncthreads();
    const double a = alpha[r];
    for (int t = 0; t < PER; ++t) {
      const int x = lane + t * TPR;
      double sa = 0, sm = 0, sv = 0;
      for (int c = 0; c < KT; ++c) {
        const double av_c = fabs(static_cast<double>(vs[c][x]));
        sa += p[r][c] * vs[c][x];
        sm += p[r][c] * av_c;
        sv += seen[r][c] ? av_c : 0.0;
      }
      acc[t] = acc[t] * a + sa;
      am[t] = am[t] * a + sm;
      av[t] += sv;
    }
  }
  // The row's l and m live in thread r (tid < QR): shared once more for the division.
  __syncthreads();
  if (tid < QR) {
    p[tid][0] = l;
    p[tid][1] = m;
  }
  __syncthreads();
  const long long i = i0 + r;
  if (i >= s_q) return;
  const double lr = p[r][0];
  for (int t = 0; t < PER; ++t) {
    const long long at = (bh * s_q + i) * D + lane + t * TPR;
    o[at] = acc[t] / lr;
    mag[at] = (am[t] + ref_min_normal(T()) * av[t]) / lr;
  }
  if (lane == 0) lse[bh * s_q + i] = p[r][1] + log(lr);
}
