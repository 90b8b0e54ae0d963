// Softmax with the rows streamed through the bulk copy engine (sm_90). A block walks its row
// groups (group g: rows [g * RPS, g * RPS + RPS), RPS = BLOCK / TPR, contiguous in memory, so one
// group is one bulk copy): a persistent grid (GPB 0) or GPB consecutive groups per block, as many
// blocks as it takes, which the block scheduler balances over the SMs. A ring of STAGES
// shared-memory buffers keeps the next groups in flight, each completing on its own mbarrier,
// while the current one is reduced and stored: the bytes in flight cost neither registers nor load
// instructions (one cp.async.bulk per 32 KB, issued by one thread). EPT > 0: each thread copies
// its part of the row to registers (vector e * TPR + lane), the buffer goes back to the copy engine
// at once, and the row is finished from registers; EPT 0: the row is reduced and normalised from
// shared memory in three passes, and the buffer refilled after them. x is read once, y written
// once (st.global).
#include <cuda_bf16.h>

namespace softmax_tma_detail {

template <int BYTES> struct RawOf;
template <> struct RawOf<4> { using type = unsigned int; };
template <> struct RawOf<8> { using type = uint2; };
template <> struct RawOf<16> { using type = uint4; };

// -inf (NVRTC has no INFINITY macro).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// FAST: ex2.approx.ftz of d * log2(e), one instruction; a result under 2^-126 becomes 0 beside a
// row sum of at least 1 (templates/softmax/cached.cu says why).
template <int FAST> __device__ __forceinline__ float ex(float d) {
  if constexpr (FAST) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(d * 1.4426950408889634f));
    return y;
  } else {
    return expf(d);
  }
}

// bf16 in pairs: max.bf16x2 on packed pairs, one cvt per output pair (as `cached`).
template <typename T, int VEC, typename R>
__device__ __forceinline__ void max_into(const R& r, float& m, __nv_bfloat162& m2) {
  if constexpr (sizeof(T) == 2) {
    const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&r);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) m2 = __hmax2(m2, p[k]);  // NaN: the other operand, as fmaxf
  } else {
    const T* v = reinterpret_cast<const T*>(&r);
#pragma unroll
    for (int k = 0; k < VEC; ++k) m = fmaxf(m, to_f(v[k]));
  }
}

template <typename T, int VEC, int FAST, typename R> __device__ __forceinline__ float sum_exp(const R& r, float m) {
  const T* v = reinterpret_cast<const T*>(&r);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < VEC; ++k) s += ex<FAST>(to_f(v[k]) - m);
  return s;
}

template <typename T, int VEC, int FAST, typename R> __device__ __forceinline__ R normalised(const R& r, float m, float inv) {
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
    for (int k = 0; k < VEC; ++k) ov[k] = ex<FAST>(v[k] - m) * inv;
  }
  return o;
}

template <int HINT, typename R> __device__ __forceinline__ void store(R* p, R v) {
  if constexpr (HINT) __stcs(p, v); else *p = v;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the copy engine (the async proxy).
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
// Waits for the phase of the given parity to complete (the braces scope the labels).
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n\t.reg .pred p;\n"
      "WAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "\t@!p bra WAIT;\n}" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}
// Orders this thread's reads of a buffer (generic proxy) before the copy engine's next writes to
// it (async proxy): a barrier alone does not, and without it rows came out computed from the
// next group's data (softmax and RMSNorm wrong answers on the H200, session 9).
__device__ __forceinline__ void release_to_copy_engine() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ unsigned long long evict_first_policy() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// Global -> shared bulk copy of `bytes` (a multiple of 16, both addresses 16-byte aligned),
// completing on bar's transaction count. HINT 1: evict-first in L2 (x is read once).
template <int HINT>
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar,
                                          unsigned long long policy) {
  if constexpr (HINT)
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
            smem_u32(dst)),
        "l"(src), "r"(bytes), "r"(smem_u32(bar)), "l"(policy)
        : "memory");
  else
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}

