// The second launch of a key split (flash decoding): SPLIT blocks shared out one row's keys, each
// writing its unnormalised output to part_o and its (largest unscaled score, sum of
// 2^((s - max) scale)) to part_ml, row `row` of split s at s * rows + row. fa2 and decode write them.
#pragma once
#include "../common/softmax_math.cuh"

// Merges the SPLIT parts of each row (a block per row of O, a thread per column): every part's
// output and sum rescaled to the largest maximum, then O = sum / total and the log-sum-exp.
template <typename T, int D, int SPLIT>
__global__ void __launch_bounds__(D) attention_combine(const float* __restrict__ part_o, const float* __restrict__ part_ml,
                                                       T* __restrict__ o, float* __restrict__ lse, long long b,
                                                       long long h, long long s_q) {
  const long long row = blockIdx.x, rows = b * h * s_q;
  const float2* ml = reinterpret_cast<const float2*>(part_ml);
  float mx = neg_inf();
#pragma unroll
  for (int s = 0; s < SPLIT; ++s) mx = fmaxf(mx, ml[s * rows + row].x);
  float total = 0.f, sum = 0.f;
#pragma unroll
  for (int s = 0; s < SPLIT; ++s) {
    const float2 p = ml[s * rows + row];
    const float w = p.x == neg_inf() ? 0.f : exp2f((p.x - mx) * scale_log2<D>());  // a part that saw no key weighs 0
    total += p.y * w;
    sum += part_o[(s * rows + row) * D + threadIdx.x] * w;
  }
  o[row * D + threadIdx.x] = static_cast<T>(sum / total);
  if (threadIdx.x == 0) lse[row] = log_sum_exp<D>(mx, total);
}
