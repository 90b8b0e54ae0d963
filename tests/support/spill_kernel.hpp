#pragma once
// Device code for tests of spilling: N floats kept live per thread and mixed ROUNDS times, so that
// an N beyond the thread's register budget spills. The caller fills r.
#include <string>

namespace soltune::test {

inline const std::string kSpillMix = R"(
template <int N, int ROUNDS> __device__ __forceinline__ float spill_mix(float (&r)[N]) {
#pragma unroll
  for (int j = 0; j < ROUNDS; ++j)
#pragma unroll
    for (int k = 0; k < N; ++k) r[k] = r[k] * r[(k + j + 1) % N] + 1.0f;
  float s = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) s += r[k] * r[N - 1 - k];
  return s;
}
)";

}  // namespace soltune::test
