// LayerNorm with the row held in registers (the Apex / OneFlow / Liger design): TPR threads share
// a row (a warp up to a whole block), RPB rows per block; each thread loads EPT vectors of VEC
// elements, all issued before the first use, so x is read from memory exactly once. f32 statistics
// are taken on x - x[row, 0] (a value of the row: it keeps the mean of a row with a large common
// offset exact in f32). The grid is a block per row group, or persistent (BPS blocks per SM
// looping over row groups), where weight and bias may stay in registers across rows and the next
// row group's loads may be in flight while the current one is reduced (PIPE). WIDTH 1 compiles the
// task's width in (COLS): with a row that fills its threads exactly, no access needs a bounds check.
#include <cuda_bf16.h>

namespace ln_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/group_allreduce.cuh"
#include "../common/ln_stats.cuh"

}  // namespace ln_detail

// BPS: the blocks per SM asked of __launch_bounds__ (it caps registers), and in persistent mode
// the grid's blocks per SM. PIPE 1 (persistent only): the loads of a block's next row group are
// issued into a second register buffer (raw, the pivot subtracted later) before the current one is
// reduced and stored, so that they are in flight while the block waits on its barriers.
template <typename T, int TPR, int RPB, int VEC, int EPT, int STATS, int RED, int PERSIST, int BPS, int WREG, int PIPE,
          int HINT, int WIDTH, long long COLS>
