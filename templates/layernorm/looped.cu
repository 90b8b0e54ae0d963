// LayerNorm for rows of any width: TPR threads share a row (a warp up to a whole block), RPB rows
// per block, and walk the row in chunks of TPR * VEC * UNROLL elements (UNROLL vector loads in
// flight per thread). The statistics pass and the output pass read the row again: from global
// memory (STAGE 0, where L2 usually still holds it), or from a copy of the row in shared memory
// written on the first read (STAGE 1, through registers; STAGE 2, with cp.async, double-buffered
// across rows in persistent mode so that the next row is in flight while this one is computed).
// Every thread reads back only the shared-memory elements it wrote itself, so the staging needs no
// barrier. Statistics are taken on x - x[row, 0], as in rowreg.
#include <cuda_bf16.h>

namespace ln_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/cp_async.cuh"
#include "../common/row_stage.cuh"
#include "../common/group_allreduce.cuh"
#include "../common/ln_stats.cuh"

}  // namespace ln_detail

// WIDTH 1: the row's width is the template argument COLS (the task's): the chunk loops have known
// trip counts and unroll, so a pass issues its loads together (RMSNorm looped, docs/FINDINGS.md). Such a kernel serves that width only (the export checks it).
template <typename T, int TPR, int RPB, int VEC, int UNROLL, int STATS, int STAGE, int PERSIST, int BPS, int HINT,
          int WIDTH, long long COLS>
__global__ void __launch_bounds__(TPR * RPB, BPS)
layernorm_looped(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias,
                 T* __restrict__ y, long long rows, long long cols_arg, float eps) {
  using namespace ln_detail;
  static_assert(STATS >= 0 && STATS <= 2, "STATS in 0..2");
  using Stage = RowStage<T, TPR, RPB, VEC, STAGE, PERSIST>;
  using Raw = typename Stage::Raw;
  using S = typename StatsOf<STATS>::type;
  constexpr int CHUNK = TPR * VEC * UNROLL;
  const long long cols = WIDTH ? COLS : cols_arg;
  constexpr int kUnroll = WIDTH ? 8 : 1;  // WIDTH: every chunk (at most 8)
  __shared__ S scratch[2][RPB * TPR / 32];
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
    const float pivot = to_f(xr[0]);

    // Reads the UNROLL vectors of one chunk, shifted by the pivot (0 where outside the row). STAGE 1:
    // the first pass reads x and copies it to shared memory, later passes read the copy. HINT
    // streams the last read of x from global memory (the output pass, or STAGE 1's only read).
    auto read_chunk = [&](long long base, float (&v)[UNROLL][VEC], bool first, bool last) {
      Raw r[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
        if (active && c < cols) {
          if (STAGE == 2 || (STAGE == 1 && !first)) r[u] = *reinterpret_cast<const Raw*>(sr + c);
          else if (HINT >= 2) r[u] = last ? load_hinted<false>(reinterpret_cast<const Raw*>(xr + c))
                                          : load_hinted<true>(reinterpret_cast<const Raw*>(xr + c));
          else if (HINT && (last || STAGE == 1)) r[u] = load<1>(reinterpret_cast<const Raw*>(xr + c));
          else r[u] = load<0>(reinterpret_cast<const Raw*>(xr + c));
        }
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
        if (active && c < cols) {
          if (STAGE == 1 && first) *reinterpret_cast<Raw*>(sr + c) = r[u];
          unpack<T>(r[u], v[u]);
#pragma unroll
          for (int k = 0; k < VEC; ++k) v[u][k] -= pivot;
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) v[u][k] = 0.f;
        }
      }
    };
    auto valid = [&](long long base, int u) { return active && base + static_cast<long long>(u * TPR + lane) * VEC < cols; };

    // WIDTH 1 (STAGE 0): the whole chunks of a known width are read without bounds checks, all their
    // loads issued before the first is used, and the thread's values stay in registers for its
    // statistics (as RMSNorm's looped kernel and Triton's do). The guarded passes below then cover
    // only the tail from base0 (everything when the width is not compiled in).
    constexpr int NCH = STAGE == 0 && WIDTH ? static_cast<int>(COLS / CHUNK) : 0;
    constexpr long long base0 = static_cast<long long>(NCH) * CHUNK;
    constexpr int NHV = NCH > 0 ? NCH : 1;
    float hv[NHV][UNROLL][VEC];  // shifted by the pivot; zero in an inactive row
