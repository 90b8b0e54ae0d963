#pragma once
// The pieces export_header() assembles (header_export.hpp says what the header does).
#include <set>
#include <string>
#include <vector>

#include "codegen/header_export.hpp"

namespace soltune {

std::string export_ident(const std::string& s);  // a C++ identifier from a name
// Returns the source without its #include lines, which are added to `includes`.
std::string split_includes(const std::string& src, std::set<std::string>& includes);
// cdiv, fdiv, mod, pow, min, max, is_pow2 over doubles, as soltune's expressions define them.
std::string export_helpers();
// Plans, launches, the dispatcher and can_implement of one dtype's specializations.
std::string export_dtype(const ProblemSpec& p, DType dt, const std::vector<const Specialization*>& specs);

}  // namespace soltune
