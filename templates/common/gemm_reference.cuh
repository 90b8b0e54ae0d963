// The float64 reference of a matrix product, shared by the problems that are one: C = A B with A
// m x k row-major and B k x n row-major or (trans_b) n x k, in double precision, and beside each
// element the magnitude of its sum, (|A| |B|)_ij: the scale of any rounding error a correct
// kernel's accumulation can make in that element (a problem's mtol). A problem's reference.cu
// names how its operands read as doubles (scaled, converted) in an Operands type and calls
// gemm_reference from its kernel.
//
// A check must cost a small fraction of the work it checks, so the reference runs at the device's
// FP64 rate: on sm_80 and newer each warp's 32 x 16 tile of C (and of its magnitude) is a grid of
// DMMA m8n8k4 products; older devices take the same tiles with FMAs. Tiles of A and B are converted
// to double once, into shared memory, while the previous tile is multiplied.
//
// Operands: element types A and B, pointers a and b, trans_b (GemmOperandsOf below; PlainOperands reads
// 16- and 32-bit values as stored), and
//   __device__ double a_value(A v, long long row, long long kk) const;  // A(row, kk) as the product reads it
//   __device__ double b_value(B v, long long col, long long kk) const;  // B(kk, col)
// Include after <cuda_bf16.h> and <cuda_fp16.h>.
#pragma once

namespace gemm_ref {

constexpr int BM = 64, BN = 64, BK = 16;
// A row of a shared tile: 16 doubles and 4 of padding, so that the 8 x 4 fragments a warp reads (rows
// 160 bytes apart) fall on distinct banks within each half-warp.
constexpr int LD = BK + 4;
constexpr int THREADS = 256;  // 8 warps, 2 x 4 over the block's tile, each 32 x 16 of it
constexpr int WN = 2;         // the warp's 8 x 8 products along n
constexpr int PER_THREAD = BM * BK / THREADS;  // elements of each tile a thread converts

// acc += a * b for the 8x8x4 fragments of one lane (PTX ISA, mma.m8n8k4 with .f64: a is A[lane/4][lane%4],
// b is B[lane%4][lane/4], d holds D[lane/4][2 (lane%4) + {0, 1}]).
__device__ inline void mma_8x8x4(double (&d)[2], double a, double b) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a), "d"(b));
#endif
}

// C and its magnitude as the product gives them; a problem with an epilogue passes its own.
struct PlainStore {
  __device__ void operator()(double* c, double* c_mag, long long row, long long col, long long n, double v,
                             double mag) const {
    c[row * n + col] = v;
    c_mag[row * n + col] = mag;
  }
};

}  // namespace gemm_ref

// What every Operands type holds: A and B of one element type, and B's layout. A problem's
// reference derives from it, adding a_value and b_value.
template <typename T>
struct GemmOperandsOf {
  using A = T;
  using B = T;
  const T* a;
  const T* b;
  bool trans_b;
};

namespace gemm_ref {
__device__ inline double stored(float v) { return v; }
__device__ inline double stored(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }
__device__ inline double stored(__half v) { return static_cast<double>(__half2float(v)); }
}  // namespace gemm_ref

// The operands as they are stored: every 16- and 32-bit value is exact in double.
template <typename T>
struct PlainOperands : GemmOperandsOf<T> {
  __device__ double a_value(T v, long long, long long) const { return gemm_ref::stored(v); }
  __device__ double b_value(T v, long long, long long) const { return gemm_ref::stored(v); }
};

