// Copies of GEMM operands whose rows are not 16-byte aligned, into rows padded to 8 elements with
// zeros: the 16-byte paths (cp.async, TMA) then read them. A variant declares the copies as scratch
// and launches matmul_pad before its GEMM (templates/matmul/mma_sync.yaml, wgmma_pad.yaml).
#pragma once

namespace gemm_pad {
// A row length rounded up to 8 elements (16 bytes): the rows of the copies.
__host__ __device__ __forceinline__ long long pad8(long long x) { return (x + 7) / 8 * 8; }
}  // namespace gemm_pad

// PAD's copy of one operand: src (rows x cols, row-major) into dst (rows x pad8(cols), 16-byte
// aligned), the columns past cols zero. A thread writes one 16-byte chunk of dst: a block of 32 x 8
// threads covers 32 chunks of 8 rows (grid: cdiv(rows, 8) x cdiv(pad8(cols) / 8, 32)). Where src is
// 16-byte aligned a thread reads the one or two aligned 16-byte vectors that hold its chunk's
// elements and shifts them into place (a row of odd length starts at any element), else it reads
// the elements one at a time.
template <typename T>
__global__ void __launch_bounds__(256)
    matmul_pad(const T* __restrict__ src, T* __restrict__ dst, long long rows, long long cols) {
  using gemm_pad::pad8;
  static_assert(sizeof(T) == 2, "16-bit elements");
  const long long cpr = pad8(cols) / 8;  // chunks per row of dst
  const long long r = static_cast<long long>(blockIdx.x) * 8 + threadIdx.y;
  const long long ch = static_cast<long long>(blockIdx.y) * 32 + threadIdx.x;
  if (r >= rows || ch >= cpr) return;
  const long long c0 = ch * 8;
  const int avail = cols - c0 < 8 ? static_cast<int>(cols - c0) : 8;  // elements of the chunk inside the row
  const long long s = r * cols + c0;  // its first element in src
  const unsigned short* const s16 = reinterpret_cast<const unsigned short*>(src);
  unsigned w[4];
  if (reinterpret_cast<unsigned long long>(src) % 16 == 0) {
    const long long q = s & ~7ll;
    const int off = static_cast<int>(s - q);  // elements of the first vector before the chunk
    unsigned u[8];
    const uint4 v0 = __ldg(reinterpret_cast<const uint4*>(s16 + q));
    // the second vector only where the chunk reaches into it: past the matrix's last element it may lie
    // outside the buffer
    const uint4 v1 = off + avail > 8 ? __ldg(reinterpret_cast<const uint4*>(s16 + q) + 1) : make_uint4(0, 0, 0, 0);
    u[0] = v0.x, u[1] = v0.y, u[2] = v0.z, u[3] = v0.w, u[4] = v1.x, u[5] = v1.y, u[6] = v1.z, u[7] = v1.w;
    const int sh = off >> 1;  // whole words to skip, then half a word where off is odd
    unsigned x[5];
#pragma unroll
    for (int j = 0; j < 5; ++j) x[j] = sh == 0 ? u[j] : sh == 1 ? u[j + 1] : sh == 2 ? u[j + 2] : u[j + 3];
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = off & 1 ? __funnelshift_r(x[j], x[j + 1], 16) : x[j];
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = 2 * j >= avail ? 0u : 2 * j + 1 >= avail ? w[j] & 0xffffu : w[j];
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned lo = 2 * j < avail ? s16[s + 2 * j] : 0u, hi = 2 * j + 1 < avail ? s16[s + 2 * j + 1] : 0u;
      w[j] = lo | hi << 16;
    }
  }
  *reinterpret_cast<uint4*>(dst + r * cpr * 8 + c0) = make_uint4(w[0], w[1], w[2], w[3]);
}
