// Attention for decoding (few queries over many keys): memory-bound, so each key and value row is
// read once, with 16-byte loads, for every query row that needs it. A unit is one key/value head of
// one batch entry with the ROWS or fewer query rows that read it: its h / h_kv query heads times
// s_q queries (grouped-query attention's heads share the loads). A block takes one unit and one of
// SPLIT shares of its keys. D / 8 lanes hold a key's row (8 elements each), so a warp walks 32 / (D /
// 8) keys at once; each such group of lanes is a stream with its own online softmax (the scores
// summed across its lanes by shuffles, f32 throughout, the probabilities never rounded), the next U
// keys of a stream loading while U are used. At the end the streams of a warp merge by shuffles,
// the warps through shared memory, and the block writes O and the log-sum-exp, or with SPLIT > 1 its
// part for attention_combine (split_combine.cuh). Plain loads and FMAs: any GPU from sm_80 runs it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/softmax_math.cuh"
#include "split_combine.cuh"

namespace decode_detail {

// Two 16-bit values (a 32-bit word) as floats, by the type of the second argument.
__device__ __forceinline__ float2 pair(unsigned u, __half) { return __half22float2(*reinterpret_cast<const __half2*>(&u)); }
__device__ __forceinline__ float2 pair(unsigned u, __nv_bfloat16) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u));
}

// Eight 16-bit values (a 16-byte load) as floats.
template <typename T> __device__ __forceinline__ void widen(const uint4& w, float (&f)[8]) {
  const unsigned u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 p = pair(u[i], T{});
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

// (m, l, acc) <- the merge of it and (om, ol, oacc): both rescaled to the larger maximum; a side that
// saw no key is (-inf, 0, 0) and weighs nothing.
__device__ __forceinline__ void merge(float& m, float& l, float (&acc)[8], float om, float ol, const float (&oacc)[8],
                                      float scale) {
  const float nm = fmaxf(m, om);
  if (nm == neg_inf()) return;
  const float a = ex2_ftz((m - nm) * scale), c = ex2_ftz((om - nm) * scale);
  l = l * a + ol * c;
#pragma unroll
  for (int e = 0; e < 8; ++e) acc[e] = acc[e] * a + oacc[e] * c;
  m = nm;
}

}  // namespace decode_detail

template <typename T, int D, int ROWS, int WARPS, int SPLIT, int U>
__global__ void __launch_bounds__(WARPS * 32) attention_decode(const T* __restrict__ q, const T* __restrict__ k,
                                                               const T* __restrict__ v, T* __restrict__ o,
                                                               float* __restrict__ lse, float* __restrict__ part_o,
                                                               float* __restrict__ part_ml, long long b, long long h,
                                                               long long h_kv, long long s_q, long long s_k,
                                                               long long causal) {
  using namespace decode_detail;
  constexpr int LPK = D / 8, KPW = 32 / LPK, STREAMS = WARPS * KPW;  // lanes a key, keys a warp
  static_assert(sizeof(T) == 2 && D % 64 == 0 && D <= 256 && ROWS >= 1 && U >= 1 && SPLIT >= 1, "shapes");
  extern __shared__ __align__(16) float decode_smem[];  // WARPS x ROWS x (D + 2): the warps' states

  // Block x: the unit (batch entry, key/value head) innermost, the split outermost.
  const long long units = b * h_kv, unit = blockIdx.x % units, split = blockIdx.x / units;
  const long long G = h / h_kv, rows = G * s_q;  // rows <= ROWS (decode.yaml)
  const long long row0 = unit * rows;            // the unit's first row of Q, O and the log-sum-exp
  const long long j_begin = s_k * split / SPLIT, j_end = s_k * (split + 1) / SPLIT, shift = s_k - s_q;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, c = lane % LPK;
  const int stream = warp * KPW + lane / LPK;
  const float scale = scale_log2<D>();

  // The stream's query rows: this lane's 8 of each row's D, as floats.
  float qf[ROWS][8];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    uint4 w = make_uint4(0, 0, 0, 0);
    if (r < rows) w = *reinterpret_cast<const uint4*>(q + (row0 + r) * D + c * 8);
    widen<T>(w, qf[r]);
  }
  float m[ROWS], l[ROWS], acc[ROWS][8];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    m[r] = neg_inf();
    l[r] = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[r][e] = 0.f;
  }

  const T* kg = k + unit * s_k * D + c * 8;
  const T* vg = v + unit * s_k * D + c * 8;
  constexpr long long STEP = static_cast<long long>(STREAMS) * U;
  // The stream's U rows of K and V from key j0 on (past the share's end: not loaded, not used).
  auto load = [&](long long j0, uint4 (&kw)[U], uint4 (&vw)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long j = j0 + static_cast<long long>(u) * STREAMS;
      if (j < j_end) {
        kw[u] = __ldcs(reinterpret_cast<const uint4*>(kg + j * D));
        vw[u] = __ldcs(reinterpret_cast<const uint4*>(vg + j * D));
      }
    }
  };
  uint4 kw[U], vw[U];
  load(j_begin + stream, kw, vw);
  for (long long j0 = j_begin + stream; j0 < j_end; j0 += STEP) {
    uint4 kn[U], vn[U];
    load(j0 + STEP, kn, vn);  // the next U keys in flight while these are used
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long j = j0 + static_cast<long long>(u) * STREAMS;
      if (j >= j_end) break;  // the same for the stream's lanes
      float kf[8], vf[8], s[ROWS];
      widen<T>(kw[u], kf);
      widen<T>(vw[u], vf);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        s[r] = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) s[r] = fmaf(qf[r][e], kf[e], s[r]);
      }
      // The row's score over the stream's lanes: a butterfly, so that every lane holds the same sum.
