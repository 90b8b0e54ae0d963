#pragma once
// The correctness rounds: what each round draws for each input. Round 0 draws the declared
// distribution, 1 the same eight times wider, 2 shifted negative by twice the spread, 3 magnitudes
// log-uniform over the dtype's whole finite range (subnormals included, both signs; the input's
// `range` narrows it), and 4 on the input's declared edge values (edge_inits), where it has them.
#include <string>

#include "core/dtype.hpp"
#include "core/problem.hpp"

namespace soltune {

// One input's draw: the device fill's kind and its two parameters (normal: mean and deviation;
// uniform: bounds; log-uniform: the smallest and largest magnitude).
struct Draw {
  enum class Kind { normal = 0, uniform = 1, log_both = 2, log_positive = 3, log_negative = 4 } kind = Kind::normal;
  double a = 0, b = 1;
};

constexpr int kFullRangeRound = 3;
int correctness_rounds(const ProblemSpec& p);  // the built-in ones plus the problem's edge-value rounds
std::string round_name(int round);             // "declared", "8x wider", ..., "edge values #1"
// Throws Error (at the range's line) where a bound is not a positive finite magnitude for `sizes`.
Draw round_draw(const ArgSpec& a, DType t, int round, const Bindings& sizes);

}  // namespace soltune
