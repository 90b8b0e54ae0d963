#pragma once
// Writes a NumPy .npy file (format 1.0, C order) of little-endian elements, as np.save would: the
// tests' given data for inputs and constants.
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "files.hpp"

namespace soltune::test {

// `descr` is NumPy's type string ("<f4", "<i4", "|u1"); `shape` its dimensions, e.g. "(600, 2)".
template <typename T>
inline bool write_npy(const std::filesystem::path& p, const std::vector<T>& v, const std::string& descr,
                      const std::string& shape) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';  // the data starts 64-byte aligned
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  std::string data(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(data.data(), v.data(), data.size());
  return write_file(p, out + data);
}

}  // namespace soltune::test
