// C = A * B on tensor cores through mma.sync (sm_80 and newer), 16-bit inputs (bf16 or f16), f32
// accumulation, C stored in the input type. A block computes a BM x BN tile of C; its WM x WN warps
// each own a (BM / WM) x (BN / WN) tile of it, held in registers as m16n8 accumulators. k is walked
// in BK-wide slices through a STAGES-deep ring of shared-memory buffers filled by cp.async, so the
// next STAGES - 1 slices load while one is multiplied. Operands reach the tensor cores through
// ldmatrix, double-buffered across the k16 steps of a slice (FRAG 1: B's; A's a row of tiles at a
// time). B comes in either layout (TB, the problem's trans_b): row-major k x n (NN), its slice
// stored k-major per column and read by ldmatrix .trans; or stored n x k (NT), its slice held like
// A's (n rows of k) and read without .trans. Shared memory is XOR-swizzled in 16-byte chunks:
// neither the cp.async stores nor the ldmatrix reads conflict on banks. The epilogue stages each
// warp's tile through shared memory (as the output type) and writes whole 16-byte runs of rows.
// Split-K (SPLITK > 1): blockIdx.y picks one of SPLITK contiguous, balanced ranges of k slices; the
// block writes its f32 partial tile to scratch, and matmul_splitk_reduce sums the splits into C.
// Any m, n, k works: a row of A or B that is not 16-byte aligned falls back to element loads, or
// with PAD 1 is first copied by matmul_pad into rows padded to 16 bytes; tails are zero-filled, and
// every store is guarded.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/gemm_pad.cuh"
#include "../common/mma16.cuh"

