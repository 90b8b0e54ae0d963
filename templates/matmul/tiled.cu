// C = A * B on CUDA cores (SIMT), the classic shared-memory tiled GEMM. A block computes a BM x BN
// tile of C walking k in steps of BK: it stages the A and B slices in shared memory, and each of its
// (BM/TM) * (BN/TN) threads accumulates a TM x TN micro-tile in registers (f32) from fragments it
// reads out of shared memory. Knobs: tile sizes, global load width, padding, A transposed in shared
// memory, the micro-tile's layout, the k-loop unroll, and the pipeline (1 stage; 2 stages through
// registers; 1-3 stages with cp.async). B is k x n row-major (TB 0) or stored n x k (TB 1, the
// problem's trans_b); either way its tile in shared memory is BK rows of BN. Every edge is
// bounds-checked: any m, n, k works, and vector loads fall back to single elements where a row is
// not aligned for them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_epilogue.cuh"

namespace matmul_detail {

__host__ __device__ constexpr int cmin(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int lowbit(int x) { return x & -x; }
__host__ __device__ constexpr int round_up(int x, int to) { return (x + to - 1) / to * to; }
// The most groups, g or g halved (g a power of two), that n vectors split into evenly.
__host__ __device__ constexpr int groups(int g, int n) { return g <= 1 ? 1 : n % g == 0 ? g : groups(g / 2, n); }

// N elements moved as one access (N * sizeof(T) a power of two up to 16 bytes). Accesses go through
// the raw vector type of that size: copies of the struct itself are not reliably vectorized.
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};
template <int BYTES> struct RawOf;
template <> struct RawOf<2> { using type = unsigned short; };
template <> struct RawOf<4> { using type = unsigned int; };
template <> struct RawOf<8> { using type = uint2; };
template <> struct RawOf<16> { using type = uint4; };
template <typename T, int N>
__device__ __forceinline__ Pack<T, N> ld(const T* p) {
  using R = typename RawOf<sizeof(T) * N>::type;
  const R r = *reinterpret_cast<const R*>(p);
  Pack<T, N> x;
  memcpy(&x, &r, sizeof(R));
  return x;
}
template <typename T, int N>
__device__ __forceinline__ void st(T* p, const Pack<T, N>& x) {
  using R = typename RawOf<sizeof(T) * N>::type;
  R r;
  memcpy(&r, &x, sizeof(R));
  *reinterpret_cast<R*>(p) = r;
}
// The same to global memory, spelled out: NVVM split C's vector stores into 4-byte ones otherwise.
template <typename T, int N>
__device__ __forceinline__ void st_global(T* p, const Pack<T, N>& x) {
#if defined(__CUDA_ARCH__)
  unsigned w[sizeof(T) * N >= 4 ? sizeof(T) * N / 4 : 1];
  if constexpr (sizeof(T) * N >= 4) memcpy(w, &x, sizeof(T) * N);
  if constexpr (sizeof(T) * N == 16)
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
  else if constexpr (sizeof(T) * N == 8)
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(w[0]), "r"(w[1]) : "memory");
  else if constexpr (sizeof(T) * N == 4)
    asm volatile("st.global.b32 [%0], %1;" ::"l"(p), "r"(w[0]) : "memory");
  else
    st<T, N>(p, x);
#else
  st<T, N>(p, x);
#endif
}

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }

// Widest access (elements, at most 16 bytes) for a run of N elements that starts at a multiple of N
// in a shared-memory array whose rows are LD elements apart.
template <typename T>
__host__ __device__ constexpr int width(int n, int ld) { return cmin(cmin(lowbit(n), lowbit(ld)), 16 / static_cast<int>(sizeof(T))); }

// N contiguous shared-memory elements into f32 registers, W at a time.
template <typename T, int N, int W>
__device__ __forceinline__ void read_f(const T* p, float* out) {
#pragma unroll
  for (int q = 0; q < N / W; ++q) {
    const Pack<T, W> x = ld<T, W>(p + q * W);
#pragma unroll
    for (int e = 0; e < W; ++e) out[q * W + e] = to_f(x.v[e]);
  }
}

