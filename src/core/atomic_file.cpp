#include "core/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.hpp"

namespace soltune {

void write_file_atomically(const std::filesystem::path& out, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path tmp = out.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (f) f.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (f.is_open()) f.close();  // close() flushes: a full disk shows up here
    if (!f) {
      const std::string why = std::strerror(errno);
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error(out.string() + ": cannot write (" + tmp.string() + ": " + why + ")");
    }
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error(out.string() + ": cannot write: " + ec.message());
  }
}

}  // namespace soltune