namespace mma_sync_detail {

using namespace mma16;

// Elements between consecutive splits' partial tiles (m x n, row-major): m * n rounded up to 4, so
// that every split starts 16-byte aligned for the reduce's vector loads.
__host__ __device__ __forceinline__ long long splitk_stride(long long m, long long n) { return (m * n + 3) / 4 * 4; }

using gemm_pad::pad8;

// The kernel's body, compiled twice: FAST (both operands by 16-byte cp.async at 32-bit offsets, no
// fallback code in the loop) and the general one, which picks per operand at run time.
// lda, ldb: the elements between rows of A and of B (k and TB ? k : n, or a padded copy's).
template <bool FAST, typename T, int BM, int BN, int BK, int WM, int WN, int STAGES, int SPLITK, int FRAG, int TB>
__device__ __forceinline__ void mma_sync_body(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                              float* __restrict__ partials, long long m, long long n, long long k,
                                              long long lda, long long ldb) {
  constexpr int NT = WM * WN * 32;
  constexpr int WTM = BM / WM, WTN = BN / WN;  // warp tile
  constexpr int FM = WTM / 16, FN = WTN / 8;   // m16n8 accumulator tiles per warp
  constexpr int KK = BK / 16;                  // k16 steps per slice
  constexpr int B_ROWS = TB ? BN : BK;                            // B slice: BK rows of BN, or BN of BK
  constexpr int CPR_A = BK / 8, CPR_B = TB ? BK / 8 : BN / 8, CPR_C = WTN / 8;  // 16-byte chunks per row
  constexpr int A_CH = BM * CPR_A / NT, B_CH = B_ROWS * CPR_B / NT;  // chunks each thread loads per slice
  constexpr unsigned A_BYTES = BM * BK * 2, STAGE_BYTES = (BM + BN) * BK * 2;
  // Split-K stores its partial tile from registers: no staging of C in shared memory.
  constexpr unsigned PIPE_BYTES = STAGES * STAGE_BYTES, EPI_BYTES = SPLITK > 1 ? 0 : BM * BN * 2;
  static_assert(sizeof(T) == 2, "16-bit inputs");
  static_assert(NT >= 32 && NT <= 1024, "threads per block: 32..1024");
  static_assert(BM % (16 * WM) == 0 && BN % (16 * WN) == 0, "warp tiles: multiples of 16 x 16");
  static_assert(BK % 32 == 0, "BK: a multiple of 32 (the fragment double buffer spans two k16 steps)");
  static_assert(A_CH * NT == BM * CPR_A && B_CH * NT == B_ROWS * CPR_B && A_CH > 0 && B_CH > 0,
                "each thread must load whole chunks of both tiles");
  static_assert(NT % CPR_A == 0 && NT % CPR_B == 0, "a thread keeps one chunk column per operand");
  static_assert(A_CH <= 32 && (!TB || B_CH <= 32), "row masks: at most 32 chunks per operand");
  static_assert(STAGES >= 2, "at least two stages");
  static_assert(SPLITK >= 1, "SPLITK: at least 1");
  static_assert(FRAG == 0 || FRAG == 1, "FRAG: 0 or 1");

  extern __shared__ __align__(128) unsigned char matmul_smem[];
  const unsigned smem0 = smem_addr(matmul_smem);
  if (dynamic_smem_bytes() < (PIPE_BYTES > EPI_BYTES ? PIPE_BYTES : EPI_BYTES)) __trap();

  const long long tiles_n = (n + BN - 1) / BN;
  const long long tm = blockIdx.x / tiles_n, tn = blockIdx.x % tiles_n;
  const long long m0 = tm * BM, n0 = tn * BN;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WN, wn = warp % WN;
  // This block's k slices: all of them, or split blockIdx.y's share of a balanced partition (its
  // k values end at k_end; copies past it are zeros).
  int kt_begin = 0, kt_count = static_cast<int>((k + BK - 1) / BK);
  long long k_end = k;
  if constexpr (SPLITK > 1) {
    const long long total = kt_count, s = blockIdx.y;
    kt_begin = static_cast<int>(total * s / SPLITK);
    kt_count = static_cast<int>(total * (s + 1) / SPLITK) - kt_begin;
    const long long e = static_cast<long long>(kt_begin + kt_count) * BK;
    k_end = e < k ? e : k;
  }

  // 16-byte cp.async needs every row start aligned: row length a multiple of 8, base aligned.
  const bool a_fast = lda % 8 == 0 && reinterpret_cast<unsigned long long>(a) % 16 == 0;
  const bool b_fast = ldb % 8 == 0 && reinterpret_cast<unsigned long long>(b) % 16 == 0;
  const bool c_fast = n % 8 == 0 && reinterpret_cast<unsigned long long>(c) % 16 == 0;

  // This thread's copy chunks: A rows a_r0 + i * A_RSTEP at chunk a_c, B rows b_r0 + i * B_RSTEP at
  // chunk b_c (slice rows: k for TB 0, n for TB 1); their element offsets at slice 0 and the strides
  // between them.
  constexpr int A_RSTEP = NT / CPR_A, B_RSTEP = NT / CPR_B;
  const int a_r0 = tid / CPR_A, a_c = tid % CPR_A;
  const int b_r0 = tid / CPR_B, b_c = tid % CPR_B;
  const long long a_off = (m0 + a_r0) * lda + a_c * 8, a_step = A_RSTEP * lda;
  const long long b_off = TB ? (n0 + b_r0) * ldb + b_c * 8 : static_cast<long long>(b_r0) * ldb + n0 + b_c * 8;
  const long long b_step = B_RSTEP * ldb;
  // FAST: every offset from a slice's first chunk fits 32 bits (the kernel checks), so a chunk's
  // address is one wide multiply-add.
  const int a_step32 = static_cast<int>(a_step), b_step32 = static_cast<int>(b_step);
  unsigned a_rows = 0, b_rows = 0;  // bit i: A (TB 1: B) row i of this thread lies inside the matrix
#pragma unroll
  for (int i = 0; i < A_CH; ++i) a_rows |= (m0 + a_r0 + i * A_RSTEP < m ? 1u : 0u) << i;
  if constexpr (TB) {
#pragma unroll
    for (int i = 0; i < B_CH; ++i) b_rows |= (n0 + b_r0 + i * B_RSTEP < n ? 1u : 0u) << i;
  }
  // TB 0: elements of this thread's B chunk inside the matrix
  const long long b_cols_ll = n - (n0 + b_c * 8);
  const int b_cols = b_cols_ll < 0 ? 0 : b_cols_ll > 8 ? 8 : static_cast<int>(b_cols_ll);
  const unsigned short* const a16 = reinterpret_cast<const unsigned short*>(a);
  const unsigned short* const b16 = reinterpret_cast<const unsigned short*>(b);

  // The element-wise fallback: 8 elements from p, those at index >= avail zero.
  auto gather_store = [](unsigned dst, const unsigned short* p, int avail) {
    unsigned w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const unsigned lo = 2 * e < avail ? p[2 * e] : 0u;
      const unsigned hi = 2 * e + 1 < avail ? p[2 * e + 1] : 0u;
      w[e] = lo | hi << 16;
    }
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(w[0]), "r"(w[1]), "r"(w[2]),
                 "r"(w[3])
                 : "memory");
  };

  // Fragments of one k16 step. A (m x k) and B at TB 0 (k x n, transposed by ldmatrix into the col
  // operand): lane l addresses row l % 16, chunk l / 16 of a 16x16 block. TB 1 (n x k): the 8x8
  // matrices are the col operand as they are, and lanes 8i..8i+7 address matrix i of (n 0-7, k 0-7),
  // (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15): b0, b1 of one n8 tile, then of the next. mma
  // takes each tile's b0, b1 as a pair of consecutive registers, which ldmatrix writes in that order
  // (A's lane order would give b0 of both tiles, then b1: a register move per fragment register).
  // FRAG 0: both operands' fragments double-buffered across the k16 steps. FRAG 1: A's loaded a row
  // of tiles at a time, as soon as that row's mma of the step before have read them (16 registers
  // fewer); B's double-buffered (every row reads them).
  unsigned af[FRAG ? 1 : 2][FM][4], bf[2][FN][2];
  auto load_a = [&](int buf, int i, int s, int kk) {
    ldmatrix_x4(af[FRAG ? 0 : buf][i],
                smem0 + s * STAGE_BYTES + swizzle<CPR_A>(wm * WTM + i * 16 + (lane & 15), kk * 2 + (lane >> 4)));
  };
  auto load_b = [&](int buf, int s, int kk) {
    const unsigned sb = smem0 + s * STAGE_BYTES + A_BYTES;
#pragma unroll
    for (int j = 0; j < FN / 2; ++j) {
      if constexpr (TB) {
        ldmatrix_x4(bf[buf][2 * j][0], bf[buf][2 * j][1], bf[buf][2 * j + 1][0], bf[buf][2 * j + 1][1],
                    sb + swizzle<CPR_B>(wn * WTN + j * 16 + (lane & 7) + (lane >> 4) * 8, kk * 2 + (lane >> 3 & 1)));
      } else {
        ldmatrix_x4_trans(bf[buf][2 * j][0], bf[buf][2 * j][1], bf[buf][2 * j + 1][0], bf[buf][2 * j + 1][1],
                          sb + swizzle<CPR_B>(kk * 16 + (lane & 15), wn * (WTN / 8) + 2 * j + (lane >> 4)));
      }
    }
  };

  float acc[FM][FN][4];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  // One k16 step from buffer buf; FRAG 1 loads each row's A fragment for the next step (stage s, k16
  // step kk) behind the row. Serpentine over the n tiles, so consecutive mma share an operand.
  auto mma_step = [&](int buf, int s, int kk) {
#pragma unroll
    for (int i = 0; i < FM; ++i) {
#pragma unroll
      for (int jj = 0; jj < FN; ++jj) {
        const int j = i % 2 ? FN - 1 - jj : jj;
        Mma<T>::run(acc[i][j], af[FRAG ? 0 : buf][i], bf[buf][j]);
      }
      if constexpr (FRAG == 1) load_a(0, i, s, kk);
    }
  };

  // Part `part` (0 .. KK-1) of the block's slice kt's copies into stage s: chunks i with
  // i * KK / CH == part, so that the copies spread over the k16 steps. Chunks outside the matrix (or
  // past the block's last slice) are zeros: they add nothing.
  auto copy_part = [&](int kt, int s, int part) {
    const unsigned sa = smem0 + s * STAGE_BYTES, sb = sa + A_BYTES;
    const long long k0 = static_cast<long long>(kt_begin + kt) * BK, kl = k_end - k0;
    const int kleft = kl <= 0 ? 0 : kl < BK ? static_cast<int>(kl) : BK;  // k values of the slice in range
    const T* pa = a + (a_off + k0);
#pragma unroll
    for (int i = 0; i < A_CH; ++i) {
      if (i * KK / A_CH != part) continue;
      const unsigned dst = sa + swizzle<CPR_A>(a_r0 + i * A_RSTEP, a_c);
      const bool ok = (a_rows >> i & 1) && a_c * 8 < kleft;
      const T* src = FAST ? pa + i * a_step32 : pa + i * a_step;
      if (FAST || a_fast)  // a zero-filled chunk reads nothing: FAST leaves its address as it is
        cp_async16(dst, FAST || ok ? src : a, ok ? 16u : 0u);
      else
        gather_store(dst, ok ? reinterpret_cast<const unsigned short*>(src) : a16, ok ? kleft - a_c * 8 : 0);
    }
    if constexpr (TB) {  // as A: rows of n, chunks along k
      const T* pb = b + (b_off + k0);
#pragma unroll
      for (int i = 0; i < B_CH; ++i) {
        if (i * KK / B_CH != part) continue;
        const unsigned dst = sb + swizzle<CPR_B>(b_r0 + i * B_RSTEP, b_c);
        const bool ok = (b_rows >> i & 1) && b_c * 8 < kleft;
        const T* src = FAST ? pb + i * b_step32 : pb + i * b_step;
        if (FAST || b_fast)
          cp_async16(dst, FAST || ok ? src : b, ok ? 16u : 0u);
        else
          gather_store(dst, ok ? reinterpret_cast<const unsigned short*>(src) : b16, ok ? kleft - b_c * 8 : 0);
      }
    } else {
      const T* pb = b + (b_off + k0 * ldb);
#pragma unroll
      for (int i = 0; i < B_CH; ++i) {
        if (i * KK / B_CH != part) continue;
        const unsigned dst = sb + swizzle<CPR_B>(b_r0 + i * B_RSTEP, b_c);
        const bool ok = b_r0 + i * B_RSTEP < kleft && b_cols > 0;
        const T* src = FAST ? pb + i * b_step32 : pb + i * b_step;
        if (FAST || b_fast)
          cp_async16(dst, FAST || ok ? src : b, ok ? 16u : 0u);
        else
          gather_store(dst, ok ? reinterpret_cast<const unsigned short*>(src) : b16, ok ? b_cols : 0);
      }
    }
  };

  // Slices 0 .. STAGES-2 in flight before the loop; one commit group per slice (empty past the
  // end), so that waiting for all but STAGES-2 groups always means "slice kt+1 has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
