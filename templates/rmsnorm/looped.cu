// RMSNorm for rows of any width: TPR threads share a row (a warp up to a whole block), RPB rows
// per block, and walk the row in chunks of TPR * VEC * UNROLL elements (UNROLL vector loads in
// flight per thread). The output pass reads the row again: from global memory (STAGE 0, where L2
// usually still holds it), or from a copy of the row in shared memory written on the first read
// (STAGE 1, through registers; STAGE 2, with cp.async, double-buffered across rows in persistent
// mode so that the next row is in flight while this one is computed). Every thread reads back only
// the shared-memory elements it wrote itself, so the staging needs no barrier.
#include <cuda_bf16.h>

namespace rms_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/cp_async.cuh"
#include "../common/row_stage.cuh"
#include "../common/group_allreduce.cuh"

}  // namespace rms_detail

// WIDTH 1: the row's width is the template argument COLS (the task's), not the argument: every
// chunk loop has a known trip count, so both passes unroll and issue all their loads before using
// any, as Triton's kernel for a width it knows does (its SASS: two loads, then four, no loop). Such a
// kernel serves that width only (the export checks it).
template <typename T, int TPR, int RPB, int VEC, int UNROLL, int STAGE, int PERSIST, int BPS, int HINT, int WIDTH,
          long long COLS>
