// Softmax with the row read once into shared memory by cp.async, in CHUNKS commit groups, and
// reduced while it lands: each thread folds its own vectors into a running (max, sum of exp(x -
// max)) as each group completes (a thread sees its own cp.async writes after its wait, so no
// barrier guards them), the row's pairs are combined once, and one more pass over shared memory
// writes the output. Against `cached` STAGE 2 (wait for the whole row, then a max pass, a barrier,
// a sum pass, a barrier, the output pass), the reduction overlaps the loads still in flight and one
// shared-memory pass and one barrier go. TPR threads per row, BLOCK / TPR rows per block, a block
// per row group. Computes in f32 whatever the storage type.
#include <cuda_bf16.h>

namespace softmax_chunked_detail {

#include "../common/types.cuh"
#include "../common/softmax_math.cuh"

// The largest element of a vector; bf16 pairs by max.bf16x2 (NaN: the other operand, as fmaxf).
template <typename T, int VEC, typename R> __device__ __forceinline__ float vmax(const R& r) {
  float m = neg_inf();
  if constexpr (sizeof(T) == 2) {
    const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&r);
    __nv_bfloat162 m2 = p[0];
#pragma unroll
    for (int k = 1; k < VEC / 2; ++k) m2 = __hmax2(m2, p[k]);
    m = fmaxf(__low2float(m2), __high2float(m2));
  } else {
    const T* v = reinterpret_cast<const T*>(&r);
#pragma unroll
    for (int k = 0; k < VEC; ++k) m = fmaxf(m, to_f(v[k]));
  }
  return m;
}

// Folds a vector into (m, s), s a sum of exp(x - m). The sum is rescaled only when the max grows
// (a few times per row for most data). Where m is -inf every term is exp(-inf) = 0: exp is taken
// relative to 0 there, so that -inf - -inf never reaches it (masked rows and prefixes).
template <typename T, int VEC, int FAST, typename R>
__device__ __forceinline__ void fold(const R& r, float& m, float& s) {
  const float vm = vmax<T, VEC>(r);
  if (vm > m) {
    s *= ex<FAST>(m - vm);
    m = vm;
  }
  const float b = m == neg_inf() ? 0.0f : m;
  const T* v = reinterpret_cast<const T*>(&r);
#pragma unroll
  for (int k = 0; k < VEC; ++k) s += ex<FAST>(to_f(v[k]) - b);
}

template <typename T, int VEC, int FAST, typename R>
__device__ __forceinline__ R normalised(const R& r, float m, float inv) {
  R o;
  if constexpr (sizeof(T) == 2) {
    const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&r);
    __nv_bfloat162* q = reinterpret_cast<__nv_bfloat162*>(&o);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) {
      const float2 f = __bfloat1622float2(p[k]);
      q[k] = __floats2bfloat162_rn(ex<FAST>(f.x - m) * inv, ex<FAST>(f.y - m) * inv);
    }
  } else {
    const T* v = reinterpret_cast<const T*>(&r);
    T* ov = reinterpret_cast<T*>(&o);
#pragma unroll
    for (int k = 0; k < VEC; ++k) ov[k] = from_f<T>(ex<FAST>(to_f(v[k]) - m) * inv);
  }
  return o;
}

#include "../common/cp_async.cuh"

// Waits until at most N of this thread's cp.async groups are pending (N: an immediate).
template <int N> __device__ __forceinline__ void wait_group() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

template <int HINT, typename R> __device__ __forceinline__ void store(R* p, R v) {
  if constexpr (HINT) __stcs(p, v); else *p = v;
}

}  // namespace softmax_chunked_detail