#pragma unroll
    for (int part = 0; part < KK; ++part) copy_part(s, s, part);
    cp_async_commit();
  }
  cp_async_wait<STAGES - 2>();
  __syncthreads();

  int rs = 0, ws = STAGES - 1;  // stage read, stage written
#pragma unroll
  for (int i = 0; i < FM; ++i) load_a(0, i, 0, 0);
  load_b(0, 0, 0);
  for (int kt = 0; kt < kt_count; ++kt) {
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) {
      // Slice kt + STAGES - 1 goes to the stage slice kt - 1 used: every warp finished reading it
      // before the last barrier.
      copy_part(kt + STAGES - 1, ws, kk);
      if (kk == KK - 1) {
        cp_async_commit();
        ws = ws + 1 == STAGES ? 0 : ws + 1;
        // Slice kt+1 has landed for everyone, and every warp has read its last fragment of slice kt.
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        rs = rs + 1 == STAGES ? 0 : rs + 1;
      }
      if constexpr (FRAG == 0) {
#pragma unroll
        for (int i = 0; i < FM; ++i) load_a((kk + 1) % 2, i, rs, (kk + 1) % KK);
      }
      load_b((kk + 1) % 2, rs, (kk + 1) % KK);
      mma_step(kk % 2, rs, (kk + 1) % KK);
    }
  }
  cp_async_wait<0>();

  if constexpr (SPLITK > 1) {
    // The f32 partial tile straight from the accumulators: each lane's two adjacent columns as one
    // 8-byte store where n is even (a quad of lanes then fills a 32-byte sector of a row).
    float* const p = partials + blockIdx.y * splitk_stride(m, n);
    const bool p_vec = n % 2 == 0 && reinterpret_cast<unsigned long long>(p) % 8 == 0;
    const long long r0 = m0 + wm * WTM + (lane >> 2), c0 = n0 + wn * WTN + (lane & 3) * 2;
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long gr = r0 + i * 16 + h * 8;
        if (gr >= m) continue;
#pragma unroll
        for (int j = 0; j < FN; ++j) {
          const long long gc = c0 + j * 8;
          float* const q = p + gr * n + gc;
          if (p_vec && gc + 2 <= n) {
            *reinterpret_cast<float2*>(q) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
          } else {
            if (gc < n) q[0] = acc[i][j][2 * h];
            if (gc + 1 < n) q[1] = acc[i][j][2 * h + 1];
          }
        }
      }
    return;
  }

  __syncthreads();  // the pipeline's buffers become the epilogue's

  // Epilogue: each warp writes its tile as T into its own part of shared memory (accumulator rows
  // g and g+8 of each m16n8 tile, two columns per lane), then stores whole 16-byte row runs.
  const unsigned se = smem0 + warp * (WTM * WTN * 2);
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const unsigned v = Mma<T>::pack(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        const unsigned addr = se + swizzle<CPR_C>(i * 16 + h * 8 + (lane >> 2), j) + (lane & 3) * 4;
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
      }
  __syncwarp();
  const long long wr0 = m0 + wm * WTM, wc0 = n0 + wn * WTN;