#pragma unroll
    for (int c = 0; c < NHV; ++c)
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int k = 0; k < VEC; ++k) hv[c][u][k] = 0.f;
    if constexpr (NCH > 0) {
      if (active) {
        const Raw* px = reinterpret_cast<const Raw*>(xr) + lane;  // a pointer that steps: no index math
        Raw r[NCH][UNROLL];
#pragma unroll
        for (int c = 0; c < NCH; ++c)
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) r[c][u] = first_read<HINT>(px + c * (CHUNK / VEC) + u * TPR);
#pragma unroll
        for (int c = 0; c < NCH; ++c)
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            unpack<T>(r[c][u], hv[c][u]);
#pragma unroll
            for (int k = 0; k < VEC; ++k) hv[c][u][k] -= pivot;
          }
      }
    }
    auto held_sum = [&](float mu) {  // sum of (v - mu) and of its squares over the held values
      float s = 0.f, q = 0.f;
#pragma unroll
      for (int c = 0; c < NCH; ++c)
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
          for (int k = 0; k < VEC; ++k) {
            s += hv[c][u][k] - mu;
            q = fmaf(hv[c][u][k] - mu, hv[c][u][k] - mu, q);
          }
      return Sum2{s, q};
    };

    // Statistics of the shifted values.
    float mean, var;
    if constexpr (STATS == 0) {
      float s = held_sum(0.f).s;
#pragma unroll kUnroll
      for (long long base = base0; base < cols; base += CHUNK) {
        float v[UNROLL][VEC];
        read_chunk(base, v, true, false);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
          for (int k = 0; k < VEC; ++k) s += v[u][k];
      }
      mean = group_allreduce<TPR, 0>(Sum1{s}, scratch[phase]).s * inv_n;
      phase ^= 1;
      float q = active ? held_sum(mean).q : 0.f;
#pragma unroll kUnroll
      for (long long base = base0; base < cols; base += CHUNK) {
        float v[UNROLL][VEC];
        read_chunk(base, v, false, false);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
          if (valid(base, u))
#pragma unroll
            for (int k = 0; k < VEC; ++k) q = fmaf(v[u][k] - mean, v[u][k] - mean, q);
      }
      var = group_allreduce<TPR, 0>(Sum1{q}, scratch[phase]).s * inv_n;
      phase ^= 1;
    } else {
      S st{};
      if constexpr (NCH > 0) {
        if constexpr (STATS == 1) {  // the thread's exact count, mean and M2 (two passes over registers)
          constexpr float n = static_cast<float>(NCH * UNROLL * VEC);
          const float m = held_sum(0.f).s * (1.f / n);
          if (active) st = Wel{n, m, held_sum(m).q};
        } else {
          const Sum2 h = held_sum(0.f);
          st = {h.s, h.q};
        }
      }
#pragma unroll kUnroll
      for (long long base = base0; base < cols; base += CHUNK) {
        float v[UNROLL][VEC];
        read_chunk(base, v, true, false);
        if constexpr (STATS == 1) {  // the chunk's own count, mean and M2, merged into the running state
          float n = 0.f, s = 0.f;
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            if (valid(base, u)) n += VEC;
#pragma unroll
            for (int k = 0; k < VEC; ++k) s += v[u][k];
          }
          const float m = n > 0.f ? s / n : 0.f;
          float m2 = 0.f;
#pragma unroll
          for (int u = 0; u < UNROLL; ++u)
            if (valid(base, u))
#pragma unroll
              for (int k = 0; k < VEC; ++k) m2 = fmaf(v[u][k] - m, v[u][k] - m, m2);
          st = combine(st, Wel{n, m, m2});
        } else {
#pragma unroll
          for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
              st.s += v[u][k];
              st.q = fmaf(v[u][k], v[u][k], st.q);
            }
        }
      }
      const S r = group_allreduce<TPR, 0>(st, scratch[phase]);
      phase ^= 1;
      if constexpr (STATS == 1) {
        mean = r.m;
        var = r.m2 * inv_n;
      } else {
        mean = r.s * inv_n;
        var = fmaxf(fmaf(-mean, mean, r.q * inv_n), 0.f);
      }
    }
    const float rstd = rsqrtf(var + eps);

    // Output pass. A known width: every whole chunk's x, weight and bias loaded before the first store.
    T* yr = y + (active ? row : 0) * cols;
    if constexpr (NCH > 0) {
      if (active) {
        const Raw* px = reinterpret_cast<const Raw*>(xr) + lane;
        const Raw* pw = reinterpret_cast<const Raw*>(weight) + lane;
        const Raw* pb = reinterpret_cast<const Raw*>(bias) + lane;
        Raw* py = reinterpret_cast<Raw*>(yr) + lane;
        Raw rx[NCH][UNROLL], rw[NCH][UNROLL], rb[NCH][UNROLL];
#pragma unroll
        for (int c = 0; c < NCH; ++c)
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            const int at = c * (CHUNK / VEC) + u * TPR;
            rx[c][u] = last_read<HINT>(px + at);
            rw[c][u] = param_read<HINT>(pw + at);
            rb[c][u] = param_read<HINT>(pb + at);
          }
#pragma unroll
        for (int c = 0; c < NCH; ++c)
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            float v[VEC], w[VEC], b[VEC];
            unpack<T>(rx[c][u], v);
            unpack<T>(rw[c][u], w);
            unpack<T>(rb[c][u], b);
            Raw out;
            T* o = reinterpret_cast<T*>(&out);
#pragma unroll
            for (int k = 0; k < VEC; ++k) o[k] = from_f<T>(fmaf((v[k] - pivot - mean) * rstd, w[k], b[k]));
            store<HINT>(py + c * (CHUNK / VEC) + u * TPR, out);
          }
      }
    }
#pragma unroll kUnroll
    for (long long base = base0; base < cols; base += CHUNK) {
      float v[UNROLL][VEC];
      read_chunk(base, v, false, true);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
        if (!(active && c < cols)) continue;
        float w[VEC], b[VEC];
        unpack<T>(param_read<HINT>(reinterpret_cast<const Raw*>(weight + c)), w);
        unpack<T>(param_read<HINT>(reinterpret_cast<const Raw*>(bias + c)), b);
        Raw out;
        T* o = reinterpret_cast<T*>(&out);
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = from_f<T>(fmaf((v[u][k] - mean) * rstd, w[k], b[k]));
        store<HINT>(reinterpret_cast<Raw*>(yr + c), out);
      }
    }
    if constexpr (Stage::DOUBLE) slot ^= 1;
  }
  if constexpr (STAGE == 2) cp_async_wait<0>();  // no copy outlives the block
}
