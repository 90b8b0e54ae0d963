// Given data read from .npy and raw files: the dtype and element count they hold, and each way a
// file can be wrong, named with the file.
#include "core/array_file.hpp"

#include <gtest/gtest.h>

#include "../support/npy.hpp"
#include "core/error.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

std::string error_of(const fs::path& p, bool raw, DType t) {
  try {
    read_array_file(p, raw, t);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ArrayFile, NpyAndRawFilesAndTheirMistakes) {
  test::TempDir dir("array-file");
  const auto f = dir.path() / "poly.npy";
  ASSERT_TRUE(test::write_npy(f, std::vector<float>{1.5f, -2.0f, 3.25f, 4.0f, 5.0f, 6.0f}, "<f4", "(3, 2)"));
  const auto a = read_array_file(f, false, DType::f32);
  EXPECT_EQ(a.elems, 6);
  ASSERT_EQ(a.bytes.size(), 24u);
  float third;
  std::memcpy(&third, a.bytes.data() + 8, 4);
  EXPECT_EQ(third, 3.25f);
  EXPECT_NE(error_of(f, false, DType::i32).find("holds '<f4' elements, the argument is i32 ('<i4')"), std::string::npos);
  EXPECT_NE(error_of(f, false, DType::bf16).find("NumPy has no bf16"), std::string::npos);

  const auto u = dir.path() / "mask.npy";  // one-byte elements: either byte-order mark
  ASSERT_TRUE(test::write_npy(u, std::vector<unsigned char>{1, 0, 1}, "<u1", "(3,)"));
  EXPECT_EQ(read_array_file(u, false, DType::u8).elems, 3);

  auto text = test::read_file(f);
  const auto fortran = dir.path() / "fortran.npy";
  test::write_file(fortran, std::string(text).replace(text.find("False"), 5, "True "));
  EXPECT_NE(error_of(fortran, false, DType::f32).find("Fortran order"), std::string::npos);
  const auto short_file = dir.path() / "short.npy";
  test::write_file(short_file, text.substr(0, text.size() - 4));
  EXPECT_NE(error_of(short_file, false, DType::f32).find("its header gives 6 elements, the file holds 5"), std::string::npos);
  const auto not_npy = dir.path() / "not.npy";
  test::write_file(not_npy, "hello, world");
  EXPECT_NE(error_of(not_npy, false, DType::f32).find("not a .npy file"), std::string::npos);

  const auto raw = dir.path() / "data.bin";
  test::write_file(raw, std::string(12, '\0'));
  EXPECT_EQ(read_array_file(raw, true, DType::f32).elems, 3);
  EXPECT_EQ(read_array_file(raw, true, DType::bf16).elems, 6);
  EXPECT_NE(error_of(raw, true, DType::f64).find("12 bytes are not a whole number of f64 elements"), std::string::npos);
  EXPECT_NE(error_of(dir.path() / "missing.bin", true, DType::f32).find("missing.bin: cannot be read"), std::string::npos);
}

}  // namespace
}  // namespace soltune