#pragma unroll
  for (int it = 0; it < WTM * CPR_C / 32; ++it) {
    const int v = lane + it * 32, r = v / CPR_C, ch = v % CPR_C;
    const long long gr = wr0 + r, gc = wc0 + ch * 8;
    if (gr >= m || gc >= n) continue;
    unsigned w[4];
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                 : "r"(se + swizzle<CPR_C>(r, ch))
                 : "memory");
    if (c_fast && gc + 8 <= n) {
      asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(c + gr * n + gc), "r"(w[0]), "r"(w[1]),
                   "r"(w[2]), "r"(w[3])
                   : "memory");
    } else {
      unsigned short* const p = reinterpret_cast<unsigned short*>(c + gr * n + gc);
#pragma unroll
      for (int e = 0; e < 8; ++e)
        if (gc + e < n) p[e] = static_cast<unsigned short>(w[e / 2] >> (16 * (e % 2)));
    }
  }
}

}  // namespace mma_sync_detail

// BM x BN x BK: block tile. WM x WN: warps, each a (BM / WM) x (BN / WN) tile of C. STAGES: shared-
// memory buffers in the cp.async ring. MINB: blocks per SM the registers are budgeted for. SPLITK:
// blocks per tile of C along k (grid y); above 1 they write partials (SPLITK partial tiles of m x n,
// splitk_stride apart) instead of C. PAD 1: an operand whose rows are not a multiple of 8 elements
// (A where k is not; B where k, or n at TB 0, is not) is read from the copy matmul_pad made of it,
// its rows rounded up to 8 with zeros (a_pad: m x pad8(k); b_pad: k x pad8(n), or n x pad8(k)), so
// that the 16-byte cp.async path runs; m, n, k stay the logical sizes. PAD 0: a_pad and b_pad are
// not read. FRAG: how A's fragments are buffered (mma_sync_body). TB: B's layout, the problem's
// trans_b (compiled in; the argument trans_b is not read).
template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES, int MINB, int SPLITK, int PAD, int FRAG,
          int TB>
