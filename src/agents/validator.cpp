#include "agents/validator.hpp"

#include <cmath>

#include "core/sol.hpp"

namespace soltune {

Verdict Validator::check(const EvalResult& r) const {
  if (r.status != Status::ok) return {false, std::string(status_name(r.status))};
  if (!(r.time.median_us > 0) || !std::isfinite(r.time.median_us)) return {false, "no valid time"};
  if (t_sol_us_ > 0 && r.time.median_us < t_sol_us_ * (1 - kSolNoise))
    return {false, "time under T_SOL: to be re-validated, never a win"};
  if (r.kind == TimeKind::predicted) return {true, ""};
  const auto& a = r.acc;
  if (!a.pass) return {false, "correctness checks did not pass: " + a.summary()};
  if (a.rounds < 1 || a.checked <= 0) return {false, "no correctness round was run"};
  if (a.nonfinite || a.unwritten || a.out_of_bounds) return {false, "NaN, unwritten or out-of-bounds output"};
  if (!a.precision_ok) return {false, "precision below the dtype's limit"};
  if (r.time.reps < 1) return {false, "not timed"};
  return {true, ""};
}

}  // namespace soltune
