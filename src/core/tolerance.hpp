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

// The projection check of a GEMM's timed repetitions (problem.yaml's `check: {routine:
// gemm_projection}`): row i of the candidate's C passes where |(C x)_i - (A (B x))_i| is at most this,
// x_j = +-1 drawn after C was written. Every honest element errs by at most its band tol_ij, and with
// |ref_ij| <= |C_ij| + tol_ij,
//   sum_j tol_ij^2 <= 3 / (1 - rtol)^2 (n atol^2 + rtol^2 sum_j C_ij^2 + mtol^2 sum_j mag_ij^2),
// sum_j mag_ij^2 <= mmax msum (mmax at least the row's largest magnitude, msum their sum). Hoeffding
// then bounds the chance that an honest row exceeds zscore times its square root by
// 2 exp(-zscore^2 / 2). The rounding of the two double sums (k and n terms) adds the last term;
// cabs = sum_j |C_ij|.
#define SOLTUNE_PROJECTION_BOUND(n, k, atol, rtol, mtol, c2, mmax, msum, cabs, zscore)                         \
  ((zscore) * sqrt(3.0 / ((1.0 - (rtol)) * (1.0 - (rtol))) *                                                \
                   ((n) * (atol) * (atol) + (rtol) * (rtol) * (c2) + (mtol) * (mtol) * (mmax) * (msum))) + \
   ((n) + (k) + 2.0) * 2.220446049250313e-16 * ((msum) + (cabs)))

namespace soltune {

// The z-score of the projection check: an honest row fails with probability at most 1e-12.
inline const double kProjectionZscore = std::sqrt(2.0 * std::log(2.0 / 1e-12));

// "#define SOLTUNE_BAND_WIDTH(...) ..." and "#define SOLTUNE_PROJECTION_BOUND(...) ..." as source
// text for the device's checks.
const char* band_rule_text();

// The comparison the evaluator runs on the device, on host arrays: out holds the candidate's values
// (already rounded to its dtype, NaN for an unwritten element), ref and mag (empty: none) the
// reference's. out_max: the dtype's largest finite value, so that an Inf where the reference itself
// rounds past it counts as right. Fills checked, mismatches, nonfinite, the errors, rel_l2,
// precision_ok and pass (as compare_outputs does, guard zones and workspaces aside).
Accuracy compare_on_host(const std::vector<double>& out, const std::vector<double>& ref, const std::vector<double>& mag,
                         const Tolerance& tol, const Bindings& sizes, double out_max);

}  // namespace soltune
