#pragma once
// The pieces export_header() assembles (header_export.hpp says what the header does).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/header_export.hpp"

namespace soltune {

std::string export_ident(const std::string& s);  // a C++ identifier from a name
// The namespace holding the copy of s's variant source its kernels come from: v_<variant>, and for
// a variant with definitions (defines:) one per set of values, v_<variant>_<hash of the values>.
std::string variant_namespace(const Specialization& s);
// The macro names a source #defines, in order of first definition.
std::vector<std::string> source_macros(const std::string& src);
// Returns the source without its #include lines, which are added to `includes`.
std::string split_includes(const std::string& src, std::set<std::string>& includes);
// cdiv, fdiv, mod, pow, min, max, is_pow2 over doubles, as soltune's expressions define them.
std::string export_helpers();
// Loading and launching a kernel of an embedded cubin (detail::load_embedded, launch_embedded).
std::string embedded_helpers();
// A C++ string literal holding `bytes` exactly (adjacent literals, one per line).
std::string bytes_literal(const std::string& bytes);
// Plans, launches, the dispatcher and can_implement of one dtype's specializations; `images` names
// each embedded binary's array (binary -> identifier in namespace detail).
std::string export_dtype(const ProblemSpec& p, DType dt, const std::vector<const Specialization*>& specs,
                         const std::map<std::string, std::string>& images);

}  // namespace soltune
