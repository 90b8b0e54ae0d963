// Hopper wgmma building blocks shared by the matmul templates (sm_90a): the tensor map's layout,
// shared-memory matrix descriptors, the warpgroup fences, m64nNk16 for N = 128 and 256, and the
// store of a warpgroup's accumulators into C or into a shared-memory staging of it for TMA.
// Included inside the template's namespace; the including file has <cuda_bf16.h> and <cuda_fp16.h>
// at its top.

// CUtensorMap's layout (cuda.h does not compile under NVRTC); TMA wants it 64-byte aligned.
struct alignas(64) TmaMap {
  unsigned long long opaque[16];
};

template <typename T> struct IsBf16 { static constexpr bool value = false; };
template <> struct IsBf16<__nv_bfloat16> { static constexpr bool value = true; };

// The bytes from a shared-memory address up to the next 1024-byte boundary, where 128-byte swizzled
// tiles must start (the swizzle pattern repeats every 8 rows of 128 B): the dynamic shared memory's
// base is only 16-byte aligned.
__device__ __forceinline__ unsigned swizzle_pad(unsigned addr) { return (1024 - (addr & 1023)) & 1023; }

// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address, leading
// and stride byte offsets (each >> 4, 14 bits), and the 128-byte swizzle mode (1 in bits 62-63).
__device__ __forceinline__ unsigned long long smem_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>((lbo & 0x3FFFF) >> 4) << 16) |
         (static_cast<unsigned long long>((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// The accumulator operands of a wgmma, d[0..N), as asm constraints, and the names the instruction's
// text gives them: one list for every shape.
#define SOLTUNE_D8(i) \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define SOLTUNE_D32_AT(i) SOLTUNE_D8(i), SOLTUNE_D8(i + 8), SOLTUNE_D8(i + 16), SOLTUNE_D8(i + 24)
#define SOLTUNE_D32 SOLTUNE_D32_AT(0)
#define SOLTUNE_D64 SOLTUNE_D32, SOLTUNE_D32_AT(32)
#define SOLTUNE_D88 SOLTUNE_D64, SOLTUNE_D8(64), SOLTUNE_D8(72), SOLTUNE_D8(80)
#define SOLTUNE_D96 SOLTUNE_D64, SOLTUNE_D32_AT(64)
#define SOLTUNE_D112 SOLTUNE_D96, SOLTUNE_D8(96), SOLTUNE_D8(104)
#define SOLTUNE_D128 SOLTUNE_D96, SOLTUNE_D32_AT(96)
#define SOLTUNE_R32 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define SOLTUNE_R64 SOLTUNE_R32 \
  ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define SOLTUNE_R88 SOLTUNE_R64 \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87"
#define SOLTUNE_R96 SOLTUNE_R64 \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define SOLTUNE_R112 SOLTUNE_R96 \
  ", %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"
#define SOLTUNE_R128 SOLTUNE_R96 \
  ", %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
// One wgmma with f32 accumulators: its shape, its operand types, the accumulators' names (R) and
// constraints (D), the operand numbers of the descriptors and of the scale-d predicate, the
// immediates after the predicate, then the input constraints.
#define SOLTUNE_WGMMA(SHAPE, TYPES, R, D, A, B, P, TAIL, ...) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P ", 0;\n" \
               "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPES " {" R "}, %" #A ", %" #B ", p" TAIL ";\n}\n" \
               : D : __VA_ARGS__)

// D (64 x N, f32: N / 2 registers a thread) += A (64 x 16, descriptor da) * B (16 x N, descriptor db),
// as wgmma_m64n<N>k16<T, TRANS_B>; TRANS_B 1 for B stored MN-major (NN: k rows of n), 0 for K-major
// (NT: n rows of k). H is N / 2, the accumulators a thread holds (SOLTUNE_R<H> and SOLTUNE_D<H> name
// them, pasted so that their commas stay inside SOLTUNE_WGMMA's arguments), then the operand numbers
// of the descriptors, of the scale-d predicate and of the transpose immediate.
#define SOLTUNE_WGMMA16(N, H, A, B, P, TR)                                                                            \
  template <typename T, int TRANS_B>                                                                                \
  __device__ __forceinline__ void wgmma_m64n##N##k16(float (&d)[H], unsigned long long da, unsigned long long db) {  \
    if constexpr (IsBf16<T>::value)                                                                                 \
      SOLTUNE_WGMMA("m64n" #N "k16", "bf16.bf16", SOLTUNE_R##H, SOLTUNE_D##H, A, B, P, ", 1, 1, 0, %" #TR, "l"(da),  \
                    "l"(db), "r"(1), "n"(TRANS_B));                                                                 \
    else                                                                                                            \
      SOLTUNE_WGMMA("m64n" #N "k16", "f16.f16", SOLTUNE_R##H, SOLTUNE_D##H, A, B, P, ", 1, 1, 0, %" #TR, "l"(da),    \
                    "l"(db), "r"(1), "n"(TRANS_B));                                                                 \
  }
SOLTUNE_WGMMA16(128, 64, 64, 65, 66, 67)
SOLTUNE_WGMMA16(192, 96, 96, 97, 98, 99)
SOLTUNE_WGMMA16(224, 112, 112, 113, 114, 115)
SOLTUNE_WGMMA16(256, 128, 128, 129, 130, 131)

// BN: 128 and 256, or 192 and 224 where a tile count of 128 or 256 columns fills the SMs badly
// (n = 14336: 64 tiles of 224 columns against 56 of 256).
template <typename T, int BN, int TB>
__device__ __forceinline__ void mma(float (&d)[BN / 2], unsigned long long da, unsigned long long db) {
  static_assert(BN == 128 || BN == 192 || BN == 224 || BN == 256, "BN: 128, 192, 224 or 256");
  constexpr int TR = TB ? 0 : 1;
  if constexpr (BN == 128)
    wgmma_m64n128k16<T, TR>(d, da, db);
  else if constexpr (BN == 192)
    wgmma_m64n192k16<T, TR>(d, da, db);
  else if constexpr (BN == 224)
    wgmma_m64n224k16<T, TR>(d, da, db);
  else
    wgmma_m64n256k16<T, TR>(d, da, db);
}

__device__ __forceinline__ void store2(__nv_bfloat16* p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void store2(__half* p, float a, float b) { *reinterpret_cast<__half2*>(p) = __floats2half2_rn(a, b); }

__device__ __forceinline__ float2 load2(const __nv_bfloat16* p) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
}
__device__ __forceinline__ float2 load2(const __half* p) { return __half22float2(*reinterpret_cast<const __half2*>(p)); }

__device__ __forceinline__ void store1(__nv_bfloat16* p, float a) { *p = __float2bfloat16_rn(a); }
__device__ __forceinline__ void store1(__half* p, float a) { *p = __float2half_rn(a); }

// Elements (row, col) and (row, col + 1) of C, col even and inside n. Without ANY_N, n is even and
// the pair one 4-byte store; with it, an odd n leaves rows 2-byte aligned and the last column
// without a partner: element by element.
template <bool ANY_N, typename T>
__device__ __forceinline__ void store_pair(T* __restrict__ c, long long row, long long col, long long n, float a, float b) {
  if (!ANY_N || n % 2 == 0) {
    store2(c + row * n + col, a, b);
    return;
  }
  store1(c + row * n + col, a);
  if (col + 1 < n) store1(c + row * n + col + 1, b);
}

// A warpgroup's 64 x BN accumulators into C at rows row0.., columns n0.., guarded by m and n (ANY_N:
// n may be odd, store_pair). m64nNk16's layout: warp w of the warpgroup holds rows 16w..16w+15; per
// 8-column block j a thread holds (r, cc), (r, cc + 1), (r + 8, cc), (r + 8, cc + 1) with
// r = lane / 4, cc = 8j + 2 (lane % 4).
template <int BN, bool ANY_N = false, typename T>
__device__ __forceinline__ void store_acc(T* __restrict__ c, const float (&d)[BN / 2], long long row0, long long n0,
                                          long long m, long long n) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const long long row = row0 + warp * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const long long col = n0 + 8 * j + 2 * (lane % 4);
    if (col < n) {
      if (row < m) store_pair<ANY_N>(c, row, col, n, d[4 * j], d[4 * j + 1]);
      if (row + 8 < m) store_pair<ANY_N>(c, row + 8, col, n, d[4 * j + 2], d[4 * j + 3]);
    }
  }
}

// A consumer's rows x BN accumulators into its shared-memory staging of C, as BN / 64 boxes
// of rows x 64 columns in TMA's 128-byte swizzle (16-byte chunk c of row r at c ^ (r % 8)), which
// keeps each store of 8 rows x 16 bytes free of bank conflicts.
template <int BN, int ROWS, typename T>
__device__ __forceinline__ void stage_acc(unsigned char* sc, const float (&d)[BN / 2], int r0) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int r = r0 + warp * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    unsigned char* const box = sc + (j / 8) * ROWS * 128;
    const int chunk = j % 8, byte = 4 * (lane % 4);
    store2(reinterpret_cast<T*>(box + r * 128 + ((chunk ^ (r % 8)) * 16) + byte), d[4 * j], d[4 * j + 1]);
    store2(reinterpret_cast<T*>(box + (r + 8) * 128 + ((chunk ^ ((r + 8) % 8)) * 16) + byte), d[4 * j + 2], d[4 * j + 3]);
  }
}
