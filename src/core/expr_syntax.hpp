#pragma once
// Expressions as Kernel Tuner's restrictions and Python write them: `%` (floor modulo, as
// mod(a, b)), `//` (fdiv), `and`, `or`, `not` (binding looser than a comparison), True, False,
// and chained comparisons (a < b < c is a < b && b < c). canonical_expression rewrites such text
// into the form muparser evaluates and C++ compiles (exported headers emit it); text without them
// comes back unchanged.
#include <string>

#include "core/error.hpp"

namespace soltune {

// Throws Error naming loc and the column where Python-style text does not parse.
std::string canonical_expression(const std::string& text, const SourceLoc& loc);

}  // namespace soltune
