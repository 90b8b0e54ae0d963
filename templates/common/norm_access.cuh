// How the norms' templates (LayerNorm, RMSNorm: rowreg and looped) read x and their parameters and
// store y, by their HINT knob:
//   0: default loads and stores; the parameters through the read-only path (__ldg);
//   1: streaming (evict-first) loads of x and stores of y, for data touched once;
//   2: Triton's policy. The parameters (read by every row) kept in L1 and L2 (evict_last). A row
//      read twice (looped) has its first read keep the lines in L1 and L2 for the second, which
//      lets them go first (evict_first): Triton's SASS, LDG.E.EL then LDG.E.EF with an L2 cache
//      hint. Either level alone did not help; both took RMSNorm f32 8192x4096 from 65.6 to 64.0 us
//      (docs/FINDINGS.md);
//   3: as 2, with y kept in L2 (store_kept.cuh).
#include "store_kept.cuh"

template <int HINT, typename R> __device__ __forceinline__ R load(const R* p) {
  if constexpr (HINT == 1) return __ldcs(p); else return *p;
}
template <int HINT, typename R> __device__ __forceinline__ void store(R* p, R v) {
  if constexpr (HINT == 1) __stcs(p, v);
  else if constexpr (HINT == 3) store_kept(p, v);
  else *p = v;
}

template <bool KEEP> __device__ __forceinline__ unsigned long long l2_policy() {
  unsigned long long p;
  if constexpr (KEEP) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  else asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// A load of 2, 4, 8 or 16 bytes with the same eviction priority in L1 and L2: evict_last (KEEP) or
// evict_first.
#define SOLTUNE_LD_HINTED(L1, SUFFIX, ...)                                                     \
  asm volatile("ld.global.L1::" L1 ".L2::cache_hint" SUFFIX : __VA_ARGS__)
template <bool KEEP, typename R> __device__ __forceinline__ R load_hinted(const R* p) {
  R r;
  const unsigned long long pol = l2_policy<KEEP>();
  if constexpr (sizeof(R) == 16) {
    if constexpr (KEEP) SOLTUNE_LD_HINTED("evict_last", ".v4.u32 {%0, %1, %2, %3}, [%4], %5;", "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p), "l"(pol));
    else SOLTUNE_LD_HINTED("evict_first", ".v4.u32 {%0, %1, %2, %3}, [%4], %5;", "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p), "l"(pol));
  } else if constexpr (sizeof(R) == 8) {
    if constexpr (KEEP) SOLTUNE_LD_HINTED("evict_last", ".v2.u32 {%0, %1}, [%2], %3;", "=r"(r.x), "=r"(r.y) : "l"(p), "l"(pol));
    else SOLTUNE_LD_HINTED("evict_first", ".v2.u32 {%0, %1}, [%2], %3;", "=r"(r.x), "=r"(r.y) : "l"(p), "l"(pol));
  } else if constexpr (sizeof(R) == 4) {
    if constexpr (KEEP) SOLTUNE_LD_HINTED("evict_last", ".u32 %0, [%1], %2;", "=r"(r) : "l"(p), "l"(pol));
    else SOLTUNE_LD_HINTED("evict_first", ".u32 %0, [%1], %2;", "=r"(r) : "l"(p), "l"(pol));
  } else {
    if constexpr (KEEP) SOLTUNE_LD_HINTED("evict_last", ".u16 %0, [%1], %2;", "=h"(r) : "l"(p), "l"(pol));
    else SOLTUNE_LD_HINTED("evict_first", ".u16 %0, [%1], %2;", "=h"(r) : "l"(p), "l"(pol));
  }
  return r;
}
#undef SOLTUNE_LD_HINTED

// The first read of x, the last read of x, and the parameters (weight, bias), under HINT.
template <int HINT, typename R> __device__ __forceinline__ R first_read(const R* p) {
  if constexpr (HINT >= 2) return load_hinted<true>(p); else return load<0>(p);
}
template <int HINT, typename R> __device__ __forceinline__ R last_read(const R* p) {
  if constexpr (HINT >= 2) return load_hinted<false>(p); else return load<HINT>(p);
}
template <int HINT, typename R> __device__ __forceinline__ R param_read(const R* p) {
  if constexpr (HINT >= 2) return load_hinted<true>(p); else return __ldg(p);
}
