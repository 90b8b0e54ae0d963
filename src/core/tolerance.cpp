#include "core/tolerance.hpp"

#include <algorithm>
#include <cmath>

#define SOLTUNE_STR2(...) #__VA_ARGS__
#define SOLTUNE_STR(...) SOLTUNE_STR2(__VA_ARGS__)

namespace soltune {

const char* band_rule_text() {
  return "#define SOLTUNE_BAND_WIDTH(ref, mag, atol, rtol, mtol) " SOLTUNE_STR(
      SOLTUNE_BAND_WIDTH(ref, mag, atol, rtol, mtol)) "\n"
         "#define SOLTUNE_PROJECTION_BOUND(n, k, atol, rtol, mtol, c2, mmax, msum, cabs, zscore) " SOLTUNE_STR(
             SOLTUNE_PROJECTION_BOUND(n, k, atol, rtol, mtol, c2, mmax, msum, cabs, zscore)) "\n";
}

Accuracy compare_on_host(const std::vector<double>& out, const std::vector<double>& ref, const std::vector<double>& mag,
                         const Tolerance& tol, const Bindings& sizes, double out_max) {
  Accuracy acc;
  const double mtol = tol.mtol.empty() ? 0.0 : tol.mtol.eval(sizes);
  double sq_err = 0, sq_ref = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double v = out[i], r = ref[i], m = mag.empty() ? 0.0 : mag[i];
    ++acc.checked;
    if (std::isnan(v)) {
      ++acc.nonfinite, ++acc.mismatches;
      continue;
    }
    const double width = SOLTUNE_BAND_WIDTH(r, m, tol.atol, tol.rtol, mtol);
    if (std::isinf(v)) {
      if (!(std::fabs(r) + width > out_max && std::signbit(r) == std::signbit(v))) ++acc.nonfinite, ++acc.mismatches;
      continue;
    }
    const double err = std::fabs(v - r);
    if (!(err <= width)) ++acc.mismatches;
    acc.max_abs_err = std::max(acc.max_abs_err, err);
    if (std::fabs(r) > tol.atol) {  // as on the device: relative errors above the absolute floor only
      acc.max_rel_err = std::max(acc.max_rel_err, err / std::fabs(r));
      sq_err += err * err;
      sq_ref += r * r;
    }
  }
  acc.rel_l2 = sq_ref > 0 ? std::sqrt(sq_err / sq_ref) : std::sqrt(sq_err);
  acc.precision_ok = acc.rel_l2 <= tol.rel_l2;
  const bool band_ok = static_cast<double>(acc.mismatches) <= (1.0 - tol.min_match) * static_cast<double>(acc.checked);
  acc.rounds = 1;
  acc.settle(band_ok);
  return acc;
}

}  // namespace soltune
