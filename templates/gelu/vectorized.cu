// GELU (tanh form), vectorized: each thread moves VEC elements per access (up to 16 bytes) and
// keeps EPT such accesses in flight before computing, so that enough bytes are in flight per SM
// to reach memory bandwidth. One pass (a block per tile) or a grid-stride loop over a grid sized
// to the SMs. Computes in f32 whatever the storage type.
#include <cuda_bf16.h>

namespace gelu_detail {

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

template <int FAST>
__device__ __forceinline__ float tanh_f(float v) {
  if constexpr (FAST) {
    float r;  // max relative error about 2^-11: fine for bf16 outputs only
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
  } else {
    return tanhf(v);
  }
}

template <int FAST>
__device__ __forceinline__ float gelu(float x) {
  const float k0 = 0.7978845608028654f;  // sqrt(2/pi)
  const float inner = k0 * fmaf(0.044715f * x, x * x, x);
  return 0.5f * x * (1.0f + tanh_f<FAST>(inner));
}

template <int HINT, typename R>
__device__ __forceinline__ R load(const R* p) {
  if constexpr (HINT) return __ldcs(p); else return *p;
}
template <int HINT, typename R>
__device__ __forceinline__ void store(R* p, R v) {
  if constexpr (HINT) __stcs(p, v); else *p = v;
}

}  // namespace gelu_detail

template <typename T, int BLOCK, int VEC, int EPT, int GRID_STRIDE, int FAST_TANH, int CACHE_HINT>
__global__ void __launch_bounds__(BLOCK) gelu_tanh(const T* __restrict__ x, T* __restrict__ y, long long n) {
  static_assert(sizeof(T) * VEC <= 16, "VEC * sizeof(T) must be at most 16 bytes (one vector access)");
  static_assert(VEC > 0 && (VEC & (VEC - 1)) == 0, "VEC must be a power of two");
  static_assert(EPT > 0 && BLOCK % 32 == 0, "EPT must be positive and BLOCK a multiple of the warp size");
  using namespace gelu_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr long long TILE = static_cast<long long>(BLOCK) * VEC * EPT;  // elements per block per step
  const long long stride = GRID_STRIDE ? static_cast<long long>(gridDim.x) * TILE : TILE;
  for (long long base = static_cast<long long>(blockIdx.x) * TILE; base < n; base += stride) {
    if (base + TILE <= n) {
      Raw r[EPT];  // (EPT) vectors of VEC elements, all loads issued before the first use
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        r[e] = load<CACHE_HINT>(reinterpret_cast<const Raw*>(x + base + (static_cast<long long>(e) * BLOCK + threadIdx.x) * VEC));
#pragma unroll
      for (int e = 0; e < EPT; ++e) {
        T* v = reinterpret_cast<T*>(&r[e]);
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[k] = from_f<T>(gelu<FAST_TANH>(to_f(v[k])));
        store<CACHE_HINT>(reinterpret_cast<Raw*>(y + base + (static_cast<long long>(e) * BLOCK + threadIdx.x) * VEC), r[e]);
      }
    } else {
      // The last, partial tile: one element per access, still coalesced.
      for (long long i = base + threadIdx.x; i < n; i += BLOCK) y[i] = from_f<T>(gelu<FAST_TANH>(to_f(x[i])));
    }
    if (!GRID_STRIDE) break;
  }
}
