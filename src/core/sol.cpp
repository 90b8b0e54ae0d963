#include "core/sol.hpp"

#include <algorithm>
#include <cmath>

namespace soltune {

double t_sol_us(double flops, double bytes, double peak_flops, double bandwidth) {
  const double tc = peak_flops > 0 ? flops / peak_flops : 0;
  const double tm = bandwidth > 0 ? bytes / bandwidth : 0;
  return std::max(tc, tm) * 1e6;
}

SolScore sol_score(double t, double t_ref, double t_sol) {
  SolScore s{t, t_ref, t_sol};
  // T_SOL rests on measured ceilings, themselves timings with a spread of about a percent: a time
  // just under it is noise, one clearly under it means skipped work or a broken timer.
  s.below_sol = t < t_sol * (1.0 - kSolNoise);
  if (!(t > 0) || !(t_ref > t_sol) || !(t_sol > 0)) return s;
  s.valid = true;
  s.score = 0.5 * (1.0 + std::log(t_ref / t) / std::log(t_ref / t_sol));
  s.execbench = 1.0 / (1.0 + (t - t_sol) / (t_ref - t_sol));
  return s;
}

}  // namespace soltune
