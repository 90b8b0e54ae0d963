#pragma once
// File helpers the tests share: a whole file as bytes, and a file written whole.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace soltune::test {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Returns false when the file could not be written.
inline bool write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  return out.good();
}

}  // namespace soltune::test
