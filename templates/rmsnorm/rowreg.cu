// RMSNorm with the row held in registers (the Apex / Liger design): TPR threads share a row (a warp
// up to a whole block), RPB rows per block; each thread loads EPT vectors of VEC elements, all
// issued before the first use, so x is read from memory exactly once. The grid is a block per row
// group, or persistent (BPS blocks per SM looping over row groups), where the weight may stay in
// registers across rows and the next row group's loads may be in flight while the current one is
// reduced (PIPE). WIDTH 1 compiles the task's width in (COLS): with a row that fills its threads
// exactly, no access needs a bounds check.
#include <cuda_bf16.h>

namespace rms_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/group_allreduce.cuh"

}  // namespace rms_detail

// BPS: the blocks per SM asked of __launch_bounds__ (it caps registers), and in persistent mode
// the grid's blocks per SM. PIPE 1 (persistent only): the loads of a block's next row group are
// issued into a second register buffer (raw) before the current one is reduced and stored, so that
// they are in flight while the block waits on its barriers.
template <typename T, int TPR, int RPB, int VEC, int EPT, int RED, int PERSIST, int BPS, int WREG, int PIPE, int HINT,
          int WIDTH, long long COLS>
__global__ void __launch_bounds__(TPR * RPB, BPS)
rmsnorm_rowreg(const T* __restrict__ x, const T* __restrict__ weight, T* __restrict__ y, long long rows,
               long long cols_arg, float eps) {
  using namespace rms_detail;
  static_assert(TPR % 32 == 0 && TPR * RPB <= 1024, "TPR: whole warps; a block of at most 1024 threads");
  static_assert(VEC > 0 && (VEC & (VEC - 1)) == 0 && VEC * sizeof(T) <= 16, "VEC: a power of two, at most 16 bytes");
  static_assert((RED == 0 || RED == 1) && HINT >= 0 && HINT <= 3, "RED in 0..1, HINT in 0..3");
  static_assert(WREG == 0 || PERSIST == 1, "the weight stays in registers only across the rows of a persistent block");
  static_assert(PIPE == 0 || PERSIST == 1, "rows are pipelined only across the row groups of a persistent block");
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int SLOTS = RED ? TPR * RPB : RPB * TPR / 32;
  __shared__ float scratch[2][SLOTS];

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

  Raw wr[WREG ? EPT : 1];
  if constexpr (WREG) {
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (inside(e)) wr[e] = param_read<HINT>(reinterpret_cast<const Raw*>(weight + col(e)));
  }

  // Mean square, scaling and store of one row group from its values v (0 where invalid). Every
  // thread of the block calls it: its reduction holds a barrier. The reductions alternate scratch
  // halves through phase, across row groups too.
  int phase = 0;
  auto finish = [&](float (&v)[EPT][VEC], long long row, bool active) {
    float q = 0.f;
#pragma unroll
    for (int e = 0; e < EPT; ++e)
#pragma unroll
      for (int k = 0; k < VEC; ++k) q = fmaf(v[e][k], v[e][k], q);
    const float ms = group_allreduce<TPR, RED>(q, scratch[phase]) * inv_n;
    phase ^= 1;
    const float rstd = rsqrtf(ms + eps);

    T* yr = y + (active ? row : 0) * cols;
#pragma unroll
    for (int e = 0; e < EPT; ++e) {
      if (!(active && inside(e))) continue;
      float w[VEC];
      if constexpr (WREG) unpack<T>(wr[e], w);
      else unpack<T>(param_read<HINT>(reinterpret_cast<const Raw*>(weight + col(e))), w);
      float o[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) o[k] = v[e][k] * rstd * w[k];
      store<HINT>(reinterpret_cast<Raw*>(yr + col(e)), pack<T, Raw>(o));
    }
  };

  if constexpr (PIPE == 0) {
    for (long long g = blockIdx.x; g < groups; g += gridDim.x) {  // one trip unless persistent
      const long long row = row_of(g);
      const bool active = row < rows;
      // A row past the last is computed from row 0 and not stored: no zeroing or branch per vector.
      const T* xr = x + (active ? row : 0) * cols;

      float v[EPT][VEC];
#pragma unroll
      for (int e = 0; e < EPT; ++e) {
        if (inside(e)) {
          unpack<T>(load<HINT>(reinterpret_cast<const Raw*>(xr + col(e))), v[e]);
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) v[e][k] = 0.f;
        }
      }
      finish(v, row, active);
    }
  } else {
    // Issues the loads of row group g without waiting for them. Every register of the buffer is
    // written (zero past the last column; a row past the last reads row 0): a register kept where
    // no load went would keep the consumed group's values alive until here, a third copy of the row.
    auto fetch = [&](Raw (&r)[EPT], long long g) {
      const long long row = row_of(g);
      const bool active = row < rows;
      const T* xr = x + (active ? row : 0) * cols;
#pragma unroll
      for (int e = 0; e < EPT; ++e)
        r[e] = inside(e) ? load<HINT>(reinterpret_cast<const Raw*>(xr + col(e))) : Raw{};
    };
    auto consume = [&](const Raw (&r)[EPT], long long g) {
      const long long row = row_of(g);
      const bool active = row < rows;
      float v[EPT][VEC];
#pragma unroll
      for (int e = 0; e < EPT; ++e) {
        if (inside(e)) {
          unpack<T>(r[e], v[e]);
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) v[e][k] = 0.f;
        }
      }
      finish(v, row, active);
    };
    // Two row groups per trip with the buffers swapped by name: no register copies, and the next
    // group's loads are issued before the current group's barrier. The exits are uniform over
    // the block (g is), so every thread meets every barrier.
    Raw ra[EPT], rb[EPT];
    long long g = blockIdx.x;
    fetch(ra, g);
    for (;;) {
      if (g >= groups) break;
      fetch(rb, g + gridDim.x);
      consume(ra, g);
      g += gridDim.x;
      if (g >= groups) break;
      fetch(ra, g + gridDim.x);
      consume(rb, g);
      g += gridDim.x;
    }
  }
}
