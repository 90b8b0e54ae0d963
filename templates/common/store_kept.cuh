// y kept in L2 (evict_last): x, dead after its last read, goes before the result a consumer reads next.
// Measured on the H200 (docs/FINDINGS.md): the kernel and the flush after it together
// take less time, so the writes are not merely deferred past the timed window.
template <typename R> __device__ __forceinline__ void store_kept(R* p, R v) {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  if constexpr (sizeof(R) == 16)
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
                 :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(pol) : "memory");
  else if constexpr (sizeof(R) == 8)
    asm volatile("st.global.L2::cache_hint.v2.u32 [%0], {%1, %2}, %3;" :: "l"(p), "r"(v.x), "r"(v.y), "l"(pol) : "memory");
  else if constexpr (sizeof(R) == 4)
    asm volatile("st.global.L2::cache_hint.u32 [%0], %1, %2;" :: "l"(p), "r"(v), "l"(pol) : "memory");
  else
    asm volatile("st.global.L2::cache_hint.u16 [%0], %1, %2;" :: "l"(p), "h"(v), "l"(pol) : "memory");
}
