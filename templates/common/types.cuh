// Storage types and f32, shared by the templates (each includes this inside its own namespace; the
// loader writes it in place): the raw vector of BYTES bytes that one access moves, conversions to
// and from f32 (bf16 rounds to nearest even), and whole vectors unpacked and packed.
template <int BYTES> struct RawOf;
template <> struct RawOf<2> { using type = unsigned short; };
template <> struct RawOf<4> { using type = unsigned int; };
template <> struct RawOf<8> { using type = uint2; };
template <> struct RawOf<16> { using type = uint4; };

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <typename T, int VEC, typename R> __device__ __forceinline__ void unpack(const R& r, float (&out)[VEC]) {
  const T* e = reinterpret_cast<const T*>(&r);
#pragma unroll
  for (int k = 0; k < VEC; ++k) out[k] = to_f(e[k]);
}

// VEC floats into one vector of T: bf16 in pairs, one cvt.rn.bf16x2.f32 each (one element at a time
// is a conversion each and a move to pair them).
template <typename T, typename R, int VEC> __device__ __forceinline__ R pack(const float (&f)[VEC]) {
  R r;
  if constexpr (sizeof(T) == 2 && VEC >= 2) {
    __nv_bfloat162* q = reinterpret_cast<__nv_bfloat162*>(&r);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) q[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
  } else {
    T* o = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int k = 0; k < VEC; ++k) o[k] = from_f<T>(f[k]);
  }
  return r;
}
