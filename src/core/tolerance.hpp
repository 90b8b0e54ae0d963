#pragma once
// The per-element band of the correctness check, written once: the device comparison (a builtin
// kernel, src/eval) is compiled from band_rule_text(), and host code (tests, simulations of what
// a kernel's arithmetic does to its error) uses the same macro. Tolerance (problem.hpp) holds its
// parameters; docs/MEASUREMENT.md says why the band takes this form.
#include <cmath>
#include <vector>

#include "core/measure.hpp"
#include "core/problem.hpp"

// An element is right where |out - ref| <= this width: mag is the magnitude of what the reference
// summed into the element ((|A| |B|)_ij for a matrix product; 0 for outputs without one). An Inf
// is right where the band reaches past the dtype's largest finite value, on the reference's side.
#define SOLTUNE_BAND_WIDTH(ref, mag, atol, rtol, mtol) ((atol) + (rtol) * fabs(ref) + (mtol) * (mag))

namespace soltune {

// "#define SOLTUNE_BAND_WIDTH(...) ..." as source text for the device comparison.
const char* band_rule_text();

// The comparison the evaluator runs on the device, on host arrays: out holds the candidate's values
// (already rounded to its dtype, NaN for an unwritten element), ref and mag (empty: none) the
// reference's. out_max: the dtype's largest finite value, so that an Inf where the reference itself
// rounds past it counts as right. Fills checked, mismatches, nonfinite, the errors, rel_l2,
// precision_ok and pass (as compare_outputs does, guard zones and workspaces aside).
Accuracy compare_on_host(const std::vector<double>& out, const std::vector<double>& ref, const std::vector<double>& mag,
                         const Tolerance& tol, const Bindings& sizes, double out_max);

}  // namespace soltune
