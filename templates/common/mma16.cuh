// mma.sync m16n8k16 on 16-bit inputs with f32 accumulation, and what feeds it: cp.async copies into
// XOR-swizzled shared memory and ldmatrix reads out of it (sm_80 and newer).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace mma16 {

// The mma.sync flavour for the input type (f16 or bf16), and a pair of floats packed into it.
template <typename T> constexpr bool kHalf = false;
template <> constexpr bool kHalf<__half> = true;
template <typename T> constexpr bool kBf16 = false;
template <> constexpr bool kBf16<__nv_bfloat16> = true;
#define SOLTUNE_MMA_SYNC(TYPE)                                                                            \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE                                     \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"                   \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                           \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
template <typename T> struct Mma {
  static_assert(kHalf<T> || kBf16<T>, "mma.sync m16n8k16 takes f16 or bf16");
  static __device__ __forceinline__ void run(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    if constexpr (kHalf<T>) SOLTUNE_MMA_SYNC("f16");
    else SOLTUNE_MMA_SYNC("bf16");
  }
  static __device__ __forceinline__ unsigned pack(float lo, float hi) {
    unsigned r;
    if constexpr (kHalf<T>) {
      const __half2 v = __floats2half2_rn(lo, hi);
      memcpy(&r, &v, 4);
    } else {
      const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
      memcpy(&r, &v, 4);
    }
    return r;
  }
};
#undef SOLTUNE_MMA_SYNC

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1; SRC_BYTES 0 writes zeros and reads nothing.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, unsigned src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                                                  unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// Byte offset of 16-byte chunk c of row r in a tile of CPR chunks per row. Eight consecutive rows
// at one chunk (an ldmatrix, an accumulator row group) land in eight different 16-byte bank groups,
// and each 128-byte run of chunks is a permutation of itself (cp.async stores, row reads). Rows of
// fewer than 8 chunks share a 128-byte line, so the XOR comes from the line index then.
template <int CPR>
__device__ __forceinline__ unsigned swizzle(int r, int c) {
  static_assert(CPR >= 2 && (CPR & (CPR - 1)) == 0, "chunks per row: a power of two, at least 2");
  if constexpr (CPR >= 8)
    return static_cast<unsigned>(r * CPR + (c ^ (r & 7))) * 16u;
  else
    return static_cast<unsigned>(r * CPR + (c ^ ((r / (8 / CPR)) & (CPR - 1)))) * 16u;
}


// The dynamic shared memory the launch gave: a kernel checks it against what its tiles need.
__device__ __forceinline__ unsigned dynamic_smem_bytes() {
  unsigned r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

}  // namespace mma16
