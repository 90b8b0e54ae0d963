#include "core/dtype.hpp"

#include <array>

#include "core/error.hpp"

namespace soltune {
namespace {
struct Row {
  DType t;
  std::string_view name, cpp;
  int bytes;
  bool is_float;
  std::string_view vec;  // the stem of CUDA's vector types ("float" for float2, float4); "" for none
  int max_lanes;         // the widest of them (CUDA 13 deprecates the 32-byte double4, longlong4...)
};
constexpr std::array<Row, 15> kRows{{{DType::f16, "f16", "__half", 2, true, "__half", 2},
                                     {DType::bf16, "bf16", "__nv_bfloat16", 2, true, "__nv_bfloat16", 2},
                                     {DType::f32, "f32", "float", 4, true, "float", 4},
                                     {DType::f64, "f64", "double", 8, true, "double", 2},
                                     {DType::i32, "i32", "int", 4, false, "int", 4},
                                     {DType::i64, "i64", "long long", 8, false, "longlong", 2},
                                     {DType::i8, "i8", "signed char", 1, false, "char", 4},
                                     {DType::i16, "i16", "short", 2, false, "short", 4},
                                     {DType::u8, "u8", "unsigned char", 1, false, "uchar", 4},
                                     {DType::u16, "u16", "unsigned short", 2, false, "ushort", 4},
                                     {DType::u32, "u32", "unsigned int", 4, false, "uint", 4},
                                     {DType::u64, "u64", "unsigned long long", 8, false, "ulonglong", 2},
                                     {DType::boolean, "bool", "bool", 1, false, "", 1},
                                     {DType::e4m3, "e4m3", "__nv_fp8_e4m3", 1, true, "", 1},
                                     {DType::e5m2, "e5m2", "__nv_fp8_e5m2", 1, true, "", 1}}};
const Row& row(DType t) { return kRows[static_cast<size_t>(t)]; }
}  // namespace

DType parse_dtype(std::string_view name) {
  for (const auto& r : kRows)
    if (r.name == name) return r.t;
  std::string names;
  for (const auto& r : kRows) names += (names.empty() ? "" : ", ") + std::string(r.name);
  throw Error("unknown dtype '" + std::string(name) + "' (expected one of " + names + ")");
}
std::string_view dtype_name(DType t) { return row(t).name; }
std::string_view dtype_cpp(DType t) { return row(t).cpp; }
int dtype_bytes(DType t) { return row(t).bytes; }
bool dtype_is_float(DType t) { return row(t).is_float; }

FiniteRange dtype_finite_range(DType t) {
  switch (t) {
    case DType::f16: return {5.960464477539063e-08, 65504.0};
    case DType::bf16: return {9.183549615799121e-41, 3.3895313892515355e38};
    case DType::f32: return {1.401298464324817e-45, 3.4028234663852886e38};
    case DType::f64: return {4.9406564584124654e-324, 1.7976931348623157e308};
    case DType::e4m3: return {0x1p-9, 448.0};
    case DType::e5m2: return {0x1p-16, 57344.0};
    default: return {};
  }
}

IntRange dtype_int_range(DType t) {
  switch (t) {
    case DType::i8: return {-0x1p7, 0x1p7};
    case DType::i16: return {-0x1p15, 0x1p15};
    case DType::i32: return {-0x1p31, 0x1p31};
    case DType::i64: return {-0x1p63, 0x1p63};
    case DType::u8: return {0, 0x1p8};
    case DType::u16: return {0, 0x1p16};
    case DType::u32: return {0, 0x1p32};
    case DType::u64: return {0, 0x1p64};
    case DType::boolean: return {0, 2};
    default: return {};
  }
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all = [] {
    std::vector<DType> v;
    for (const auto& r : kRows) v.push_back(r.t);
    return v;
  }();
  return all;
}

std::string dtype_vector_cpp(DType t, int lanes) {
  const Row& r = row(t);
  if (r.vec.empty() || lanes < 2 || lanes > r.max_lanes || (lanes != 2 && lanes != 3 && lanes != 4)) return "";
  return std::string(r.vec) + std::to_string(lanes);
}

}  // namespace soltune
