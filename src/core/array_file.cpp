#include "core/array_file.hpp"

#include <fstream>
#include <iterator>
#include <regex>

#include "core/error.hpp"

namespace soltune {
namespace {

[[noreturn]] void bad(const std::filesystem::path& p, const std::string& what) {
  throw Error(p.string() + ": " + what);
}

}  // namespace

std::string npy_descr(DType t) {
  switch (t) {
    case DType::f16: return "<f2";
    case DType::bf16: return "";
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::i8: return "|i1";
    case DType::i16: return "<i2";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::u8: return "|u1";
    case DType::u16: return "<u2";
    case DType::u32: return "<u4";
    case DType::u64: return "<u8";
    case DType::boolean: return "|b1";
    case DType::e4m3:
    case DType::e5m2: return "";
  }
  return "";
}

ArrayFile read_array_file(const std::filesystem::path& path, bool raw, DType want) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot be read");
  std::vector<char> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ArrayFile out;
  out.dtype = want;
  const size_t width = static_cast<size_t>(dtype_bytes(want));
  size_t data_at = 0;
  if (!raw) {
    // Magic, version, header length (2 bytes in 1.0, 4 in 2.0 and 3.0), then a Python dict literal.
    static const std::string magic = "\x93NUMPY";
    if (all.size() < 10 || std::string(all.data(), 6) != magic) bad(path, "not a .npy file (no \\x93NUMPY magic)");
    const int major = static_cast<unsigned char>(all[6]);
    if (major < 1 || major > 3) bad(path, ".npy format version " + std::to_string(major) + " (expected 1, 2 or 3)");
    const auto u8 = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(all[i])); };
    const size_t len_bytes = major == 1 ? 2 : 4;
    if (all.size() < 8 + len_bytes) bad(path, "truncated .npy header");
    size_t header_len = u8(8) | u8(9) << 8;
    if (len_bytes == 4) header_len |= u8(10) << 16 | u8(11) << 24;
    data_at = 8 + len_bytes + header_len;
    if (all.size() < data_at) bad(path, "truncated .npy header");
    const std::string header(all.data() + 8 + len_bytes, header_len);
    std::smatch m;
    static const std::regex descr(R"('descr'\s*:\s*'([^']*)')"), order(R"('fortran_order'\s*:\s*(True|False))"),
        shape(R"('shape'\s*:\s*\(([^)]*)\))");
    if (!std::regex_search(header, m, descr)) bad(path, ".npy header without 'descr'");
    const std::string d = m[1].str();
    if (npy_descr(want).empty())
      bad(path, "NumPy has no " + std::string(dtype_name(want)) + ": give it as a raw file of little-endian elements");
    // One-byte elements have no byte order: any mark will do.
    const std::string want_d = npy_descr(want);
    if (d != want_d && !(width == 1 && d.size() == 3 && d.substr(1) == want_d.substr(1)))
      bad(path, "holds '" + d + "' elements, the argument is " + std::string(dtype_name(want)) + " ('" + want_d + "')");
    if (!std::regex_search(header, m, order) || m[1].str() != "False")
      bad(path, "a .npy array in Fortran order (write it C-ordered: np.ascontiguousarray)");
    if (!std::regex_search(header, m, shape)) bad(path, ".npy header without 'shape'");
    int64_t n = 1;
    static const std::regex dim(R"(\d+)");
    const std::string dims = m[1].str();
    for (auto it = std::sregex_iterator(dims.begin(), dims.end(), dim); it != std::sregex_iterator(); ++it)
      n *= std::stoll(it->str());
    out.elems = n;
    if (all.size() - data_at != static_cast<size_t>(n) * width)
      bad(path, "its header gives " + std::to_string(n) + " elements, the file holds " +
                    std::to_string((all.size() - data_at) / width));
  } else {
    if (all.size() % width != 0)
      bad(path, std::to_string(all.size()) + " bytes are not a whole number of " + std::string(dtype_name(want)) + " elements");
    out.elems = static_cast<int64_t>(all.size() / width);
  }
  out.bytes.assign(all.begin() + static_cast<std::ptrdiff_t>(data_at), all.end());
  return out;
}

}  // namespace soltune