__global__ void __launch_bounds__(TPR * RPB, BPS)
rmsnorm_looped(const T* __restrict__ x, const T* __restrict__ weight, T* __restrict__ y, long long rows,
               long long cols_arg, float eps) {
  using namespace rms_detail;
  using Stage = RowStage<T, TPR, RPB, VEC, STAGE, PERSIST>;
  using Raw = typename Stage::Raw;
  constexpr int CHUNK = TPR * VEC * UNROLL;
  const long long cols = WIDTH ? COLS : cols_arg;
  constexpr int kUnrollSum = WIDTH ? 16 : 2;  // WIDTH: every chunk (at most 8)
  __shared__ float scratch[2][RPB * TPR / 32];
  extern __shared__ __align__(16) unsigned char staged[];

  const Stage stage{staged, x, rows, cols};
  const int lane = stage.lane, group = stage.group;
  const long long groups = stage.groups;
  const float inv_n = 1.0f / static_cast<float>(cols);
  if constexpr (STAGE == 2) stage.issue(blockIdx.x, 0);

  int phase = 0, slot = 0;
  for (long long g = blockIdx.x; g < groups; g += gridDim.x) {  // one trip unless persistent
    const long long row = g * RPB + group;
    const bool active = row < rows;
    const T* xr = x + (active ? row : 0) * cols;
    T* sr = STAGE ? stage.buffer(slot) : nullptr;
    stage.arrive(g, slot);

    // Reads the UNROLL vectors of one chunk (0 where outside the row). STAGE 1: the first pass
    // reads x and copies it to shared memory, the output pass reads the copy. HINT streams the last
    // read of x from global memory (the output pass, or STAGE 1's only read).
    auto read_chunk = [&](long long base, float (&v)[UNROLL][VEC], bool first) {
      Raw r[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
        if (active && c < cols) {
          if (STAGE == 2 || (STAGE == 1 && !first)) r[u] = *reinterpret_cast<const Raw*>(sr + c);
          else if (HINT && (!first || STAGE == 1)) r[u] = load<1>(reinterpret_cast<const Raw*>(xr + c));
          else r[u] = load<0>(reinterpret_cast<const Raw*>(xr + c));
        }
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
        if (active && c < cols) {
          if (STAGE == 1 && first) *reinterpret_cast<Raw*>(sr + c) = r[u];
          unpack<T>(r[u], v[u]);
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) v[u][k] = 0.f;
        }
      }
    };

    float q = 0.f;
    long long base0 = 0;
    if constexpr (STAGE == 0) {
      // Whole chunks first, without bounds checks and two at a time: their loads do not depend on
      // each other, and without a branch around each one all of them can be in flight before the
      // first is used (as in a Triton loop over a width it knows). Same order of sums as below.
      if (active) {
        const Raw* px = reinterpret_cast<const Raw*>(xr) + lane;  // a pointer that steps: no index math
#pragma unroll kUnrollSum
        for (; base0 + CHUNK <= cols; base0 += CHUNK, px += CHUNK / VEC) {
          Raw r[UNROLL];
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) r[u] = first_read<HINT>(px + u * TPR);
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            float v[VEC];
            unpack<T>(r[u], v);
#pragma unroll
            for (int k = 0; k < VEC; ++k) q = fmaf(v[k], v[k], q);
          }
        }
      }
    }
    auto sum_chunk = [&](long long base) {  // guarded: a partial chunk, or an inactive row
      float v[UNROLL][VEC];
      read_chunk(base, v, true);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int k = 0; k < VEC; ++k) q = fmaf(v[u][k], v[u][k], q);
    };
    if constexpr (STAGE == 0) {
#pragma unroll 1
      for (long long base = base0; base < cols; base += CHUNK) sum_chunk(base);  // the tail only
    } else {
      for (long long base = 0; base < cols; base += CHUNK) sum_chunk(base);
    }
    const float rstd = rsqrtf(group_allreduce<TPR, 0>(q, scratch[phase]) * inv_n + eps);
    phase ^= 1;

    // Output pass.
    T* yr = y + (active ? row : 0) * cols;
    long long base1 = 0;
    if constexpr (STAGE == 0 && WIDTH) {  // a known width: every whole chunk's x and weight loaded first
      constexpr int NCH = static_cast<int>(COLS / CHUNK);
      if (active) {
        const Raw* px = reinterpret_cast<const Raw*>(xr) + lane;
        const Raw* pw = reinterpret_cast<const Raw*>(weight) + lane;
        Raw* py = reinterpret_cast<Raw*>(yr) + lane;
        Raw rx[NCH > 0 ? NCH : 1][UNROLL], rw[NCH > 0 ? NCH : 1][UNROLL];
#pragma unroll
        for (int c = 0; c < NCH; ++c)
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            rx[c][u] = last_read<HINT>(px + c * (CHUNK / VEC) + u * TPR);
            rw[c][u] = param_read<HINT>(pw + c * (CHUNK / VEC) + u * TPR);
          }
#pragma unroll
        for (int c = 0; c < NCH; ++c)
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            float v[VEC], w[VEC];
            unpack<T>(rx[c][u], v);
            unpack<T>(rw[c][u], w);
            Raw out;
            T* o = reinterpret_cast<T*>(&out);
#pragma unroll
            for (int k = 0; k < VEC; ++k) o[k] = from_f<T>(v[k] * rstd * w[k]);
            store<HINT>(py + c * (CHUNK / VEC) + u * TPR, out);
          }
      }
      base1 = static_cast<long long>(NCH) * CHUNK;
    } else if constexpr (STAGE == 0) {  // whole chunks unguarded, as in the first pass
      if (active) {
        const Raw* px = reinterpret_cast<const Raw*>(xr) + lane;
        const Raw* pw = reinterpret_cast<const Raw*>(weight) + lane;
        Raw* py = reinterpret_cast<Raw*>(yr) + lane;
#pragma unroll 1  // its x mostly hits L1 (the first pass just read it): the registers go to the first pass
        for (; base1 + CHUNK <= cols; base1 += CHUNK, px += CHUNK / VEC, pw += CHUNK / VEC, py += CHUNK / VEC) {
          Raw r[UNROLL];
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) r[u] = last_read<HINT>(px + u * TPR);
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            float v[VEC], w[VEC];
            unpack<T>(r[u], v);
            unpack<T>(param_read<HINT>(pw + u * TPR), w);
            Raw out;
            T* o = reinterpret_cast<T*>(&out);
#pragma unroll
            for (int k = 0; k < VEC; ++k) o[k] = from_f<T>(v[k] * rstd * w[k]);
            store<HINT>(py + u * TPR, out);
          }
        }
      }
    }
    auto out_chunk = [&](long long base) {  // guarded: a partial chunk, or an inactive row
      float v[UNROLL][VEC];
      read_chunk(base, v, false);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
        if (!(active && c < cols)) continue;
        float w[VEC];
        unpack<T>(__ldg(reinterpret_cast<const Raw*>(weight + c)), w);
        Raw out;
        T* o = reinterpret_cast<T*>(&out);
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = from_f<T>(v[u][k] * rstd * w[k]);
        store<HINT>(reinterpret_cast<Raw*>(yr + c), out);
      }
    };
    if constexpr (STAGE == 0) {
#pragma unroll 1
      for (long long base = base1; base < cols; base += CHUNK) out_chunk(base);  // the tail only
    } else {
      for (long long base = 0; base < cols; base += CHUNK) out_chunk(base);
    }
    if constexpr (Stage::DOUBLE) slot ^= 1;
  }
  if constexpr (STAGE == 2) cp_async_wait<0>();  // no copy outlives the block
}
