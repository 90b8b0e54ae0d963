#pragma once
#include <string>
#include <string_view>

namespace soltune {

enum class DType { f16, bf16, f32, f64, i32, i64 };

DType parse_dtype(std::string_view name);  // throws Error on an unknown name
std::string_view dtype_name(DType t);      // "f32"
std::string_view dtype_cpp(DType t);       // "float", "__nv_bfloat16"...
int dtype_bytes(DType t);
bool dtype_is_float(DType t);

}  // namespace soltune