// The block's 64 x 64 tile of C at (blockIdx.y, blockIdx.x); launch with gemm_ref::THREADS threads.
// put(c, c_mag, row, col, n, value, magnitude) writes each element.
template <typename Operands, typename Store = gemm_ref::PlainStore>
__device__ void gemm_reference(const Operands& op, double* __restrict__ c, double* __restrict__ c_mag, long long m,
                               long long n, long long k, const Store& put = Store{}) {
  using namespace gemm_ref;
  using TA = typename Operands::A;
  using TB = typename Operands::B;
  // A's tile as [m][k], B's as [n][k]: both fragments then read a row of 4 consecutive k.
  __shared__ double as[BM][LD];
  __shared__ double bs[BN][LD];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const long long m0 = static_cast<long long>(blockIdx.y) * BM, n0 = static_cast<long long>(blockIdx.x) * BN;
  const int wm = (warp / 4) * 32, wn = (warp % 4) * 16;  // the warp's 32 x 16 of the block's 64 x 64
  const bool trans_b = op.trans_b;

  // Each thread's elements of a tile, read from global memory into registers ahead of their use (in
  // their own type: the accumulators take most of the registers).
  TA ra[PER_THREAD];
  TB rb[PER_THREAD];
  static_assert(THREADS % BK == 0 && THREADS % BN == 0, "whole rows of the tiles per pass");
  // Thread tid converts rows tid / BK + i * (THREADS / BK) of A's tile at column tid % BK; of B's, the
  // same where B holds rows of k (trans_b), else k row tid / BN + i * (THREADS / BN) at column tid % BN.
  constexpr int A_STEP = THREADS / BK, B_STEP = THREADS / BN;
  const int ar = tid / BK, aq = tid % BK, br = trans_b ? ar : tid / BN, bq = trans_b ? aq : tid % BN;
  // Element i of the thread's share of a tile at k0: its row of A, its column of B and their k.
  auto a_row = [&](int i) { return m0 + ar + i * A_STEP; };
  auto b_col = [&](int i) { return trans_b ? n0 + br + i * A_STEP : n0 + bq; };
  auto b_k = [&](long long k0, int i) { return trans_b ? k0 + bq : k0 + br + i * B_STEP; };
  auto load = [&](long long k0) {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const long long row = a_row(i), kk = k0 + aq, col = b_col(i), kb = b_k(k0, i);
      if (row < m && kk < k) ra[i] = op.a[row * k + kk];
      // trans_b: 16 consecutive threads read 16 consecutive k of B's rows, like A's; else 64
      // consecutive threads read one k's 64 consecutive columns.
      if (col < n && kb < k) rb[i] = trans_b ? op.b[col * k + kb] : op.b[kb * n + col];
    }
  };
  auto store = [&](long long k0) {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const long long row = a_row(i), kk = k0 + aq, col = b_col(i), kb = b_k(k0, i);
      as[ar + i * A_STEP][aq] = row < m && kk < k ? op.a_value(ra[i], row, kk) : 0.0;
      const double bv = col < n && kb < k ? op.b_value(rb[i], col, kb) : 0.0;
      if (trans_b)
        bs[br + i * A_STEP][bq] = bv;
      else
        bs[bq][br + i * B_STEP] = bv;
    }
  };

  double acc[4][WN][2] = {}, mag[4][WN][2] = {};
  const int fr = lane / 4, fk = lane % 4;
  load(0);
  for (long long k0 = 0; k0 < k; k0 += BK) {
    __syncthreads();  // the previous tile's readers are done
    store(k0);
    __syncthreads();
    if (k0 + BK < k) load(k0 + BK);  // in flight while this tile is multiplied
#pragma unroll
    for (int ks = 0; ks < BK; ks += 4) {
#if __CUDA_ARCH__ >= 800
      double fa[4], fb[WN];
#pragma unroll
      for (int i = 0; i < 4; ++i) fa[i] = as[wm + i * 8 + fr][ks + fk];
#pragma unroll
      for (int j = 0; j < WN; ++j) fb[j] = bs[wn + j * 8 + fr][ks + fk];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < WN; ++j) {
          mma_8x8x4(acc[i][j], fa[i], fb[j]);
          mma_8x8x4(mag[i][j], fabs(fa[i]), fabs(fb[j]));
        }
#else
      // The same ownership as the DMMA fragments: lane holds C[lane/4][2 (lane%4) + {0, 1}] of each 8 x 8.
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const double x = as[wm + i * 8 + fr][ks + q];
#pragma unroll
          for (int j = 0; j < WN; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const double y = bs[wn + j * 8 + 2 * fk + h][ks + q];
              acc[i][j][h] = fma(x, y, acc[i][j][h]);
              mag[i][j][h] = fma(fabs(x), fabs(y), mag[i][j][h]);
            }
        }
#endif
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < WN; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long row = m0 + wm + i * 8 + lane / 4, col = n0 + wn + j * 8 + 2 * (lane % 4) + h;
        if (row < m && col < n) put(c, c_mag, row, col, n, acc[i][j][h], mag[i][j][h]);
      }
}