// cp.async of BYTES (4, 8 or 16) from global to shared memory; 16-byte copies bypass L1. Host
// builds (the emulation test) copy at once, or through MATMUL_EMU_CP_ASYNC when they define it.
template <int BYTES>
__device__ __forceinline__ void cp_async(void* dst, const void* src) {
#if defined(__CUDA_ARCH__)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(d), "l"(src), "n"(BYTES));
#elif defined(MATMUL_EMU_CP_ASYNC)
  MATMUL_EMU_CP_ASYNC(dst, src, BYTES);
#else
  for (int i = 0; i < BYTES; ++i) static_cast<char*>(dst)[i] = static_cast<const char*>(src)[i];
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#elif defined(MATMUL_EMU_CP_ASYNC)
  MATMUL_EMU_COMMIT();
#endif
}
// Waits until at most PENDING of this thread's committed groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
#elif defined(MATMUL_EMU_CP_ASYNC)
  MATMUL_EMU_WAIT(PENDING);
#endif
}

__device__ __forceinline__ unsigned dynamic_smem_bytes() {
#if defined(__CUDA_ARCH__)
  unsigned r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
#else
  return ~0u;
#endif
}

// Vector i of thread tid among NT threads that copy a slice of VPR vectors (of VEC elements) per
// row: its row and first column. Where VPR divides NT, a thread's vectors lie whole rows apart, so
// their addresses differ by constants.
template <int NT, int VPR, int VEC>
__device__ __forceinline__ void vector_rc(int tid, int i, int& r, int& cc) {
  if constexpr (NT % VPR == 0) {
    r = tid / VPR + i * (NT / VPR);
    cc = tid % VPR * VEC;
  } else {
    const int v = tid + i * NT;
    r = v / VPR;
    cc = v % VPR * VEC;
  }
}

}  // namespace matmul_detail

// BM x BN x BK: block tile. TM x TN: micro-tile per thread. VEC: elements per global load.
// PAD: elements added to every shared-memory row. STAGES, ASYNC: the pipeline (above). A_T: A stored
// k-major (transposed) in shared memory, so a thread's TM values of A at one k are contiguous.
// SPLIT: the micro-tile's layout. 0: one contiguous TM x TN run. 1: two runs of TM/2 rows (TN/2
// columns) half a block tile apart, so that neighbouring threads read neighbouring shared-memory
// words. 2: warp tiles (CUTLASS's SIMT layout): each warp owns a 4 TM x 8 TN tile of C (8 TM x 4 TN
// where TN >= 2 TM), its lanes a 4 x 8 (8 x 4) grid in it, and a thread's micro-tile is (TM/4) x
// (TN/4) blocks of 4 x 4, 16 (32) rows and 32 (16) columns apart; a warp's read of one k row is then
// at most 8 distinct 16-byte words of A and of B, one shared-memory wavefront each. UNROLL: k steps per iteration of the inner loop over a tile, 0 for
// all of BK (fully unrolled); a step covers at least the KV k values one read of A brings (1 = not
// unrolled beyond that). With A transposed and an even number of steps per iteration (0 or 8), the
// fragments are double-buffered: step kk+1's are read during step kk's FMAs, and the next tile's
// first ones right after its barrier, before the last step's FMAs (the barrier's wait hides behind
// them); with 2 register stages the next tile's loads then go in BK / 8 groups, each in flight for
// 8 k steps, so that a deep tile needs the staging registers of 8 k values only. TB: B's layout,
// compiled in (the argument trans_b is not read); TB 1 loads vectors along B's rows of k and stores
// them transposed, as A_T does for A.
// epi(v, row, col) gives the value stored for each accumulator (common/gemm_epilogue.cuh): the body
// is shared with the kernels that add an epilogue (templates/matmul_epilogue).
template <typename T, int BM, int BN, int BK, int TM, int TN, int VEC, int PAD, int STAGES, int ASYNC, int A_T,
          int SPLIT, int UNROLL, int TB, typename Epi>
