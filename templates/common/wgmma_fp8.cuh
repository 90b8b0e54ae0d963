// Hopper's 8-bit float wgmma (sm_90a): m64nNk32 with e4m3 or e5m2 operands, both K-major (the only
// layout FP8 wgmma reads), f32 accumulators, for N = 64, 128, 176 and 192. Included inside the template's
// namespace after wgmma.cuh (its SOLTUNE_WGMMA); the including file has <cuda_fp8.h> at its top.

template <typename T> struct IsE5m2 { static constexpr bool value = false; };
template <> struct IsE5m2<__nv_fp8_e5m2> { static constexpr bool value = true; };

// D (64 x N, f32: N / 2 registers a thread) = A (64 x 32) * B (32 x N) + (accumulate ? D : 0), both
// operands K-major in shared memory (descriptors da, db).
// H = N / 2 accumulators, named by SOLTUNE_R<H> and SOLTUNE_D<H> (wgmma.cuh).
#define SOLTUNE_WGMMA_FP8(N, H, A, B, P)                                                                  \
  if constexpr (IsE5m2<T>::value)                                                                         \
    SOLTUNE_WGMMA("m64n" #N "k32", "e5m2.e5m2", SOLTUNE_R##H, SOLTUNE_D##H, A, B, P, ", 1, 1", "l"(da), "l"(db), \
                  "r"(accumulate));                                                                       \
  else                                                                                                    \
    SOLTUNE_WGMMA("m64n" #N "k32", "e4m3.e4m3", SOLTUNE_R##H, SOLTUNE_D##H, A, B, P, ", 1, 1", "l"(da), "l"(db), \
                  "r"(accumulate))
template <typename T>
__device__ __forceinline__ void wgmma_m64n64k32(float (&d)[32], unsigned long long da, unsigned long long db, int accumulate) {
  SOLTUNE_WGMMA_FP8(64, 32, 32, 33, 34);
}
template <typename T>
__device__ __forceinline__ void wgmma_m64n128k32(float (&d)[64], unsigned long long da, unsigned long long db, int accumulate) {
  SOLTUNE_WGMMA_FP8(128, 64, 64, 65, 66);
}
template <typename T>
__device__ __forceinline__ void wgmma_m64n176k32(float (&d)[88], unsigned long long da, unsigned long long db, int accumulate) {
  SOLTUNE_WGMMA_FP8(176, 88, 88, 89, 90);
}
template <typename T>
__device__ __forceinline__ void wgmma_m64n192k32(float (&d)[96], unsigned long long da, unsigned long long db, int accumulate) {
  SOLTUNE_WGMMA_FP8(192, 96, 96, 97, 98);
}
#undef SOLTUNE_WGMMA_FP8

template <typename T, int BN>
__device__ __forceinline__ void mma_fp8(float (&d)[BN / 2], unsigned long long da, unsigned long long db, int accumulate) {
  if constexpr (BN == 64)
    wgmma_m64n64k32<T>(d, da, db, accumulate);
  else if constexpr (BN == 128)
    wgmma_m64n128k32<T>(d, da, db, accumulate);
  else if constexpr (BN == 176)
    wgmma_m64n176k32<T>(d, da, db, accumulate);
  else
    wgmma_m64n192k32<T>(d, da, db, accumulate);
}
