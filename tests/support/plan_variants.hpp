#pragma once
// A gelu variant of two launches sharing a scratch buffer, added to a copy of the shipped gelu by
// the tests of parsing, the model, export and the GPU evaluator: `twostep` computes GELU into an
// f32 scratch buffer, then a second kernel rounds it into y (where STEPS is 2; STEPS 1 writes y
// straight away). Two knobs break it on purpose, as a user's bug would:
// - GAP 1: the first kernel leaves the scratch's last element unwritten (the second reads poison);
// - OVER 1: the first kernel writes one element past the scratch's end.
#include <filesystem>
#include <string>

#include "files.hpp"
#include "gelu_device.hpp"

namespace soltune::test {

inline void add_two_step_gelu(const std::filesystem::path& gelu_dir) {
  write_file(gelu_dir / "twostep.cu", std::string(R"SRC(// GELU in two steps: f32 values into scratch, then rounded into y.
#include <cuda_bf16.h>
)SRC") + kGeluDevice + R"SRC(
template <typename T, int STEPS, int GAP, int OVER>
__global__ void gelu_first(const T* x, T* y, float* tmp, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n + OVER) return;
  if (i == n) {  // OVER: one past the end
    tmp[i] = 0.0f;
    return;
  }
  const float v = gelu(to_f(x[i]));
  if (STEPS == 1) put(y[i], v);
  else if (!(GAP && i == n - 1)) tmp[i] = v;
}

template <typename T>
__global__ void gelu_second(const float* tmp, T* y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) put(y[i], tmp[i]);
}
)SRC");
  write_file(gelu_dir / "twostep.yaml", R"SRC(description: GELU into f32 scratch, then rounded into y by a second kernel
kernel: gelu_first
template_args: [T, STEPS, GAP, OVER]
args: [x, y, tmp, n]
knobs:
  BLOCK: [128, 256]
  STEPS: [1, 2]
  GAP: [0, 1]
  OVER: [0, 1]
constraints:
  - STEPS == 2 || GAP + OVER == 0
scratch:
  - {name: tmp, dtype: f32, shape: ["STEPS == 2 ? n : 0"]}
launch:
  grid: cdiv(n + OVER, BLOCK)
  block: BLOCK
after:
  - {kernel: gelu_second, template_args: [T], args: [tmp, y, n], grid: "cdiv(n, BLOCK)", block: BLOCK, when: STEPS == 2}
)SRC");
}

}  // namespace soltune::test
