#pragma once
// Tensor maps (TMA descriptors) that a variant declares under `tensor_maps:` (docs/TEMPLATES.md):
// their parameters for one configuration, and the rules of cuTensorMapEncodeTiled (CUDA 13's cuda.h)
// checked on the host, so that every backend rules out a configuration whose map the driver would
// refuse before anything compiles. The evaluator encodes the maps (eval/tensor_map_encode.hpp); the
// export emits the same rules into its plans.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"
#include "core/yaml_util.hpp"

namespace soltune {

// What TMA allows (cuda.h, cuTensorMapEncodeTiled).
inline constexpr int kTensorMapMaxRank = 5;
inline constexpr int64_t kTensorMapMaxDim = int64_t{1} << 32;     // globalDim <= 2^32
inline constexpr int64_t kTensorMapStrideLimit = int64_t{1} << 40;  // globalStrides < 2^40 bytes
inline constexpr int64_t kTensorMapMaxBox = 256;                     // boxDim <= 256

// One map's parameters for a configuration: cuTensorMapEncodeTiled's arguments less the address.
struct TensorMapParams {
  const TensorMapSpec* spec = nullptr;
  int elem_bytes = 0;
  std::vector<int64_t> dims;     // elements, innermost first
  std::vector<int64_t> strides;  // bytes, of dims 1..rank-1
  std::vector<int64_t> box;      // elements
  int64_t buffer_bytes = 0;      // what the buffer holds
  // "dims [1793, 1793], strides [3586] B, box [64, 128], 2-byte elements, swizzle 128B, L2 256B, oob zero"
  std::string str() const;
};

std::string_view swizzle_name(TensorMapSpec::Swizzle s);  // "none", "32B", "64B", "128B"
int swizzle_span(TensorMapSpec::Swizzle s);               // bytes: 0, 32, 64, 128
std::string_view l2_promotion_name(TensorMapSpec::L2 l);  // "none", "64B", "128B", "256B"
std::string_view oob_name(TensorMapSpec::Oob o);          // "zero", "nan"

// Parses one entry of `tensor_maps:` (its key is the name) of a variant that serves `dtypes`; its
// buffer is one of the problem's or of the variant's `scratch` (a copy a launch before the main one
// makes, such as operands padded to 16-byte rows). `names`: what its expressions may use (sizes,
// knobs, dtype_bytes). Throws Error with the file, line and column of what is wrong.
TensorMapSpec parse_tensor_map(const std::string& name, const yaml::Node& n, const ProblemSpec& p,
                               const std::vector<ArgSpec>& scratch, const std::vector<DType>& dtypes,
                               const std::set<std::string, std::less<>>& names);

// Evaluates a map's expressions for bindings (sizes, dtype_bytes, knobs). Throws Error (naming the
// expression's file and line) where one is not an integer.
TensorMapParams tensor_map_params(const TensorMapSpec& m, const Bindings& b);
// The rule of cuTensorMapEncodeTiled a map breaks, or that it reaches past its buffer: "" when none.
// Two rules need no check: the global address is a buffer's start (cudaMalloc gives 256-byte
// alignment, an output's data starts 64 KiB into its guarded allocation, and an exported header
// refuses pointers that are not 16-byte aligned), and every element stride is 1.
std::string tensor_map_rule_broken(const TensorMapParams& p);
// For a configuration of v (bindings with the device symbols): "tensor map 'ta' over 'a': <rule>"
// for the first map that breaks a rule, or why the device cannot use tensor maps; "" when all hold.
std::string why_tensor_maps_illegal(const VariantSpec& v, const Bindings& b);

}  // namespace soltune
