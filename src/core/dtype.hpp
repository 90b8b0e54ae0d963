#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace soltune {

// Element types of buffers and scalars. Integer and bool outputs compare exactly (unless the
// problem declares a tolerance for their dtype); bool is one byte, 0 or 1. e4m3 and e5m2 are OCP's
// 8-bit floats (CUDA's __nv_fp8_e4m3, __nv_fp8_e5m2): e4m3 has no infinity and one NaN pattern per
// sign (its largest finite value is 448), e5m2 has both, like f16.
enum class DType { f16, bf16, f32, f64, i32, i64, i8, i16, u8, u16, u32, u64, boolean, e4m3, e5m2 };

DType parse_dtype(std::string_view name);  // throws Error on an unknown name
std::string_view dtype_name(DType t);      // "f32"
std::string_view dtype_cpp(DType t);       // "float", "__nv_bfloat16"...
int dtype_bytes(DType t);
bool dtype_is_float(DType t);
// A floating dtype's smallest positive (subnormal) and largest finite values; {0, 0} for the others.
struct FiniteRange {
  double min_subnormal = 0, max_finite = 0;
};
FiniteRange dtype_finite_range(DType t);
// An integer or bool dtype's values: min, and end, one past the largest (each a power of two, so
// exact as a double for 64-bit types too); {0, 0} for the floating ones.
struct IntRange {
  double min = 0, end = 0;
  bool holds(double v) const { return v >= min && v < end; }
};
IntRange dtype_int_range(DType t);
const std::vector<DType>& all_dtypes();   // in declaration order
// The CUDA vector type of `lanes` elements of t ("float2", "int4", "__nv_bfloat162"), or "" where
// CUDA has none.
std::string dtype_vector_cpp(DType t, int lanes);

}  // namespace soltune
