// L1 norm in one launch (CUDA's threadfence reduction): a persistent grid of BLOCKS_PER_SM blocks
// per SM streams x in tiles of BLOCK x VEC x EPT elements (16-byte loads at most, EPT of them in
// flight per thread), each block writes its partial sum to the workspace, and the last block to
// arrive (an atomic counter there) sums the partials, writes y, and zeroes what it used so the
// next launch finds the workspace as this one did. f32 accumulation whatever the storage type.
#include <cuda_bf16.h>
#include <cub/block/block_reduce.cuh>

namespace l1norm_detail {

template <int BYTES> struct RawOf;
template <> struct RawOf<2> { using type = unsigned short; };
template <> struct RawOf<4> { using type = unsigned int; };
template <> struct RawOf<8> { using type = uint2; };
template <> struct RawOf<16> { using type = uint4; };

// ld.global.nc with L1::no_allocate (x is read once: it should not displace anything in L1), and
// with PREFETCH a 256-byte L2 prefetch that pulls whole sector groups ahead of the next loads.
#define SOLTUNE_LD_NA(PREFETCH, SUFFIX, ...)                                                          \
  if constexpr (PREFETCH) asm("ld.global.nc.L1::no_allocate.L2::256B" SUFFIX : __VA_ARGS__);             \
  else asm("ld.global.nc.L1::no_allocate" SUFFIX : __VA_ARGS__)
template <int PREFETCH, typename R>
__device__ __forceinline__ R ld_na(const R* p) {
  R r;
  if constexpr (sizeof(R) == 16) {
    SOLTUNE_LD_NA(PREFETCH, ".v4.u32 {%0, %1, %2, %3}, [%4];", "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  } else if constexpr (sizeof(R) == 8) {
    SOLTUNE_LD_NA(PREFETCH, ".v2.u32 {%0, %1}, [%2];", "=r"(r.x), "=r"(r.y) : "l"(p));
  } else if constexpr (sizeof(R) == 4) {
    SOLTUNE_LD_NA(PREFETCH, ".u32 %0, [%1];", "=r"(r) : "l"(p));
  } else {
    SOLTUNE_LD_NA(PREFETCH, ".u16 %0, [%1];", "=h"(r) : "l"(p));
  }
  return r;
}
#undef SOLTUNE_LD_NA

// 0: default (x is const __restrict__, so the compiler already uses the read-only path, as __ldg
// would); 1: streaming (__ldcs, evict-first); 2: L1 no-allocate; 3: the same with L2 prefetch.
template <int HINT, typename R>
__device__ __forceinline__ R load(const R* p) {
  if constexpr (HINT == 1) return __ldcs(p);
  else if constexpr (HINT >= 2) return ld_na<HINT == 3>(p);
  else return *p;
}

__device__ __forceinline__ float abs_f(float v) { return fabsf(v); }
__device__ __forceinline__ float abs_f(__nv_bfloat16 v) { return fabsf(__bfloat162float(v)); }

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Sum of |v| over the VEC elements of one vector load. bf16 -> f32 is a 16-bit shift, so a
// 32-bit word of two bf16 gives both floats with two masks (the sign bit cleared: the abs).
template <typename T, int VEC, typename R>
__device__ __forceinline__ float abs_sum(const R& r) {
  float s = 0.0f;
  if constexpr (sizeof(T) == 4) {
    const float* v = reinterpret_cast<const float*>(&r);
#pragma unroll
    for (int k = 0; k < VEC; ++k) s += fabsf(v[k]);
  } else if constexpr (VEC == 1) {
    s = __uint_as_float((static_cast<unsigned int>(reinterpret_cast<const unsigned short&>(r)) & 0x7fffu) << 16);
  } else {
    const unsigned int* w = reinterpret_cast<const unsigned int*>(&r);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) s += __uint_as_float((w[k] & 0x7fffu) << 16) + __uint_as_float(w[k] & 0x7fff0000u);
  }
  return s;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// The block's sum, valid in thread 0. 0: warp shuffles, one shared slot per warp, shuffles again;
// 1: cub::BlockReduce with warp reductions; 2: cub::BlockReduce raking. Callers put a barrier
// between two calls (the shared storage is reused).
template <int BLOCK, int REDUCE>
__device__ __forceinline__ float block_sum(float v) {
  if constexpr (REDUCE == 0) {
    __shared__ float warp_sums[BLOCK / 32];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) v = warp_sum(threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f);
    return v;
  } else {
    using Reduce = cub::BlockReduce<float, BLOCK, REDUCE == 1 ? cub::BLOCK_REDUCE_WARP_REDUCTIONS : cub::BLOCK_REDUCE_RAKING>;
    __shared__ typename Reduce::TempStorage tmp;
    return Reduce(tmp).Sum(v);
  }
}

}  // namespace l1norm_detail