#pragma unroll
      for (int off = LPK / 2; off > 0; off >>= 1)
#pragma unroll
        for (int r = 0; r < ROWS; ++r) s[r] += __shfl_xor_sync(0xffffffffu, s[r], off);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        if (r >= rows || (causal && j > r % s_q + shift)) continue;  // masked: weighs nothing
        if (s[r] > m[r]) {  // a new maximum: what came before is rescaled to it
          const float a = ex2_ftz((m[r] - s[r]) * scale);
          l[r] *= a;
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[r][e] *= a;
          m[r] = s[r];
        }
        const float p = ex2_ftz((s[r] - m[r]) * scale);
        l[r] += p;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[r][e] = fmaf(p, vf[e], acc[r][e]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) kw[u] = kn[u], vw[u] = vn[u];
  }

  // The warp's streams merge (lanes c, c + LPK, ... hold the same columns of different keys), then
  // the warps through shared memory.
#pragma unroll
  for (int off = LPK; off < 32; off <<= 1)
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      float oacc[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) oacc[e] = __shfl_xor_sync(0xffffffffu, acc[r][e], off);
      const float om = __shfl_xor_sync(0xffffffffu, m[r], off), ol = __shfl_xor_sync(0xffffffffu, l[r], off);
      merge(m[r], l[r], acc[r], om, ol, oacc, scale);
    }
  constexpr int STATE = D + 2;  // a row's D outputs, its maximum and sum
  if (lane < LPK) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      float* st = decode_smem + (warp * ROWS + r) * STATE;
#pragma unroll
      for (int e = 0; e < 8; ++e) st[c * 8 + e] = acc[r][e];
      if (c == 0) st[D] = m[r], st[D + 1] = l[r];
    }
  }
  __syncthreads();
  for (int x = tid; x < rows * D; x += WARPS * 32) {
    const int r = x / D, e = x % D;
    float mx = neg_inf();
#pragma unroll
    for (int w = 0; w < WARPS; ++w) mx = fmaxf(mx, decode_smem[(w * ROWS + r) * STATE + D]);
    float total = 0.f, sum = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
      const float* st = decode_smem + (w * ROWS + r) * STATE;
      const float wt = st[D] == neg_inf() ? 0.f : ex2_ftz((st[D] - mx) * scale);
      total += st[D + 1] * wt;
      sum += st[e] * wt;
    }
    const long long row = row0 + r;
    if constexpr (SPLIT > 1) {
      part_o[(split * b * h * s_q + row) * D + e] = sum;
      if (e == 0) reinterpret_cast<float2*>(part_ml)[split * b * h * s_q + row] = make_float2(mx, total);
    } else {
      o[row * D + e] = static_cast<T>(sum / total);
      if (e == 0) lse[row] = log_sum_exp<D>(mx, total);
    }
  }
}
