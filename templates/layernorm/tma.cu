// LayerNorm with the rows streamed through the bulk copy engine (sm_90), as softmax's `tma`: a
// block walks its row groups (RPS = BLOCK / TPR contiguous rows, one bulk copy each), persistent
// (GPB 0) or GPB consecutive groups per block, through a ring of STAGES shared-memory buffers, each
// completing on an mbarrier. Each thread copies its vectors of the row to registers, the buffer goes
// back to the copy engine at once, and the row is finished from registers: the mean, then the
// centred squares (two reductions, exact for rows far from zero because the row's first element is
// subtracted first); weight and bias are loaded once per block and kept in registers (a thread owns
// the same columns in every row). The bytes in flight cost neither registers nor load instructions.
#include <cuda_bf16.h>

namespace ln_tma_detail {

template <int BYTES> struct RawOf;
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
// VEC floats into one vector of T: bf16 in pairs, one cvt.rn.bf16x2.f32 each.
template <typename T, typename R, int VEC> __device__ __forceinline__ R pack(const float (&f)[VEC]) {
  R r;
  if constexpr (sizeof(T) == 2) {
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


// Sum over the TPR threads of a row (every thread of the block calls it, every thread gets the
// result): shuffles, then for rows wider than a warp one exchange through red (BLOCK / 32 floats).
template <int TPR> __device__ __forceinline__ float row_sum(float v, float* red) {
#pragma unroll
  for (int o = (TPR < 32 ? TPR : 32) / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if constexpr (TPR > 32) {
    constexpr int NW = TPR / 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = red[warp / NW * NW + lane % NW];  // each NW lanes hold all partials of the row
#pragma unroll
    for (int o = NW / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  }
  return v;
}

}  // namespace ln_tma_detail

template <typename T, int BLOCK, int TPR, int VEC, int EPT, int STAGES, int GRID, int GPB, int HINT>
__global__ void __launch_bounds__(BLOCK, GRID)
    layernorm_tma(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias,
                  T* __restrict__ y, long long rows, long long cols_ll, float eps) {
  static_assert(sizeof(T) * VEC >= 4 && sizeof(T) * VEC <= 16 && (VEC & (VEC - 1)) == 0,
                "VEC: a power of two, 4 to 16 bytes");
  static_assert(TPR > 0 && (TPR & (TPR - 1)) == 0 && TPR <= BLOCK && BLOCK % 32 == 0 && BLOCK <= 1024,
                "TPR: a power of two dividing BLOCK");
  static_assert(STAGES >= 1 && STAGES <= 8 && EPT >= 1, "STAGES: 1 to 8 buffers; EPT: at least one vector");
  using namespace ln_tma_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int RPS = BLOCK / TPR;   // rows per group (per buffer)
  constexpr unsigned PIECE = 32768;  // bytes per bulk copy instruction
  __shared__ unsigned long long full[STAGES];
  __shared__ float red[2][TPR > 32 ? BLOCK / 32 : 1];
  extern __shared__ __align__(128) unsigned char smem[];

  const int cols = static_cast<int>(cols_ll);
  const int nvec = cols / VEC;  // cols * sizeof(T) % 16 == 0 (a constraint)
  const float inv_n = 1.0f / static_cast<float>(cols);
  const long long stage_bytes = static_cast<long long>(RPS) * cols * sizeof(T);
  const long long groups = (rows + RPS - 1) / RPS;
  // This block's groups, k < mine: persistent (GPB 0; the launch has at most `groups` blocks) or
  // GPB consecutive groups per block, balanced over the SMs by the block scheduler.
  const long long first = GPB ? blockIdx.x * static_cast<long long>(GPB) : blockIdx.x;
  const long long step = GPB ? 1 : gridDim.x;
  const long long mine = GPB ? (groups - first < GPB ? groups - first : GPB) : (groups - 1 - blockIdx.x) / gridDim.x + 1;
  const int slot = threadIdx.x / TPR, lane = threadIdx.x % TPR;
  auto inside = [&](int e) { return e * TPR + lane < nvec; };  // vector e of this thread: e * TPR + lane
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
  Raw wr[EPT], br[EPT];
#pragma unroll
  for (int e = 0; e < EPT; ++e)
    if (inside(e)) {
      wr[e] = __ldg(reinterpret_cast<const Raw*>(weight) + e * TPR + lane);
      br[e] = __ldg(reinterpret_cast<const Raw*>(bias) + e * TPR + lane);
    }

  for (long long k = 0; k < mine; ++k) {
    const long long row = (first + k * step) * RPS + slot;
    const bool valid = row < rows;  // the last group may be partial; its idle threads still reduce
    const Raw* srow = reinterpret_cast<const Raw*>(buffer(k)) + static_cast<long long>(slot) * nvec;
    mbar_wait(&full[k % STAGES], static_cast<unsigned>((k / STAGES) & 1));
    Raw r[EPT];
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (valid && inside(e)) r[e] = srow[e * TPR + lane];
    // A value of the row, subtracted first: without it the f32 mean of a row with a large common
    // offset loses the digits the edge-value check needs (layernorm/rowreg.cu).
    const float pivot = valid ? to_f(reinterpret_cast<const T*>(srow)[0]) : 0.f;
    release_to_copy_engine();
    __syncthreads();  // the group is in registers: its buffer goes back to the copy engine
    if (threadIdx.x == 0 && k + STAGES < mine) issue(k + STAGES);
    float v[EPT][VEC];
    float s = 0.f;
#pragma unroll
    for (int e = 0; e < EPT; ++e) {
      if (valid && inside(e)) {
        unpack<T>(r[e], v[e]);
#pragma unroll
        for (int i = 0; i < VEC; ++i) v[e][i] -= pivot;
      } else {
#pragma unroll
        for (int i = 0; i < VEC; ++i) v[e][i] = 0.f;
      }
#pragma unroll
      for (int i = 0; i < VEC; ++i) s += v[e][i];
    }
    const float mean = row_sum<TPR>(s, red[0]) * inv_n;
    float q = 0.f;
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (valid && inside(e)) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) q = fmaf(v[e][i] - mean, v[e][i] - mean, q);
      }
    const float rstd = rsqrtf(row_sum<TPR>(q, red[1]) * inv_n + eps);
    Raw* yv = reinterpret_cast<Raw*>(y + (valid ? row : 0) * cols_ll);
#pragma unroll
    for (int e = 0; e < EPT; ++e) {
      if (!(valid && inside(e))) continue;
      float w[VEC], b[VEC], o[VEC];
      unpack<T>(wr[e], w);
      unpack<T>(br[e], b);
#pragma unroll
      for (int i = 0; i < VEC; ++i) o[i] = fmaf((v[e][i] - mean) * rstd, w[i], b[i]);
      store<HINT>(yv + e * TPR + lane, pack<T, Raw>(o));
    }
  }
}