__global__ void __launch_bounds__(WM * WN * 32, MINB)
    matmul_mma_sync(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, float* __restrict__ partials,
                    const T* __restrict__ a_pad, const T* __restrict__ b_pad, long long m, long long n, long long k,
                    long long trans_b) {
  using namespace mma_sync_detail;
  static_assert(PAD == 0 || PAD == 1, "PAD: 0 or 1");
  const long long lb = TB ? k : n;  // B's row length
  const bool pa = PAD && k % 8 != 0, pb = PAD && lb % 8 != 0;
  const T* const ua = pa ? a_pad : a;
  const T* const ub = pb ? b_pad : b;
  const long long lda = pa ? pad8(k) : k, ldb = pb ? pad8(lb) : lb;
  // FAST: 16-byte aligned rows, and a slice's chunk offsets (under BM rows of A, BN rows (NT) or BK
  // rows (NN) of B) within 32 bits.
  if (lda % 8 == 0 && ldb % 8 == 0 && reinterpret_cast<unsigned long long>(ua) % 16 == 0 &&
      reinterpret_cast<unsigned long long>(ub) % 16 == 0 && BM * lda < (1ll << 31) &&
      (TB ? BN : BK) * ldb < (1ll << 31))
    mma_sync_body<true, T, BM, BN, BK, WM, WN, STAGES, SPLITK, FRAG, TB>(ua, ub, c, partials, m, n, k, lda, ldb);
  else
    mma_sync_body<false, T, BM, BN, BK, WM, WN, STAGES, SPLITK, FRAG, TB>(ua, ub, c, partials, m, n, k, lda, ldb);
}

