#pragma once
// A problem's kernel of last resort: the one configuration of its fallback variant (`fallback:` in
// problem.yaml) that must be legal at every valid shape, so that tune always has a kernel to
// measure and an exported header always has one to launch.
#include <optional>
#include <string>

#include "core/space.hpp"
#include "core/task.hpp"

namespace soltune {

// The fallback's knob values for dtype t (its expressions at t's dtype_bytes), or nullopt when v has
// no fallback or a value is not a whole number.
std::optional<Config> fallback_config(const VariantSpec& v, DType t);

// The values the fallback's compiled-in sizes (its size template arguments, such as matmul's
// trans_b) take at shape s: one exported kernel of it serves exactly the shapes where they agree.
std::vector<int64_t> fallback_class(const ProblemSpec& p, const VariantSpec& v, const Config& c, const Shape& s);

// base with every combination of the listed values (problem.yaml's `values:`) of the sizes the
// fallback compiles in, one shape per class: where it must be measured so that an exported header
// has a fallback for every shape (matmul: base with trans_b 0 and with trans_b 1). Just base when
// it compiles no listed size in.
std::vector<Shape> fallback_shapes(const ProblemSpec& p, DType t, const Shape& base);

// The shapes the fallback is checked at: per size 1, 2, 3, 7, 31, 33, 255, 1000, 4097, 65537,
// 2^20 + 3 and 2^22 + 1 (a size with listed values: each of them), every combination whose bytes
// (the problem's `bytes`) are at most 4 GiB.
std::vector<Shape> fallback_probe_shapes(const ProblemSpec& p, DType t);

// Where the fallback is not legal for dtype t on device d: "" when it is legal at every probe shape,
// else the first shape that breaks it and why ("rows=1, cols=3: VEC == 1 || mod(cols, VEC) == 0").
// "no fallback" when the problem has none.
std::string fallback_gap(const ProblemSpec& p, DType t, const DeviceInfo& d);

}  // namespace soltune
