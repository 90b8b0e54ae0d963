#pragma once
// Given data for an input or a constant (`file:` in problem.yaml): a NumPy .npy file (format 1.0 to
// 3.0, C order, little-endian) or raw little-endian elements of a declared dtype.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace soltune {

struct ArrayFile {
  DType dtype = DType::f32;
  int64_t elems = 0;
  std::vector<char> bytes;  // elems * dtype_bytes(dtype), little-endian
};

// Reads `path` as elements of `want`: a .npy must hold that dtype (bf16, e4m3 and e5m2, which NumPy lacks, only
// raw), a raw file a whole number of them. Throws Error naming the file and what is wrong.
ArrayFile read_array_file(const std::filesystem::path& path, bool raw, DType want);

// The .npy type string of a dtype ("<f4", "|u1", "|b1"), or "" where NumPy has none (bf16, e4m3, e5m2).
std::string npy_descr(DType t);

}  // namespace soltune
