// Where the CUDA headers and the disk cache live by default.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "codegen/compiler.hpp"

#ifndef SOLTUNE_CUDA_INCLUDE_DIRS
#define SOLTUNE_CUDA_INCLUDE_DIRS ""
#endif

namespace soltune {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool is_dir(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p, ec);
}

// Adds dir and, where present, dir/cccl: CUDA 13 moved libcu++, CUB and Thrust there.
void add_include(std::vector<std::string>& dirs, const std::filesystem::path& dir) {
  auto add = [&](const std::string& d) {
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  add(dir.string());
  if (is_dir(dir / "cccl")) add((dir / "cccl").string());
}

std::vector<std::string> default_include_dirs() {
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const std::string root = env(var);
    if (!root.empty() && is_dir(std::filesystem::path(root) / "include")) {
      add_include(dirs, std::filesystem::path(root) / "include");
      return dirs;
    }
  }
  // The toolkit found at build time ('|'-separated, see CMakeLists.txt).
  const std::string built = SOLTUNE_CUDA_INCLUDE_DIRS;
  for (size_t start = 0; start < built.size();) {
    size_t end = built.find('|', start);
    if (end == std::string::npos) end = built.size();
    const std::string dir = built.substr(start, end - start);
    if (!dir.empty() && is_dir(dir)) add_include(dirs, dir);
    start = end + 1;
  }
  if (dirs.empty()) add_include(dirs, "/usr/local/cuda/include");
  return dirs;
}

std::filesystem::path default_cache_dir() {
  const std::string own = env("SOLTUNE_CACHE_DIR");
  if (own == "off") return {};
  if (!own.empty()) return own;
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty())
    return std::filesystem::path(xdg) / "soltune" / "nvrtc";
  if (const std::string home = env("HOME"); !home.empty())
    return std::filesystem::path(home) / ".cache" / "soltune" / "nvrtc";
  return {};  // nowhere sensible to cache
}

}  // namespace

CompilerOptions default_compiler_options() {
  CompilerOptions o;
  o.include_dirs = default_include_dirs();
  o.cache_dir = default_cache_dir();
  return o;
}

}  // namespace soltune