// ws: int[4 + 16 * sms], all zero on entry and on exit: ws[0] counts arriving blocks, and the
// partials (f32, one per block, at most 16 per SM) start at ws + 4.
// __launch_bounds__ asks for BLOCKS_PER_SM resident blocks (registers capped to fit), so the whole
// persistent grid runs in one wave.
template <typename T, int BLOCK, int VEC, int EPT, int BLOCKS_PER_SM, int CACHE_HINT, int REDUCE>
__global__ void __launch_bounds__(BLOCK, BLOCKS_PER_SM) l1norm_last_block(const T* __restrict__ x, T* __restrict__ y,
                                                           int* __restrict__ ws, long long n) {
  static_assert(sizeof(T) * VEC <= 16, "VEC * sizeof(T) must be at most 16 bytes (one vector load)");
  static_assert(VEC > 0 && (VEC & (VEC - 1)) == 0, "VEC must be a power of two");
  static_assert(EPT > 0 && BLOCK % 32 == 0 && BLOCK <= 1024, "EPT positive, BLOCK a multiple of 32 up to 1024");
  using namespace l1norm_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr long long TILE = static_cast<long long>(BLOCK) * VEC * EPT;

  // Whole tiles, grid-stride. Tile bases are multiples of VEC elements and x is cudaMalloc-aligned,
  // so every vector load is aligned; the rest (under one tile) is read element by element below.
  const long long tiles = n / TILE;
  float acc[EPT];  // one sum per load in flight: no add waits on another load's add
#pragma unroll
  for (int e = 0; e < EPT; ++e) acc[e] = 0.0f;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Raw* p = reinterpret_cast<const Raw*>(x + t * TILE) + threadIdx.x;
    Raw r[EPT];
#pragma unroll
    for (int e = 0; e < EPT; ++e) r[e] = load<CACHE_HINT>(p + e * BLOCK);
#pragma unroll
    for (int e = 0; e < EPT; ++e) acc[e] += abs_sum<T, VEC>(r[e]);
  }
  for (long long i = tiles * TILE + static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * BLOCK)
    acc[0] += abs_f(x[i]);
  float s = acc[0];
#pragma unroll
  for (int e = 1; e < EPT; ++e) s += acc[e];
  s = block_sum<BLOCK, REDUCE>(s);

  if (gridDim.x == 1) {  // small n: no partials, no counter
    if (threadIdx.x == 0) y[0] = from_f<T>(s);
    return;
  }
  unsigned int* counter = reinterpret_cast<unsigned int*>(ws);
  float* partials = reinterpret_cast<float*>(ws + 4);
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = s;
    __threadfence();  // the partial is visible device-wide before the arrival is counted
    is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
    __threadfence();  // and the last block reads the partials only after seeing every arrival
  }
  __syncthreads();  // also: every thread is done with block_sum's shared storage
  if (!is_last) return;
  float total = 0.0f;
  for (unsigned int i = threadIdx.x; i < gridDim.x; i += BLOCK) {
    total += __ldcg(partials + i);  // from L2: written by other SMs
    partials[i] = 0.0f;             // leave the workspace as it was found
  }
  total = block_sum<BLOCK, REDUCE>(total);
  if (threadIdx.x == 0) {
    y[0] = from_f<T>(total);
    atomicExch(counter, 0u);
  }
}
