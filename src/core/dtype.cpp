#include "core/dtype.hpp"

#include <array>

#include "core/error.hpp"

namespace soltune {
namespace {
struct Row {
  DType t;
  std::string_view name, cpp;
  int bytes;
};
constexpr std::array<Row, 6> kRows{{{DType::f16, "f16", "__half", 2},
                                    {DType::bf16, "bf16", "__nv_bfloat16", 2},
                                    {DType::f32, "f32", "float", 4},
                                    {DType::f64, "f64", "double", 8},
                                    {DType::i32, "i32", "int", 4},
                                    {DType::i64, "i64", "long long", 8}}};
const Row& row(DType t) { return kRows[static_cast<size_t>(t)]; }
}  // namespace

DType parse_dtype(std::string_view name) {
  for (const auto& r : kRows)
    if (r.name == name) return r.t;
  throw Error("unknown dtype '" + std::string(name) + "' (expected one of f16, bf16, f32, f64, i32, i64)");
}
std::string_view dtype_name(DType t) { return row(t).name; }
std::string_view dtype_cpp(DType t) { return row(t).cpp; }
int dtype_bytes(DType t) { return row(t).bytes; }
bool dtype_is_float(DType t) { return t != DType::i32 && t != DType::i64; }

}  // namespace soltune