__device__ __forceinline__ void matmul_tiled_body(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                                  long long m, long long n, long long k, const Epi& epi) {
  using namespace matmul_detail;
  constexpr int NT = (BM / TM) * (BN / TN);
  constexpr int TX = BN / TN, TY = BM / TM;       // threads along n and m
  constexpr int LX = TN >= 2 * TM ? 4 : 8;        // SPLIT 2: a warp's lanes along n and m, the
  constexpr int LY = 32 / LX;                     // warp tile as square as the micro-tile allows
  constexpr int LDA = A_T ? BM + PAD : BK + PAD;  // A tile: BK rows of BM (A_T) or BM rows of BK
  constexpr int LDB = BN + PAD;                   // B tile: BK rows of BN
  constexpr int EP16 = 16 / static_cast<int>(sizeof(T));
  constexpr int SA = round_up(A_T ? BK * LDA : BM * LDA, EP16);  // stage sizes, 16-byte multiples
  constexpr int SB = round_up(BK * LDB, EP16);
  constexpr int VPR_A = BK / VEC, LA = BM * BK / VEC / NT;  // vectors per tile row, per thread
  constexpr int VPR_B = TB ? BK / VEC : BN / VEC, LB = BK * BN / VEC / NT;
  // The micro-tile: runs of CM rows RS apart, runs of CN columns CS apart.
  constexpr int CM = SPLIT == 2 ? 4 : SPLIT ? TM / 2 : TM, CN = SPLIT == 2 ? 4 : SPLIT ? TN / 2 : TN;
  constexpr int RS = SPLIT == 2 ? LY * CM : BM / 2, CS = SPLIT == 2 ? LX * CN : BN / 2;
  constexpr int KV = A_T ? 1 : cmin(4, width<T>(BK, LDA));           // k values per read of A
  constexpr int WA = A_T ? width<T>(CM, LDA) : width<T>(KV, LDA);   // shared-memory read widths
  constexpr int WB = width<T>(CN, LDB);
  constexpr int WC = cmin(CN, EP16);                                // global store width for C
  constexpr int USTEPS = UNROLL == 0 ? BK : UNROLL;                 // 0: the whole tile
  constexpr int UNR = USTEPS > KV ? USTEPS / KV : 1;                // the pragma's factor
  constexpr bool DB = A_T && USTEPS % 2 == 0;                       // double-buffered fragments
  constexpr int G = DB && !ASYNC && STAGES == 2 ? groups(BK / 8, LA + LB) : 1;  // load groups per tile
  constexpr int GV = (LA + LB) / G;                                 // vectors per group
  static_assert(NT % 32 == 0 && NT >= 32 && NT <= 1024, "threads per block: a multiple of 32 in 32..1024");
  static_assert(BM % TM == 0 && BN % TN == 0 && (!SPLIT || (TM % 2 == 0 && TN % 2 == 0)), "micro-tile must divide the tile");
  static_assert(SPLIT != 2 || (TM % 4 == 0 && TN % 4 == 0 && TX % LX == 0 && TY % LY == 0),
                "warp tiles: 4 x 4 blocks, lanes 4 x 8 within a warp");
  static_assert(VEC * sizeof(T) <= 16 && BK % VEC == 0 && BN % VEC == 0, "VEC: at most 16 bytes, dividing BK and BN");
  static_assert(LA * VEC * NT == BM * BK && LB * VEC * NT == BK * BN && LA > 0 && LB > 0,
                "each thread must load whole vectors of both tiles");
  static_assert(STAGES >= 1 && STAGES <= 3 && (ASYNC || STAGES <= 2), "stages: 1..3 with cp.async, 1..2 without");
  static_assert(!ASYNC || (VEC * sizeof(T) >= 4 && !A_T && !TB && LDA % VEC == 0 && LDB % VEC == 0),
                "cp.async copies 4..16 aligned bytes and cannot transpose");
  static_assert(BK % KV == 0 && BK % USTEPS == 0 && BK % 2 == 0, "k-loop steps must divide BK");

  extern __shared__ __align__(16) unsigned char matmul_smem[];
  if (dynamic_smem_bytes() < static_cast<unsigned>(STAGES * (SA + SB) * sizeof(T))) __trap();

  const int tid = threadIdx.x;
  const long long m0 = static_cast<long long>(blockIdx.y) * BM, n0 = static_cast<long long>(blockIdx.x) * BN;
  const int kt_count = static_cast<int>((k + BK - 1) / BK);
  // Vector loads need every row start aligned: row lengths a multiple of VEC, bases aligned.
  const bool a_vec = k % VEC == 0 && reinterpret_cast<unsigned long long>(a) % (VEC * sizeof(T)) == 0;
  const bool b_vec = (TB ? k : n) % VEC == 0 && reinterpret_cast<unsigned long long>(b) % (VEC * sizeof(T)) == 0;

  // This thread's first row and column of C within the block tile, and micro-tile row i (column j).
  int row0, col0;
  if constexpr (SPLIT == 2) {
    const int warp = tid / 32, lane = tid % 32;
    row0 = warp / (TX / LX) * (LY * TM) + lane / LX * CM;
    col0 = warp % (TX / LX) * (LX * TN) + lane % LX * CN;
  } else {
    row0 = tid / TX * CM;
    col0 = tid % TX * CN;
  }
  auto row_of = [&](int i) { return row0 + i / CM * RS + i % CM; };
  auto col_of = [&](int j) { return col0 + j / CN * CS + j % CN; };

  using P = Pack<T, VEC>;
  // Element-wise fallback: in-range elements, zeros elsewhere (they add nothing to the sums).
  auto gather = [](const T* p, long long avail) {
    P x;
#pragma unroll
    for (int e = 0; e < VEC; ++e) x.v[e] = e < avail ? p[e] : from_f<T>(0.0f);
    return x;
  };
  // Vector i of this thread in the A (B) slice of a k tile: its row and column in the slice (TB 1:
  // its n row and k column in B's n x k storage).
  auto a_rc = [&](int i, int& r, int& cc) { vector_rc<NT, VPR_A, VEC>(tid, i, r, cc); };
  auto b_rc = [&](int i, int& r, int& cc) { vector_rc<NT, VPR_B, VEC>(tid, i, r, cc); };
  // Interior blocks load the k tiles that lie wholly inside k with no checks: a vector's source is
  // its row (column) pointer, formed once, plus the tile's offset. Edge blocks and the last partial
  // tile take the checked path, which forms everything anew from tid: nothing of it stays live
  // across the loop to compete with the accumulators for registers.
  const bool interior = a_vec && b_vec && m0 + BM <= m && n0 + BN <= n &&
                        (TB || BK * n * static_cast<long long>(sizeof(T)) <= 0xffffffffll);
  const int kt_full = interior ? static_cast<int>(k / BK) : 0;  // tiles before kt_full: unchecked
  const T* a_row[LA];
  const T* b_col[LB];
#pragma unroll
  for (int i = 0; i < LA; ++i) {
    int r, cc;
    a_rc(i, r, cc);
    a_row[i] = a + (interior ? (m0 + r) * k + cc : 0);
  }
#pragma unroll
  for (int i = 0; i < LB; ++i) {
    int r, cc;
    b_rc(i, r, cc);
    b_col[i] = b + (!interior ? 0 : TB ? (n0 + r) * k + cc : n0 + cc + static_cast<long long>(r) * n);
  }
  // One wide multiply-add per vector: B row-major steps BK rows of n per tile, which fit 32 bits
  // of bytes in interior blocks.
  const unsigned b_step = static_cast<unsigned>((TB ? BK : BK * n) * static_cast<long long>(sizeof(T)));
  auto a_fast = [&](int i, int kt) { return a_row[i] + kt * BK; };
  auto b_fast = [&](int i, int kt) {
    return reinterpret_cast<const T*>(reinterpret_cast<const char*>(b_col[i]) +
                                      static_cast<unsigned long long>(static_cast<unsigned>(kt)) * b_step);
  };
  // Checked path: the source of vector i in k tile kt and how many of its elements are in range.
  auto a_src = [&](int i, int kt, long long& avail) {
    int r, cc;
    a_rc(i, r, cc);
    const long long gk = static_cast<long long>(kt) * BK + cc;
    avail = m0 + r < m ? k - gk : 0;
    return avail > 0 ? a + (m0 + r) * k + gk : a;
  };
  auto b_src = [&](int i, int kt, long long& avail) {
    int r, cc;
    b_rc(i, r, cc);
    if constexpr (TB) {
      const long long gk = static_cast<long long>(kt) * BK + cc;
      avail = n0 + r < n ? k - gk : 0;
      return avail > 0 ? b + (n0 + r) * k + gk : b;
    } else {
      const long long gk = static_cast<long long>(kt) * BK + r;
      avail = gk < k && n0 + cc < n ? n - (n0 + cc) : 0;
      return avail > 0 ? b + gk * n + n0 + cc : b;
    }
  };
  // Shared-memory destination of element e of vector i.
  auto a_dst = [&](T* as, int i, int e) {
    int r, cc;
    a_rc(i, r, cc);
    return A_T ? as + (cc + e) * LDA + r : as + r * LDA + cc + e;
  };
  auto b_dst = [&](T* bs, int i, int e) {
    int r, cc;
    b_rc(i, r, cc);
    return TB ? bs + (cc + e) * LDB + r : bs + r * LDB + cc + e;
  };
  // Stages are named by their byte offset o, which the k loop carries from tile to tile (with
  // two stages a toggle), so that shared-memory addresses cost one add per base and tile.
  constexpr int STB = (SA + SB) * static_cast<int>(sizeof(T));  // bytes per stage
  auto stage_a = [&](int o) { return reinterpret_cast<T*>(matmul_smem + o); };
  auto stage_b = [&](int o) { return reinterpret_cast<T*>(matmul_smem + o) + SA; };
  auto next_stage = [&](int o) { return STAGES == 2 ? o ^ STB : o + STB == STAGES * STB ? 0 : o + STB; };

  // Register path: fetch a k tile's vectors into registers, then store them into a stage; vector
  // i < LA is A's, the rest B's. Double-buffered, the tile goes in G groups of GV vectors, one
  // group's loads in flight per BK / G k steps, so that a deep tile needs one group's registers.
  P rv[GV];
  auto fetch = [&](int kt, int g) {
    if (kt < kt_full) {
#pragma unroll
      for (int q = 0; q < GV; ++q) {
        const int i = g * GV + q;
        rv[q] = ld<T, VEC>(i < LA ? a_fast(i, kt) : b_fast(i - LA, kt));
      }
      return;
    }
#pragma unroll
    for (int q = 0; q < GV; ++q) {
      const int i = g * GV + q;
      long long avail;
      if (i < LA) {
        const T* p = a_src(i, kt, avail);
        rv[q] = a_vec && avail >= VEC ? ld<T, VEC>(p) : gather(p, avail);
      } else {
        const T* p = b_src(i - LA, kt, avail);
        rv[q] = b_vec && avail >= VEC ? ld<T, VEC>(p) : gather(p, avail);
      }
    }
  };
  auto stash = [&](int o, int g) {
    T* as = stage_a(o);
    T* bs = stage_b(o);
#pragma unroll
    for (int q = 0; q < GV; ++q) {
      const int i = g * GV + q;
      if (i < LA) {
        if constexpr (!A_T && LDA % VEC == 0) {
          st<T, VEC>(a_dst(as, i, 0), rv[q]);
        } else {
#pragma unroll
          for (int e = 0; e < VEC; ++e) *a_dst(as, i, e) = rv[q].v[e];
        }
      } else {
        if constexpr (!TB && LDB % VEC == 0) {
          st<T, VEC>(b_dst(bs, i - LA, 0), rv[q]);
        } else {
#pragma unroll
          for (int e = 0; e < VEC; ++e) *b_dst(bs, i - LA, e) = rv[q].v[e];
        }
      }
    }
  };
  // cp.async path: whole aligned vectors asynchronously, the rest (edges) element-wise at once.
  auto issue = [&](int kt, int o) {
    T* as = stage_a(o);
    T* bs = stage_b(o);
    if (kt < kt_full) {
#pragma unroll
      for (int i = 0; i < LA; ++i) cp_async<VEC * sizeof(T)>(a_dst(as, i, 0), a_fast(i, kt));
#pragma unroll
      for (int i = 0; i < LB; ++i) cp_async<VEC * sizeof(T)>(b_dst(bs, i, 0), b_fast(i, kt));
      return;
    }
#pragma unroll
    for (int i = 0; i < LA; ++i) {
      long long avail;
      const T* p = a_src(i, kt, avail);
      if (a_vec && avail >= VEC) cp_async<VEC * sizeof(T)>(a_dst(as, i, 0), p);
      else st<T, VEC>(a_dst(as, i, 0), gather(p, avail));
    }
#pragma unroll
    for (int i = 0; i < LB; ++i) {
      long long avail;
      const T* p = b_src(i, kt, avail);
      if (b_vec && avail >= VEC) cp_async<VEC * sizeof(T)>(b_dst(bs, i, 0), p);
      else st<T, VEC>(b_dst(bs, i, 0), gather(p, avail));
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  // Fragments of one k step: TM values of A (A transposed), TN of B.
  auto read_a = [&](const T* as, int kk, float* fa) {
#pragma unroll
    for (int h = 0; h < TM / CM; ++h) read_f<T, CM, WA>(as + kk * LDA + row0 + h * RS, fa + h * CM);
  };
  auto read_b = [&](const T* bs, int kk, float* fb) {
#pragma unroll
    for (int h = 0; h < TN / CN; ++h) read_f<T, CN, WB>(bs + kk * LDB + col0 + h * CS, fb + h * CN);
  };
  auto fmas = [&](const float* fa, const float* fb) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
  };
  float fa[2][TM], fb[2][TN];  // DB: step kk's fragments in [kk % 2]
  auto first = [&](int o) {    // DB: the fragments of step 0 of the tile in stage o
    if constexpr (DB) {
      read_a(stage_a(o), 0, fa[0]);
      read_b(stage_b(o), 0, fb[0]);
    }
  };
  // Makes tile kt+1 ready in its stage after tile kt's last fragments are read (one barrier per
  // tile), and, DB, reads its first fragments. cp.async: tiles kt+1 .. kt+STAGES-1 are in flight
  // while tile kt is computed, and tile kt's stage then takes tile kt+STAGES. Registers: tile
  // kt+1's loads were in flight during tile kt and go to the other stage, last read before the
  // barrier that ended tile kt-1.
  auto handoff = [&](int kt, int o) {  // o: tile kt's stage
    if constexpr (STAGES > 1) {
      if (kt + 1 < kt_count) {
        if constexpr (ASYNC) {
          cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt+1 have landed
          __syncthreads();              // everyone's have, and everyone is done with tile kt's stage
          if (kt + STAGES < kt_count) issue(kt + STAGES, o);
          cp_async_commit();  // possibly empty: keeps one group per tile for the wait count
          first(next_stage(o));
        } else {
          stash(o ^ STB, G - 1);
          __syncthreads();
          first(o ^ STB);
        }
      }
    }
  };
  // The FMAs of tile kt (in stage o), with the handoff before the last step's FMAs where
  // fragments are double-buffered, else after them.
  auto tile = [&](int o, int kt) {
    const T* as = stage_a(o);
    const T* bs = stage_b(o);
    if constexpr (DB) {
      // USTEPS (even) steps per iteration; a group's loads start on an iteration's first step.
#pragma unroll 1
      for (int kc = 0; kc < BK; kc += USTEPS) {
#pragma unroll
        for (int ku = 0; ku < USTEPS; ++ku) {
          const int kk = kc + ku;
          if constexpr (!ASYNC && STAGES == 2) {
            constexpr int GS = BK / G;  // steps per group, a multiple of USTEPS or USTEPS == BK
            if ((USTEPS == BK ? ku % GS == 0 : ku == 0 && kc % GS == 0) && kt + 1 < kt_count) {
              const int g = kk / GS;  // group g of tile kt+1 loads, group g-1 is stored
#pragma unroll
              for (int gg = 0; gg < G; ++gg)
                if (gg == g) {
                  if (gg > 0) stash(o ^ STB, gg - 1);
                  fetch(kt + 1, gg);
                }
            }
          }
          if (ku + 1 < USTEPS || kc + USTEPS < BK) {
            read_a(as, kk + 1, fa[(ku + 1) % 2]);
            read_b(bs, kk + 1, fb[(ku + 1) % 2]);
          } else {
            handoff(kt, o);  // the next tile's step 0 into fa[0], fb[0]
          }
          fmas(fa[ku % 2], fb[ku % 2]);
        }
      }
    } else {
#pragma unroll UNR
      for (int kq = 0; kq < BK; kq += KV) {
        float af[TM][KV];
        if constexpr (A_T) {
          float t[TM];
          read_a(as, kq, t);
#pragma unroll
          for (int i = 0; i < TM; ++i) af[i][0] = t[i];
        } else {
#pragma unroll
          for (int i = 0; i < TM; ++i) read_f<T, KV, WA>(as + row_of(i) * LDA + kq, af[i]);
        }
#pragma unroll
        for (int q = 0; q < KV; ++q) {
          float bf[TN];
          read_b(bs, kq + q, bf);
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(af[i][q], bf[j], acc[i][j]);
        }
      }
      handoff(kt, o);
    }
  };

  if constexpr (STAGES == 1) {
    for (int kt = 0; kt < kt_count; ++kt) {
      if constexpr (ASYNC) {
        issue(kt, 0);
        cp_async_commit();
        cp_async_wait<0>();
      } else {
        fetch(kt, 0);
        stash(0, 0);
      }
      __syncthreads();
      first(0);
      tile(0, kt);
      __syncthreads();  // before the next tile overwrites the stage
    }
  } else {
    if constexpr (ASYNC) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        if (s < kt_count) issue(s, s * STB);
        cp_async_commit();
      }
      cp_async_wait<STAGES - 1>();
    } else if (kt_count > 0) {
#pragma unroll
      for (int g = 0; g < G; ++g) {
        fetch(0, g);
        stash(0, g);
      }
    }
    __syncthreads();
    first(0);
    int o = 0;
    for (int kt = 0; kt < kt_count; ++kt) {
      if constexpr (!ASYNC && !DB)
        if (kt + 1 < kt_count) fetch(kt + 1, 0);  // (DB: inside the tile's steps)
      tile(o, kt);
      o = next_stage(o);
    }
  }

  // Epilogue: C in runs of CN columns, WC elements per store where the row is aligned for it.
  const bool c_vec = n % WC == 0 && reinterpret_cast<unsigned long long>(c) % (WC * sizeof(T)) == 0;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const long long gr = m0 + row_of(i);
    if (gr >= m) continue;
#pragma unroll
    for (int j = 0; j < TN; j += WC) {
      const long long gc = n0 + col_of(j);
      if (gc >= n) continue;
      T* p = c + gr * n + gc;
      if (c_vec && gc + WC <= n) {
        Pack<T, WC> o;
#pragma unroll
        for (int e = 0; e < WC; ++e) o.v[e] = from_f<T>(epi(acc[i][j + e], gr, gc + e));
        st_global<T, WC>(p, o);
      } else {
#pragma unroll
        for (int e = 0; e < WC; ++e)
          if (gc + e < n) p[e] = from_f<T>(epi(acc[i][j + e], gr, gc + e));
      }
    }
  }
}

template <typename T, int BM, int BN, int BK, int TM, int TN, int VEC, int PAD, int STAGES, int ASYNC, int A_T,
          int SPLIT, int UNROLL, int TB>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 1)
    matmul_tiled(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, long long m, long long n,
                 long long k, long long trans_b) {
  matmul_tiled_body<T, BM, BN, BK, TM, TN, VEC, PAD, STAGES, ASYNC, A_T, SPLIT, UNROLL, TB>(a, b, c, m, n, k,
                                                                                           gemm_epi::NoEpilogue{});
  (void)trans_b;
}