struct MaxOp {
  static __device__ __forceinline__ float id() { return neg_inf(); }
  static __device__ __forceinline__ float op(float a, float b) { return fmaxf(a, b); }
};
struct SumOp {
  static __device__ __forceinline__ float id() { return 0.0f; }
  static __device__ __forceinline__ float op(float a, float b) { return a + b; }
};

template <typename Op, int W> __device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v = Op::op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Over the TPR threads of a row (every thread of the block calls it): shuffles, then for rows
// wider than a warp one exchange through red (BLOCK / 32 floats, one array per call site).
template <typename Op, int TPR> __device__ __forceinline__ float row_reduce(float v, float* red) {
  if constexpr (TPR <= 32) {
    return warp_reduce<Op, TPR>(v);
  } else {
    constexpr int NW = TPR / 32;
    v = warp_reduce<Op, 32>(v);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < NW ? red[warp / NW * NW + lane] : Op::id();
    return warp_reduce<Op, 32>(v);
  }
}

}  // namespace softmax_tma_detail

template <typename T, int BLOCK, int TPR, int VEC, int EPT, int STAGES, int GRID, int GPB, int HINT, int FAST_EXP>
__global__ void __launch_bounds__(BLOCK, GRID)
    softmax_tma(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols_ll) {
  static_assert(sizeof(T) * VEC >= 4 && sizeof(T) * VEC <= 16 && (VEC & (VEC - 1)) == 0,
                "VEC: a power of two, 4 to 16 bytes");
  static_assert(TPR > 0 && (TPR & (TPR - 1)) == 0 && TPR <= BLOCK && BLOCK % 32 == 0 && BLOCK <= 1024,
                "TPR: a power of two dividing BLOCK, a multiple of the warp size");
  static_assert(STAGES >= 1 && STAGES <= 8, "STAGES: 1 to 8 buffers");
  using namespace softmax_tma_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int RPS = BLOCK / TPR;  // rows per group (per stage)
  constexpr unsigned PIECE = 32768;  // bytes per bulk copy instruction
  constexpr bool kInPlace = sizeof(T) == 4;
  __shared__ unsigned long long full[STAGES];
  __shared__ float red[2][TPR > 32 ? BLOCK / 32 : 1];
  extern __shared__ __align__(128) unsigned char smem[];

  const int cols = static_cast<int>(cols_ll);
  const int nvec = cols / VEC;  // cols * sizeof(T) % 16 == 0 (a constraint)
  const long long stage_bytes = static_cast<long long>(RPS) * cols * sizeof(T);
  const long long groups = (rows + RPS - 1) / RPS;
  // This block's groups, k < mine. GPB 0: a persistent grid, group blockIdx.x + k * gridDim.x (the
  // launch has at most `groups` blocks); GPB > 0: groups blockIdx.x * GPB + k, so that the block
  // scheduler balances the SMs (a static share per block left the busiest SMs a group behind).
  const long long first = GPB ? blockIdx.x * static_cast<long long>(GPB) : blockIdx.x;
  const long long step = GPB ? 1 : gridDim.x;
  const long long mine = GPB ? (groups - first < GPB ? groups - first : GPB) : (groups - 1 - blockIdx.x) / gridDim.x + 1;
  const int slot = threadIdx.x / TPR, lane = threadIdx.x % TPR;
  unsigned long long policy = 0;
  if constexpr (HINT) policy = evict_first_policy();

  auto buffer = [&](long long k) { return smem + (k % STAGES) * stage_bytes; };
  auto issue = [&](long long k) {  // thread 0: group k of this block into its buffer
    const long long r0 = (first + k * step) * RPS;
    const long long nr = rows - r0 < RPS ? rows - r0 : RPS;
    const unsigned bytes = static_cast<unsigned>(nr * cols_ll * static_cast<long long>(sizeof(T)));
    unsigned long long* bar = &full[k % STAGES];
    mbar_expect_tx(bar, bytes);
    const unsigned char* src = reinterpret_cast<const unsigned char*>(x + r0 * cols_ll);
    unsigned char* dst = buffer(k);
    for (unsigned off = 0; off < bytes; off += PIECE)
      bulk_load<HINT>(dst + off, src + off, bytes - off < PIECE ? bytes - off : PIECE, bar, policy);
  };

  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (long long k = 0; k < STAGES && k < mine; ++k) issue(k);

  for (long long k = 0; k < mine; ++k) {
    const long long row = (first + k * step) * RPS + slot;
    const bool valid = row < rows;  // the last group may be partial; its idle threads still reduce
    const Raw* srow = reinterpret_cast<const Raw*>(buffer(k)) + static_cast<long long>(slot) * nvec;
    Raw* yv = reinterpret_cast<Raw*>(y + (valid ? row : 0) * cols_ll);
    mbar_wait(&full[k % STAGES], static_cast<unsigned>((k / STAGES) & 1));

    float m = neg_inf();
    __nv_bfloat162 m2 = __bfloat162bfloat162(__ushort_as_bfloat16(0xff80));  // -inf, -inf
    if constexpr (EPT > 0) {
      Raw buf[EPT];
      auto in_reg = [&](int e) { return valid && e * TPR + lane < nvec; };
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        if (in_reg(e)) buf[e] = srow[e * TPR + lane];
      release_to_copy_engine();
      __syncthreads();  // the buffer is in registers: refill it now
      if (threadIdx.x == 0 && k + STAGES < mine) issue(k + STAGES);
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        if (in_reg(e)) max_into<T, VEC>(buf[e], m, m2);
      if constexpr (sizeof(T) == 2) m = fmaxf(m, fmaxf(__low2float(m2), __high2float(m2)));
      m = row_reduce<MaxOp, TPR>(m, red[0]);
      float s = 0.0f;
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        if (in_reg(e)) {
          if constexpr (kInPlace) {  // f32 keeps exp(x - max) where x was; bf16 recomputes it
            float* v = reinterpret_cast<float*>(&buf[e]);
#pragma unroll
            for (int i = 0; i < VEC; ++i) s += (v[i] = ex<FAST_EXP>(v[i] - m));
          } else {
            s += sum_exp<T, VEC, FAST_EXP>(buf[e], m);
          }
        }
      s = row_reduce<SumOp, TPR>(s, red[1]);
      const float inv = 1.0f / s;
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        if (in_reg(e)) {
          if constexpr (kInPlace) {
            float* v = reinterpret_cast<float*>(&buf[e]);
#pragma unroll
            for (int i = 0; i < VEC; ++i) v[i] *= inv;
            store<HINT>(yv + e * TPR + lane, buf[e]);
          } else {
            store<HINT>(yv + e * TPR + lane, normalised<T, VEC, FAST_EXP>(buf[e], m, inv));
          }
        }
    } else {
      if (valid)
        for (int j = lane; j < nvec; j += TPR) max_into<T, VEC>(srow[j], m, m2);
      if constexpr (sizeof(T) == 2) m = fmaxf(m, fmaxf(__low2float(m2), __high2float(m2)));
      m = row_reduce<MaxOp, TPR>(m, red[0]);
      float s = 0.0f;
      if (valid) {
#pragma unroll 4
        for (int j = lane; j < nvec; j += TPR) s += sum_exp<T, VEC, FAST_EXP>(srow[j], m);
      }
      s = row_reduce<SumOp, TPR>(s, red[1]);
      const float inv = 1.0f / s;
      if (valid) {
#pragma unroll 4
        for (int j = lane; j < nvec; j += TPR) store<HINT>(yv + j, normalised<T, VEC, FAST_EXP>(srow[j], m, inv));
      }
      release_to_copy_engine();
      __syncthreads();  // every thread is done with the buffer
      if (threadIdx.x == 0 && k + STAGES < mine) issue(k + STAGES);
    }
  }
}
