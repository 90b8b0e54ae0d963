// The wgmmas a fused attention needs beside wgmma.cuh's: S (64 x N) = A B with both operands K-major
// in shared memory and the accumulate predicate a run-time value (a tile's first k step writes, the
// rest add), and D (64 x N) += A B with A in registers (a warpgroup's probabilities, never staged in
// shared memory) and B MN-major in shared memory (V's rows of d values). 16-bit inputs, f32
// accumulators, N = 64, 128 and 256. Included inside the template's namespace after wgmma.cuh (its
// SOLTUNE_WGMMA, SOLTUNE_R<H>, SOLTUNE_D<H> and IsBf16).

// Shared-memory A and B, both K-major: wgmma_ss<T, N>(d, da, db, accumulate).
#define SOLTUNE_WGMMA_SS(N, H, A, B, P)                                                                           \
  template <typename T>                                                                                           \
  __device__ __forceinline__ void wgmma_ss_n##N(float (&d)[H], unsigned long long da, unsigned long long db, int accumulate) { \
    if constexpr (IsBf16<T>::value)                                                                               \
      SOLTUNE_WGMMA("m64n" #N "k16", "bf16.bf16", SOLTUNE_R##H, SOLTUNE_D##H, A, B, P, ", 1, 1, 0, 0", "l"(da),  \
                    "l"(db), "r"(accumulate));                                                                    \
    else                                                                                                          \
      SOLTUNE_WGMMA("m64n" #N "k16", "f16.f16", SOLTUNE_R##H, SOLTUNE_D##H, A, B, P, ", 1, 1, 0, 0", "l"(da),    \
                    "l"(db), "r"(accumulate));                                                                    \
  }
SOLTUNE_WGMMA_SS(64, 32, 32, 33, 34)
SOLTUNE_WGMMA_SS(128, 64, 64, 65, 66)
#undef SOLTUNE_WGMMA_SS

// A from four registers a thread (the m64k16 fragment: rows r and r + 8 of the warp's 16, columns
// 2 (lane % 4) and + 8, as an accumulator's two 8-column blocks hold them), B MN-major (transposed).
#define SOLTUNE_WGMMA_RS_ASM(SHAPE, TYPES, R, D, A0, A1, A2, A3, B)                                                 \
  asm volatile("wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPES " {" R "}, {%" #A0 ", %" #A1 ", %" #A2         \
               ", %" #A3 "}, %" #B ", 1, 1, 1, 1;\n"                                                                \
               : D : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db))
#define SOLTUNE_WGMMA_RS(N, H, A0, A1, A2, A3, B)                                                                   \
  template <typename T>                                                                                             \
  __device__ __forceinline__ void wgmma_rs_n##N(float (&d)[H], const unsigned (&a)[4], unsigned long long db) {     \
    if constexpr (IsBf16<T>::value)                                                                                 \
      SOLTUNE_WGMMA_RS_ASM("m64n" #N "k16", "bf16.bf16", SOLTUNE_R##H, SOLTUNE_D##H, A0, A1, A2, A3, B);           \
    else                                                                                                            \
      SOLTUNE_WGMMA_RS_ASM("m64n" #N "k16", "f16.f16", SOLTUNE_R##H, SOLTUNE_D##H, A0, A1, A2, A3, B);             \
  }
SOLTUNE_WGMMA_RS(64, 32, 32, 33, 34, 35, 36)
SOLTUNE_WGMMA_RS(128, 64, 64, 65, 66, 67, 68)
SOLTUNE_WGMMA_RS(256, 128, 128, 129, 130, 131, 132)
#undef SOLTUNE_WGMMA_RS
#undef SOLTUNE_WGMMA_RS_ASM

template <typename T, int N>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], unsigned long long da, unsigned long long db, int accumulate) {
  static_assert(N == 64 || N == 128, "N: 64 or 128");
  if constexpr (N == 64)
    wgmma_ss_n64<T>(d, da, db, accumulate);
  else
    wgmma_ss_n128<T>(d, da, db, accumulate);
}
template <typename T, int N>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const unsigned (&a)[4], unsigned long long db) {
  static_assert(N == 64 || N == 128 || N == 256, "N: 64, 128 or 256");
  if constexpr (N == 64)
    wgmma_rs_n64<T>(d, a, db);
  else if constexpr (N == 128)
    wgmma_rs_n128<T>(d, a, db);
  else
    wgmma_rs_n256<T>(d, a, db);
}
