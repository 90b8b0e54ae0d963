#pragma once
// A gelu variant written as a macro program, as kernels tuned by Kernel Tuner, KTT or CLTune are:
// its knobs arrive as -D definitions (`defines:`), with #ifndef defaults, an #if on a knob's value,
// a macro of the source's own and the element type as a macro (`real`). Added to a copy of the
// shipped gelu by the tests of parsing, compiling, export and the GPU path.
#include <filesystem>
#include <string>

#include "files.hpp"
#include "gelu_device.hpp"

namespace soltune::test {

inline void add_macro_gelu(const std::filesystem::path& gelu_dir) {
  write_file(gelu_dir / "macro.cu", std::string(R"SRC(// GELU, ITEMS elements per thread block_size_x apart.
#include <cuda_bf16.h>
)SRC") + kGeluDevice + R"SRC(
#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#define TILE (block_size_x * ITEMS)

__global__ void gelu_macro(const real* x, real* y, long long n) {
  const long long base = static_cast<long long>(blockIdx.x) * TILE + threadIdx.x;
#if ITEMS == 1
  if (base < n) put(y[base], gelu(to_f(x[base])));
#else
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long e = base + static_cast<long long>(i) * block_size_x;
    if (e < n) put(y[e], gelu(to_f(x[e])));
  }
#endif
}
)SRC");
  write_file(gelu_dir / "macro.yaml", R"SRC(description: GELU as a macro program (knobs as -D definitions)
kernel: gelu_macro
args: [x, y, n]
defines: {block_size_x: block_size_x, ITEMS: ITEMS, real: T}
knobs:
  block_size_x: [32, 64, 128, 256, 512]
  ITEMS: [1, 2, 4]
constraints:
  - block_size_x % 64 == 0 or ITEMS == 1
launch:
  grid: cdiv(n, block_size_x * ITEMS)
  block: block_size_x
)SRC");
}

}  // namespace soltune::test
