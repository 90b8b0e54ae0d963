#pragma once
// -inf (NVRTC has no INFINITY macro).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// 2^x by ex2.approx.ftz: one instruction (exp2f's non-ftz form scales denormal results), a result
// under 2^-126 flushed to 0 beside a row sum of at least 1, and 2^-inf = 0.
__device__ __forceinline__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

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

// (m, s) <- (m, s) + (om, os) where s is a sum of exp(x - m). An empty side is (-inf, 0), and
// -inf - -inf must never reach exp.
template <int FAST> __device__ __forceinline__ void combine(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  if (nm == neg_inf()) return;
  s = s * ex<FAST>(m - nm) + os * ex<FAST>(om - nm);
  m = nm;
}

// Butterfly over aligned groups of W lanes: every lane gets its group's pair.
template <int FAST, int W = 32> __device__ __forceinline__ void warp_combine(float& m, float& s) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, m, o), os = __shfl_xor_sync(0xffffffffu, s, o);
    combine<FAST>(m, s, om, os);
  }
}

// Attention's scores are kept unscaled; exponents are taken base 2 of score * scale_log2<D>().
template <int D> __device__ __forceinline__ float scale_log2() { return 1.4426950408889634f * rsqrtf(static_cast<float>(D)); }

// A row's natural log-sum-exp from its largest unscaled score m and its sum l of 2^((s - m) scale).
template <int D> __device__ __forceinline__ float log_sum_exp(float m, float l) {
  return (m * scale_log2<D>() + __log2f(l)) * 0.6931471805599453f;
}
