#pragma once
// The CUDA toolkit's programs (nvcc, compute-sanitizer): found on PATH, then under $CUDA_HOME,
// $CUDA_PATH and /usr/local/cuda, as the toolkit's own docs have users set them up.
#include <filesystem>
#include <optional>
#include <string>

namespace soltune {

std::optional<std::filesystem::path> find_cuda_tool(const std::string& name);

}  // namespace soltune