template <typename T, int BLOCK, int TPR, int VEC, int CHUNKS, int HINT, int FAST_EXP>
__global__ void __launch_bounds__(BLOCK)
    softmax_chunked(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols_ll) {
  static_assert(sizeof(T) * VEC <= 16 && sizeof(T) * VEC >= 4 && (VEC & (VEC - 1)) == 0,
                "VEC: a power of two, 4 to 16 bytes (cp.async copies 4, 8 or 16)");
  static_assert(TPR > 0 && (TPR & (TPR - 1)) == 0 && TPR <= BLOCK && BLOCK % 32 == 0 && BLOCK <= 1024,
                "TPR: a power of two dividing BLOCK, a multiple of the warp size");
  static_assert(CHUNKS >= 1 && CHUNKS <= 8, "CHUNKS: 1 to 8 commit groups");
  using namespace softmax_chunked_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int RPB = BLOCK / TPR;  // rows per block
  constexpr int NW = TPR > 32 ? TPR / 32 : 1;  // warps per row
  __shared__ float red[2][TPR > 32 ? BLOCK / 32 : 1];
  extern __shared__ __align__(16) unsigned char smem[];

  const int cols = static_cast<int>(cols_ll);
  const int nvec = cols / VEC;  // cols % VEC == 0 (a constraint)
  const int slot = threadIdx.x / TPR, lane = threadIdx.x % TPR;
  const long long row = static_cast<long long>(blockIdx.x) * RPB + slot;
  const bool valid = row < rows;  // the last group may be partial; its idle threads still reduce
  const Raw* xv = reinterpret_cast<const Raw*>(x + (valid ? row : 0) * cols_ll);
  Raw* yv = reinterpret_cast<Raw*>(y + (valid ? row : 0) * cols_ll);
  // Vector j = lane + i * TPR of the row is this thread's i-th; it lands at srow[j] and only this
  // thread reads it back. Group c holds iterations [c * per, (c + 1) * per): the row in order.
  Raw* const srow = reinterpret_cast<Raw*>(smem) + slot * static_cast<long long>(nvec);
  const int iters = (nvec + TPR - 1) / TPR;
  const int per = (iters + CHUNKS - 1) / CHUNKS;
  unsigned long long policy = 0;
  if constexpr (HINT) policy = evict_first_policy();

#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) {
    if (valid) {
      const int end = min(iters, (c + 1) * per);
#pragma unroll 4
      for (int i = c * per; i < end; ++i) {
        const int j = lane + i * TPR;
        if (j < nvec) cp_async<sizeof(Raw), HINT != 0>(srow + j, xv + j, policy);
      }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");  // every thread commits every group
  }

  float m = neg_inf(), s = 0.0f;
  auto fold_chunk = [&](int c) {
    if (!valid) return;
    const int end = min(iters, (c + 1) * per);
#pragma unroll 4
    for (int i = c * per; i < end; ++i) {
      const int j = lane + i * TPR;
      if (j < nvec) fold<T, VEC, FAST_EXP>(srow[j], m, s);
    }
  };
  // Group c once at most CHUNKS - 1 - c groups are pending; unrolled, each switch folds to one wait.
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) {
    switch (CHUNKS - 1 - c) {
      case 0: wait_group<0>(); break;
      case 1: wait_group<1>(); break;
      case 2: wait_group<2>(); break;
      case 3: wait_group<3>(); break;
      case 4: wait_group<4>(); break;
      case 5: wait_group<5>(); break;
      case 6: wait_group<6>(); break;
      default: wait_group<7>(); break;
    }
    fold_chunk(c);
  }

  // The row's pair: lanes, then (rows wider than a warp) the warps' pairs through shared memory.
  warp_combine<FAST_EXP, (TPR < 32 ? TPR : 32)>(m, s);
  if constexpr (TPR > 32) {
    const int warp = threadIdx.x / 32, wl = threadIdx.x % 32;
    if (wl == 0) {
      red[0][warp] = m;
      red[1][warp] = s;
    }
    __syncthreads();
    const int first = warp / NW * NW;
    m = wl < NW ? red[0][first + wl] : neg_inf();
    s = wl < NW ? red[1][first + wl] : 0.0f;
    warp_combine<FAST_EXP>(m, s);
  }

  const float inv = 1.0f / s;
  if (valid) {
#pragma unroll 4
    for (int i = 0; i < iters; ++i) {
      const int j = lane + i * TPR;
      if (j < nvec) store<HINT>(yv + j, normalised<T, VEC, FAST_EXP>(srow[j], m, inv));
    }
  }
}
