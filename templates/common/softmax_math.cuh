// -inf (NVRTC has no INFINITY macro).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// exp of d = x - max (<= 0). FAST: ex2.approx of d * log2(e), relative error about |d| * 2^-24, as
// __expf; its .ftz form is one instruction (__expf's non-ftz ex2 is four: the SASS scales
// denormal results), and a result under 2^-126 is 0 beside a row sum of at least 1.
template <int FAST> __device__ __forceinline__ float ex(float d) {
  if constexpr (FAST) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(d * 1.4426950408889634f));
    return y;
  } else {
    return expf(d);
  }
}
