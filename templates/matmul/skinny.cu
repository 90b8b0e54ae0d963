// Skinny GEMM, the decode step's C = A B^T with few rows (m up to 64): B (NT: n x k row-major, a
// weight) is streamed once from memory, straight into mma.sync m16n8k16 fragments, with no shared
// memory on the way; A (m x k, small) is read through L1 by every warp. A block takes 8 J rows of B
// (8 J columns of C), its WARPS warps split k between them, and their partial tiles are summed in
// shared memory in warp order (the result does not depend on timing).
//
// The fragments come from 16-byte loads. Lane (r, q) = (lane / 4, lane % 4) loads elements
// 8q .. 8q + 7 of a 32-wide chunk of k from its row of B and from rows r and r + 8 of A's tile, and
// the chunk's two k16 steps take them in a permuted order of k: the first step's k pairs (2q, 2q + 1)
// and (2q + 8, 2q + 9) are elements (8q, 8q + 1) and (8q + 2, 8q + 3), the second's are
// (8q + 4, 8q + 5) and (8q + 6, 8q + 7). A and B share the permutation, so every product of the
// sum is still A(i, kk) B(kk, j) once.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/mma16.cuh"

// T: bf16 or f16. MT: 16-row tiles of A (m <= 16 MT). J: n8 tiles per block (8 J columns of C).
// WARPS: warps per block, each a contiguous share of k's 32-wide chunks. U: chunks each warp loads
// before it multiplies them (the bytes in flight). PREFETCH 1: the next U chunks load while U are
// multiplied (twice the bytes in flight and the registers). B must be n x k (trans_b 1), k a
// multiple of 8.
template <typename T, int MT, int J, int WARPS, int U, int PREFETCH>
__global__ void __launch_bounds__(WARPS * 32)
    matmul_skinny(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, long long m, long long n,
                  long long k, long long trans_b) {
  using mma16::Mma;
  static_assert(MT >= 1 && J >= 1 && WARPS >= 1 && U >= 1 && (PREFETCH == 0 || PREFETCH == 1), "positive tile counts");
  static_assert(WARPS * MT * J * 4 * 32 * 4 <= 48 * 1024, "the warps' partial tiles fit static shared memory");
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int r = lane / 4, q = lane % 4;
  const long long n0 = static_cast<long long>(blockIdx.x) * (8 * J);
  const long long chunks = (k + 31) / 32, per = (chunks + WARPS - 1) / WARPS;
  const long long first = warp * per, last = min(chunks, first + per);

  // This lane's rows of B and of A's tiles (a row past n or m reads as zeros).
  const T* brow[J];
  bool bin[J];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const long long row = n0 + 8 * j + r;
    bin[j] = row < n;
    brow[j] = b + (bin[j] ? row : 0) * k + 8 * q;
  }
  const T* arow[MT][2];
  bool ain[MT][2];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = 16 * i + 8 * h + r;
      ain[i][h] = row < m;
      arow[i][h] = a + (ain[i][h] ? row : 0) * k + 8 * q;
    }

  float acc[MT][J][4] = {};
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  // B is read once in the whole product: streamed past L1 and first out of L2. U chunks from ch on.
  auto load = [&](long long ch, uint4 (&w)[U][J]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long kk = (ch + u) * 32 + 8 * q;
      const bool in = ch + u < last && kk < k;
#pragma unroll
      for (int j = 0; j < J; ++j) w[u][j] = in && bin[j] ? __ldcs(reinterpret_cast<const uint4*>(brow[j] + (ch + u) * 32)) : zero;
    }
  };
  uint4 w[U][J];
  if constexpr (PREFETCH) load(first, w);
  for (long long ch = first; ch < last; ch += U) {
    // PREFETCH: the next U chunks load while these are multiplied; else these load, then multiply.
    uint4 next[U][J];
    if constexpr (PREFETCH) load(ch + U, next);
    else load(ch, w);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long kk = (ch + u) * 32 + 8 * q;
      const bool in = ch + u < last && kk < k;
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        // A is read by every block: kept in L1 and L2.
        const uint4 x0 = in && ain[i][0] ? __ldg(reinterpret_cast<const uint4*>(arow[i][0] + (ch + u) * 32)) : zero;
        const uint4 x1 = in && ain[i][1] ? __ldg(reinterpret_cast<const uint4*>(arow[i][1] + (ch + u) * 32)) : zero;
        const unsigned a0[4] = {x0.x, x1.x, x0.y, x1.y}, a1[4] = {x0.z, x1.z, x0.w, x1.w};
#pragma unroll
        for (int j = 0; j < J; ++j) {
          const unsigned b0[2] = {w[u][j].x, w[u][j].y}, b1[2] = {w[u][j].z, w[u][j].w};
          Mma<T>::run(acc[i][j], a0, b0);
          Mma<T>::run(acc[i][j], a1, b1);
        }
      }
    }
    if constexpr (PREFETCH) {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < J; ++j) w[u][j] = next[u][j];
    }
  }

  // The warps' partial tiles, summed in warp order. Element e of tile (i, j) in lane (r, q) is
  // C(16 i + r + 8 (e / 2), n0 + 8 j + 2 q + e % 2).
  constexpr int PER_WARP = MT * J * 4 * 32;
  __shared__ float part[WARPS * PER_WARP];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) part[warp * PER_WARP + ((i * J + j) * 4 + e) * 32 + lane] = acc[i][j][e];
  __syncthreads();
  for (int idx = static_cast<int>(threadIdx.x); idx < PER_WARP; idx += WARPS * 32) {
    float s = part[idx];
#pragma unroll
    for (int w2 = 1; w2 < WARPS; ++w2) s += part[w2 * PER_WARP + idx];
    const int l = idx % 32, e = (idx / 32) % 4, tile = idx / 128, i = tile / J, j = tile % J;
    const long long row = 16 * i + l / 4 + 8 * (e / 2), col = n0 + 8 * j + 2 * (l % 4) + e % 2;
    if (row < m && col < n) {
      const unsigned packed = Mma<T>::pack(s, 0.0f);
      reinterpret_cast<unsigned short*>(c)[row * n + col] = static_cast<unsigned short>(packed & 0xffffu);
    }
  }
  (void)trans_b;
}
