// e4m3 quantization of f32 values (templates/add_rmsnorm_fp8): a largest magnitude as an all-reduce
// state (group_allreduce.cuh's combine and shfl), and VEC values times a factor stored as VEC e4m3
// bytes in one access, two at a time by cvt's satfinite pair conversion. Include after types.cuh,
// with <cuda_fp8.h> at the including file's top.

struct AbsMax {
  float v;
};
__device__ __forceinline__ AbsMax combine(AbsMax a, AbsMax b) { return AbsMax{fmaxf(a.v, b.v)}; }
__device__ __forceinline__ AbsMax shfl(AbsMax a, int m) { return AbsMax{__shfl_xor_sync(0xffffffffu, a.v, m)}; }

template <int VEC> __device__ __forceinline__ void store_e4m3(__nv_fp8_e4m3* dst, const float (&y)[VEC], float factor) {
  static_assert(VEC % 2 == 0 && VEC <= 16, "VEC: pairs, at most 16 bytes");
  unsigned short pairs[VEC / 2];
#pragma unroll
  for (int k = 0; k < VEC / 2; ++k)
    pairs[k] = __nv_cvt_float2_to_fp8x2(make_float2(y[2 * k] * factor, y[2 * k + 1] * factor), __NV_SATFINITE, __NV_E4M3);
  using Raw = typename RawOf<VEC>::type;
  *reinterpret_cast<Raw*>(dst) = *reinterpret_cast<const Raw*>(pairs);
}