__global__ void __launch_bounds__(TPR * RPB, BPS)
layernorm_rowreg(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias,
                 T* __restrict__ y, long long rows, long long cols_arg, float eps) {
  using namespace ln_detail;
  static_assert(TPR % 32 == 0 && TPR * RPB <= 1024, "TPR: whole warps; a block of at most 1024 threads");
  static_assert(VEC > 0 && (VEC & (VEC - 1)) == 0 && VEC * sizeof(T) <= 16, "VEC: a power of two, at most 16 bytes");
  static_assert(STATS >= 0 && STATS <= 2 && (RED == 0 || RED == 1), "STATS in 0..2, RED in 0..1");
  static_assert(PIPE == 0 || PERSIST == 1, "rows are pipelined only across the row groups of a persistent block");
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  using S = typename StatsOf<STATS>::type;
  constexpr int SLOTS = RED ? TPR * RPB : RPB * TPR / 32;
  __shared__ S scratch[2][SLOTS];

  static_assert(WREG == 0 || PERSIST == 1, "weights stay in registers only across the rows of a persistent block");
  const long long cols = WIDTH ? COLS : cols_arg;
  // Every vector of every thread inside the row: the width is known and the threads cover it exactly.
  constexpr bool FULL = WIDTH && COLS == static_cast<long long>(TPR) * VEC * EPT;
  const int lane = threadIdx.x % TPR;
  const long long groups = (rows + RPB - 1) / RPB;
  const float inv_n = 1.0f / static_cast<float>(cols);
  // Vector e of a thread starts at column (e * TPR + lane) * VEC: a warp's accesses are contiguous.
  auto col = [&](int e) { return static_cast<long long>(e * TPR + lane) * VEC; };
  auto row_of = [&](long long g) { return g * RPB + threadIdx.x / TPR; };
  auto inside = [&](int e) { return FULL || col(e) < cols; };
  // f32 statistics are taken on x - x[row, 0]: without it, STATS 0's mean of a row with a large
  // common offset failed the f32 edge-value check (17 wrong answers, docs/FINDINGS.md). bf16
  // skips it: its inputs carry 8 significant bits, so the f32 mean's rounding (about 2^-19 of |x|
  // here) stays far below the output's own rounding (2^-9), and the subtraction and the extra load
  // were a tenth of the kernel's instructions beside Triton's (SASS; docs/FINDINGS.md).
  constexpr bool kPivot = sizeof(T) >= 4;

  Raw wr[WREG ? EPT : 1], br[WREG ? EPT : 1];
  if constexpr (WREG) {
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (inside(e)) {
        wr[e] = param_read<HINT>(reinterpret_cast<const Raw*>(weight + col(e)));
        br[e] = param_read<HINT>(reinterpret_cast<const Raw*>(bias + col(e)));
      }
  }

  // Statistics, normalisation and store of one row group from its shifted values v (0 where
  // invalid). Every thread of the block calls it: its reductions hold barriers. The reductions
  // alternate scratch halves through phase, across row groups too.
  int phase = 0;
  auto finish = [&](float (&v)[EPT][VEC], long long row, bool active) {
    float mean, var;
    if constexpr (STATS == 0) {
      float s = 0.f;
#pragma unroll
      for (int e = 0; e < EPT; ++e)
#pragma unroll
        for (int k = 0; k < VEC; ++k) s += v[e][k];
      mean = group_allreduce<TPR, RED>(Sum1{s}, scratch[phase]).s * inv_n;
      phase ^= 1;
      float q = 0.f;
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        if (inside(e))
#pragma unroll
          for (int k = 0; k < VEC; ++k) q = fmaf(v[e][k] - mean, v[e][k] - mean, q);
      var = group_allreduce<TPR, RED>(Sum1{q}, scratch[phase]).s * inv_n;
      phase ^= 1;
    } else if constexpr (STATS == 1) {
      float s = 0.f, n = 0.f;
#pragma unroll
      for (int e = 0; e < EPT; ++e) {
        if (inside(e)) n += VEC;
#pragma unroll
        for (int k = 0; k < VEC; ++k) s += v[e][k];
      }
      const float m = n > 0.f ? s / n : 0.f;
      float m2 = 0.f;
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        if (inside(e))
#pragma unroll
          for (int k = 0; k < VEC; ++k) m2 = fmaf(v[e][k] - m, v[e][k] - m, m2);
      const Wel r = group_allreduce<TPR, RED>(Wel{n, m, m2}, scratch[phase]);
      phase ^= 1;
      mean = r.m;
      var = r.m2 * inv_n;
    } else {
      float s = 0.f, q = 0.f;
#pragma unroll
      for (int e = 0; e < EPT; ++e)
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          s += v[e][k];
          q = fmaf(v[e][k], v[e][k], q);
        }
      const Sum2 r = group_allreduce<TPR, RED>(Sum2{s, q}, scratch[phase]);
      phase ^= 1;
      mean = r.s * inv_n;
      var = fmaxf(fmaf(-mean, mean, r.q * inv_n), 0.f);
    }
    const float rstd = rsqrtf(var + eps);

    T* yr = y + (active ? row : 0) * cols;
#pragma unroll
    for (int e = 0; e < EPT; ++e) {
      if (!(active && inside(e))) continue;
      float w[VEC], b[VEC];
      if constexpr (WREG) {
        unpack<T>(wr[e], w);
        unpack<T>(br[e], b);
      } else {
        unpack<T>(param_read<HINT>(reinterpret_cast<const Raw*>(weight + col(e))), w);
        unpack<T>(param_read<HINT>(reinterpret_cast<const Raw*>(bias + col(e))), b);
      }
      float o[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) o[k] = fmaf((v[e][k] - mean) * rstd, w[k], b[k]);
      store<HINT>(reinterpret_cast<Raw*>(yr + col(e)), pack<T, Raw>(o));
    }
  };

  if constexpr (PIPE == 0) {
    for (long long g = blockIdx.x; g < groups; g += gridDim.x) {  // one trip unless persistent
      const long long row = row_of(g);
      const bool active = row < rows;
      // A row past the last is computed from row 0 and not stored: no zeroing or branch per vector.
      const T* xr = x + (active ? row : 0) * cols;
      const float pivot = kPivot ? to_f(xr[0]) : 0.f;

      float v[EPT][VEC];
#pragma unroll
      for (int e = 0; e < EPT; ++e) {
        if (inside(e)) {
          unpack<T>(load<HINT>(reinterpret_cast<const Raw*>(xr + col(e))), v[e]);
          if constexpr (kPivot) {
#pragma unroll
            for (int k = 0; k < VEC; ++k) v[e][k] -= pivot;
          }
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) v[e][k] = 0.f;
        }
      }
      finish(v, row, active);
    }
  } else {
    // Issues the loads of row group g without waiting for them. Every register of the buffer is
    // written (zero past the last row or column): a register kept where no load went would keep
    // the consumed group's values alive until here, a third copy of the row.
    auto fetch = [&](Raw (&r)[EPT], T& pivot, long long g) {
      const long long row = row_of(g);
      const bool active = row < rows;
      const T* xr = x + (active ? row : 0) * cols;
      pivot = kPivot ? xr[0] : from_f<T>(0.f);
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        r[e] = inside(e) ? load<HINT>(reinterpret_cast<const Raw*>(xr + col(e))) : Raw{};
    };
    auto consume = [&](const Raw (&r)[EPT], T pivot, long long g) {
      const long long row = row_of(g);
      const bool active = row < rows;
      const float p = to_f(pivot);
      float v[EPT][VEC];
#pragma unroll
      for (int e = 0; e < EPT; ++e) {
        if (inside(e)) {
          unpack<T>(r[e], v[e]);
          if constexpr (kPivot) {
#pragma unroll
            for (int k = 0; k < VEC; ++k) v[e][k] -= p;
          }
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) v[e][k] = 0.f;
        }
      }
      finish(v, row, active);
    };
    // Two row groups per trip with the buffers swapped by name: no register copies, and the next
    // group's loads are issued before the current group's first barrier. The exits are uniform
    // over the block (g is), so every thread meets every barrier.
    Raw ra[EPT], rb[EPT];
    T pa, pb;
    long long g = blockIdx.x;
    fetch(ra, pa, g);
    for (;;) {
      if (g >= groups) break;
      fetch(rb, pb, g + gridDim.x);
      consume(ra, pa, g);
      g += gridDim.x;
      if (g >= groups) break;
      fetch(ra, pa, g + gridDim.x);
      consume(rb, pb, g);
      g += gridDim.x;
    }
  }
}
