// Softmax that re-reads the row instead of holding it: any width, few registers, no shared memory
// for the row. PASSES 2: online softmax (running max and rescaled sum in one read), then a read to
// write y (OneFlow's uncached block softmax, Liger's multi-block path); PASSES 3: max, sum, write.
// The re-reads hit L2 while the rows in flight fit there; HINT 1 marks the last read and the
// stores evict-first so that y does not push x out, HINT 2 also keeps the earlier reads evict-last.
// TPR threads share a row (a few lanes to a whole block), BLOCK / TPR rows per block; UNROLL
// vector loads in flight per thread. GRID 0: a block per row group; GRID k: a persistent grid of
// k blocks per SM. Computes in f32 whatever the storage type.
#include <cuda_bf16.h>

namespace softmax_multipass_detail {

#include "../common/types.cuh"
#include "../common/softmax_math.cuh"

// Loads with an L2 eviction policy (createpolicy), one per raw vector type.
__device__ __forceinline__ unsigned short ld_policy(const unsigned short* p, unsigned long long pol) {
  unsigned short r;
  asm("ld.global.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(r) : "l"(p), "l"(pol));
  return r;
}
__device__ __forceinline__ unsigned int ld_policy(const unsigned int* p, unsigned long long pol) {
  unsigned int r;
  asm("ld.global.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(pol));
  return r;
}
__device__ __forceinline__ uint2 ld_policy(const uint2* p, unsigned long long pol) {
  uint2 r;
  asm("ld.global.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;" : "=r"(r.x), "=r"(r.y) : "l"(p), "l"(pol));
  return r;
}
__device__ __forceinline__ uint4 ld_policy(const uint4* p, unsigned long long pol) {
  uint4 r;
  asm("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p), "l"(pol));
  return r;
}

// MODE 0: default; 1: streaming (evict-first, the row's last read); 2: evict-last policy.
template <int MODE, typename R> __device__ __forceinline__ R load(const R* p, unsigned long long pol) {
  if constexpr (MODE == 1) return __ldcs(p);
  else if constexpr (MODE == 2) return ld_policy(p, pol);
  else return *p;
}
template <int HINT, typename R> __device__ __forceinline__ void store(R* p, R v) {
  if constexpr (HINT) __stcs(p, v); else *p = v;
}

#include "../common/row_reduce.cuh"

}  // namespace softmax_multipass_detail

template <typename T, int BLOCK, int TPR, int VEC, int UNROLL, int PASSES, int REDUCE, int HINT, int FAST_EXP>
__global__ void __launch_bounds__(BLOCK)
    softmax_multipass(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols_ll) {
  static_assert(sizeof(T) * VEC <= 16 && VEC > 0 && (VEC & (VEC - 1)) == 0, "VEC: a power of two, at most 16 bytes");
  static_assert(TPR > 0 && (TPR & (TPR - 1)) == 0 && TPR <= BLOCK && BLOCK % 32 == 0 && BLOCK <= 1024,
                "TPR: a power of two dividing BLOCK, a multiple of the warp size");
  static_assert(PASSES == 2 || PASSES == 3, "PASSES: 2 (online) or 3");
  using namespace softmax_multipass_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int RPB = BLOCK / TPR;
  constexpr int EARLY = HINT == 2 ? 2 : 0;  // load mode of the reads before the last
  constexpr int LAST = HINT >= 1 ? 1 : 0;
  constexpr int STEP = TPR * UNROLL;        // vectors per row per step
  __shared__ float red[2][TPR > 32 && REDUCE == 0 ? BLOCK / 32 : 1];
  __shared__ float tree[TPR > 32 && REDUCE == 1 ? BLOCK : 1];

  const int cols = static_cast<int>(cols_ll);
  const int nvec = cols / VEC;  // cols % VEC == 0 (a constraint)
  const int slot = threadIdx.x / TPR, lane = threadIdx.x % TPR;
  const long long groups = (rows + RPB - 1) / RPB;
  unsigned long long pol = 0;
  if constexpr (HINT == 2) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));

  // With a block per group (GRID 0) this loop runs once; a persistent grid strides over the groups.
  for (long long g = blockIdx.x; g < groups; g += gridDim.x) {
    const long long row = g * RPB + slot;
    const bool valid = row < rows;  // the last group may be partial; its idle threads still reduce
    const Raw* xv = reinterpret_cast<const Raw*>(x + (valid ? row : 0) * cols_ll);
    Raw* yv = reinterpret_cast<Raw*>(y + (valid ? row : 0) * cols_ll);
    float m = neg_inf(), s = 0.0f;

    if constexpr (PASSES == 2) {
      if (valid)
        for (int j0 = lane; j0 < nvec; j0 += STEP) {
          Raw buf[UNROLL];
#pragma unroll
          for (int e = 0; e < UNROLL; ++e)
            if (j0 + e * TPR < nvec) buf[e] = load<EARLY>(xv + j0 + e * TPR, pol);
          float cm = neg_inf();  // this step's max: one rescale per step, not per element
#pragma unroll
          for (int e = 0; e < UNROLL; ++e)
            if (j0 + e * TPR < nvec) {
              const T* v = reinterpret_cast<const T*>(&buf[e]);
#pragma unroll
              for (int k = 0; k < VEC; ++k) cm = fmaxf(cm, to_f(v[k]));
            }
          if (cm > m) {  // from m = -inf: s = 0 * exp(-inf) = 0
            s *= ex<FAST_EXP>(m - cm);
            m = cm;
          }
#pragma unroll
          for (int e = 0; e < UNROLL; ++e)
            if (j0 + e * TPR < nvec) {
              const T* v = reinterpret_cast<const T*>(&buf[e]);
#pragma unroll
              for (int k = 0; k < VEC; ++k) s += ex<FAST_EXP>(to_f(v[k]) - m);
            }
        }
      // Combine (m, s) over the row: the max, then each thread's sum rescaled to it. A thread
      // without elements holds (-inf, 0) and must not compute -inf - -inf.
      const float M = row_reduce<MaxOp, BLOCK, TPR, REDUCE>(m, red[0], tree);
      s = m == neg_inf() ? 0.0f : s * ex<FAST_EXP>(m - M);
      m = M;
      s = row_reduce<SumOp, BLOCK, TPR, REDUCE>(s, red[1], tree);
    } else {
      if (valid)
        for (int j0 = lane; j0 < nvec; j0 += STEP) {
          Raw buf[UNROLL];
#pragma unroll
          for (int e = 0; e < UNROLL; ++e)
            if (j0 + e * TPR < nvec) buf[e] = load<EARLY>(xv + j0 + e * TPR, pol);
#pragma unroll
          for (int e = 0; e < UNROLL; ++e)
            if (j0 + e * TPR < nvec) {
              const T* v = reinterpret_cast<const T*>(&buf[e]);
#pragma unroll
              for (int k = 0; k < VEC; ++k) m = fmaxf(m, to_f(v[k]));
            }
        }
      m = row_reduce<MaxOp, BLOCK, TPR, REDUCE>(m, red[0], tree);
      if (valid)
        for (int j0 = lane; j0 < nvec; j0 += STEP) {
          Raw buf[UNROLL];
#pragma unroll
          for (int e = 0; e < UNROLL; ++e)
            if (j0 + e * TPR < nvec) buf[e] = load<EARLY>(xv + j0 + e * TPR, pol);
#pragma unroll
          for (int e = 0; e < UNROLL; ++e)
            if (j0 + e * TPR < nvec) {
              const T* v = reinterpret_cast<const T*>(&buf[e]);
#pragma unroll
              for (int k = 0; k < VEC; ++k) s += ex<FAST_EXP>(to_f(v[k]) - m);
            }
        }
      s = row_reduce<SumOp, BLOCK, TPR, REDUCE>(s, red[1], tree);
    }

    const float inv = 1.0f / s;
    if (valid)
      for (int j0 = lane; j0 < nvec; j0 += STEP) {
        Raw buf[UNROLL];
#pragma unroll
        for (int e = 0; e < UNROLL; ++e)
          if (j0 + e * TPR < nvec) buf[e] = load<LAST>(xv + j0 + e * TPR, pol);
#pragma unroll
        for (int e = 0; e < UNROLL; ++e)
          if (j0 + e * TPR < nvec) {
            const T* v = reinterpret_cast<const T*>(&buf[e]);
            Raw o;
            T* ov = reinterpret_cast<T*>(&o);
#pragma unroll
            for (int k = 0; k < VEC; ++k) ov[k] = from_f<T>(ex<FAST_EXP>(to_f(v[k]) - m) * inv);
            store<HINT>(yv + j0 + e * TPR, o);
          }
      }
  }
}
