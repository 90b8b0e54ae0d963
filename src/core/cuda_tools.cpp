#include "core/cuda_tools.hpp"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace soltune {

std::optional<std::filesystem::path> find_cuda_tool(const std::string& name) {
  namespace fs = std::filesystem;
  auto runnable = [](const fs::path& p) { return access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && runnable(fs::path(dir) / name)) return fs::path(dir) / name;
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(var); home && *home && runnable(fs::path(home) / "bin" / name))
      return fs::path(home) / "bin" / name;
  if (runnable(fs::path("/usr/local/cuda/bin") / name)) return fs::path("/usr/local/cuda/bin") / name;
  return std::nullopt;
}

}  // namespace soltune