// Split-K's second launch: c = the sum of the SPLITK partial tiles, added in split order (the
// result does not depend on timing), VEC (4 or 8) consecutive elements of the flat m x n per thread.
// The splits are splitk_stride apart, so every split's vector loads are 16-byte aligned (given an
// aligned partials); the last elements, and pointers not aligned for the vectors, go one at a time.
template <typename T, int VEC, int SPLITK>
__global__ void __launch_bounds__(256)
    matmul_splitk_reduce(const float* __restrict__ partials, T* __restrict__ c, long long m, long long n) {
  using namespace mma_sync_detail;
  static_assert(VEC == 4 || VEC == 8, "VEC: 4 or 8 elements");
  static_assert(SPLITK >= 1, "SPLITK: at least 1");
  const long long total = m * n, stride = splitk_stride(m, n);
  const long long e0 = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
  if (e0 >= total) return;
  if (e0 + VEC <= total && reinterpret_cast<unsigned long long>(partials) % 16 == 0 &&
      reinterpret_cast<unsigned long long>(c) % (VEC * 2) == 0) {
    float4 v[SPLITK][VEC / 4];  // every load issued before the sums
    float s[VEC];
#pragma unroll
    for (int sp = 0; sp < SPLITK; ++sp)
#pragma unroll
      for (int q = 0; q < VEC / 4; ++q)
        v[sp][q] = __ldcs(reinterpret_cast<const float4*>(partials + sp * stride + e0) + q);
#pragma unroll
    for (int q = 0; q < VEC / 4; ++q) {
      s[4 * q] = v[0][q].x, s[4 * q + 1] = v[0][q].y, s[4 * q + 2] = v[0][q].z, s[4 * q + 3] = v[0][q].w;
#pragma unroll
      for (int sp = 1; sp < SPLITK; ++sp) {
        s[4 * q] += v[sp][q].x, s[4 * q + 1] += v[sp][q].y, s[4 * q + 2] += v[sp][q].z, s[4 * q + 3] += v[sp][q].w;
      }
    }
    unsigned w[VEC / 2];
#pragma unroll
    for (int e = 0; e < VEC / 2; ++e) w[e] = Mma<T>::pack(s[2 * e], s[2 * e + 1]);
    if constexpr (VEC == 8)
      asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(c + e0), "r"(w[0]), "r"(w[1]), "r"(w[2]),
                   "r"(w[3])
                   : "memory");
    else
      asm volatile("st.global.v2.b32 [%0], {%1, %2};\n" ::"l"(c + e0), "r"(w[0]), "r"(w[1]) : "memory");
  } else {
    unsigned short* const p = reinterpret_cast<unsigned short*>(c);
    for (long long e = e0; e < e0 + VEC && e < total; ++e) {
      float x = partials[e];
#pragma unroll
      for (int sp = 1; sp < SPLITK; ++sp) x += partials[sp * stride + e];
      p[e] = static_cast<unsigned short>(Mma<T>::pack(x, 0.0f));
    }
  }
}
