#pragma once
// A kernel's parameters checked against what its variant passes, before any tuning: one NVRTC
// compile per variant and dtype of the variant's source with static_asserts appended, one per
// parameter, that the argument soltune passes (an input as `const T*` or, for kernels written for
// other tuners, `T*`: the timed loop sees it written; an output, workspace or scratch as `T*`, a
// scalar as its dtype) converts to it. A kernel that takes what no argument converts to would tune
// and then fail only at export, its results lost with the fix's new source hash.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"
#include "core/problem.hpp"

namespace soltune {

// The appended checks for these launches (name expressions for one configuration), over v's source.
std::string signature_check_source(const ProblemSpec& p, const VariantSpec& v, DType t,
                                   const std::vector<std::pair<const LaunchSpec*, std::string>>& launches);

// Compiles the check for one legal configuration of v at dtype t (bindings b: sizes, device and
// knobs). Returns "" when every parameter takes its argument (or when the kernel does not compile
// at all: the candidates report that themselves), else each mismatch, one per line.
// deadline: a compile still running then is stopped, and the check says nothing ("").
std::string check_signatures(const Compiler& c, const ProblemSpec& p, const VariantSpec& v, DType t, const Bindings& b,
                             const std::string& arch,
                             std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

}  // namespace soltune
