#pragma once
// Speed-of-light scores. T_SOL = max(FLOPs / peak rate, bytes / bandwidth).
//   log form:      S = 0.5 * (1 + ln(T_ref/T) / ln(T_ref/T_SOL))   0.5 = baseline, 1.0 = hardware limit
//   SOL-ExecBench: E = 1 / (1 + (T - T_SOL) / (T_ref - T_SOL))     1.0 at T_SOL, 0.5 at the baseline
// A time under T_SOL (by more than the ceilings' own noise, kSolNoise) is a red flag (below_sol),
// never a win; a score just above 1.0 is such noise, reported as measured.
namespace soltune {

struct SolScore {
  double t_us = 0, t_ref_us = 0, t_sol_us = 0;
  double score = 0;      // log form
  double execbench = 0;  // SOL-ExecBench form
  bool below_sol = false;
  bool valid = false;    // false when T_ref <= T_SOL (the baseline is at the limit; no scale)
};

// How far under T_SOL a time must be to raise the red flag (measurement noise of the ceilings).
inline constexpr double kSolNoise = 0.02;

double t_sol_us(double flops, double bytes, double peak_flops, double bandwidth);
SolScore sol_score(double t_us, double t_ref_us, double t_sol_us);

}  // namespace soltune
