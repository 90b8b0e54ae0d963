#include "eval/cost_estimate.hpp"

#include <algorithm>
#include <set>

#include "core/rounds.hpp"

namespace soltune {
namespace {

// Rough constants, each from H100 runs of configs/matmul-models.yaml (docs/FINDINGS.md): the
// reference reaches half the FP32 rate per product (DMMA: 29 of 60 TFLOP/s), a vendor library 75% of
// its unit, a first candidate 1.5 times T_SOL, an unfused baseline 4 times; a repetition's draw and
// gate about 20 us beside its flush (the host's round trip and demotion, partly behind the flush).
constexpr double kReferenceShare = 0.5;
constexpr double kLibraryShare = 0.75;
constexpr double kCandidateOverSol = 1.5;
constexpr double kUnfusedOverSol = 4.0;
constexpr double kRepetitionHostS = 20e-6;
constexpr double kLaunchS = 5e-6;

}  // namespace

CostEstimate estimate_costs(const Task& t, const DeviceInfo& d, const CudaEvalOptions& o) {
  const auto& ceil = d.ceilings();
  const double bw = ceil.sol_bw() > 0 ? ceil.sol_bw() : 1e12, fp32 = ceil.fp32 > 0 ? ceil.fp32 : 1e13;
  const double sol_s = t.t_sol_us(ceil) * 1e-6;
  const bool contraction = std::any_of(t.problem->args.begin(), t.problem->args.end(), [](const ArgSpec& a) { return a.magnitude; });
  CostEstimate e;
  // A contraction's reference computes C and its magnitude (two products); others read the inputs
  // and write double outputs, about three times the problem's bytes.
  e.reference_s = std::max((contraction ? 2.0 : 1.0) * t.flops() / (kReferenceShare * fp32), 3.0 * t.bytes() / bw) + kLaunchS;
  // Rotating input sets, a repetition flushes nothing (rotation_sets); the redraw and round trip remain.
  const double flush_s =
      (rotation_sets(t, d, o.timing) > 0 ? 0.0 : static_cast<double>(l2_flush_bytes(t, d, o.timing)) / bw) + kRepetitionHostS;
  auto timed = [&](double run_s) {  // warm-up, probe and the repetitions target_ms asks for
    const double reps = std::clamp(o.target_ms * 1e-3 / run_s, static_cast<double>(o.min_reps), static_cast<double>(o.max_reps));
    return (launches_before_timing(run_s * 1e3, o.warmup) + reps) * (run_s + flush_s);
  };
  const double ref_run_s = (t.problem->baseline_library ? sol_s / kLibraryShare : kUnfusedOverSol * sol_s) + kLaunchS;
  e.baseline_s = e.reference_s + ref_run_s + timed(ref_run_s);
  const double run_s = kCandidateOverSol * sol_s + kLaunchS;
  const int rounds = std::max(o.check_rounds, correctness_rounds(*t.problem));
  // A checked timed repetition runs the reference, or the problem's check routine: the GEMM's
  // projection reads the inputs and C about three times and computes the exact rows at the
  // reference's rate (eval/timed_check.cpp); the reference on sampled rows costs their share of it
  // (eval/rows_check.cpp).
  const auto sizes = t.sizes();
  const auto& check = t.problem->timed_check;
  const bool sampled = check && (check->routine == "reference_rows" || check->routine == "reference_picked");
  const auto m = std::max<int64_t>(sampled                ? static_cast<int64_t>(check->sizes.at("rows").eval(t.fixed(d)))
                                   : sizes.count("m") ? static_cast<int64_t>(sizes.at("m"))
                                                      : 1,
                                   1);
  const double rows =
      static_cast<double>(sampled ? reference_check_rows(m) : exact_check_rows(m)) / static_cast<double>(m);
  const double check_s = !check ? e.reference_s : sampled ? e.reference_s * rows : e.reference_s * rows + 3.0 * t.bytes() / bw;
  e.candidate_s = rounds * (e.reference_s + run_s + 2.0 * t.bytes() / bw) + timed(run_s) + kChecksPerBatch * check_s;
  return e;
}

RunEstimate estimate_run(const RunConfig& cfg, const DeviceInfo& d) {
  CudaEvalOptions o;
  o.timing = cfg.timing;
  std::set<std::string> shapes;
  RunEstimate r;
  for (const auto& t : config_tasks(cfg)) {
    if (!why_variant_cannot_run(*t.variant, d).empty()) continue;
    const auto e = estimate_costs(t, d, o);
    if (shapes.insert(t.dtype_shape()).second) r.baseline_s += e.baseline_s;
    r.first_s += e.candidate_s;
    ++r.tasks;
    if (e.candidate_s > r.costliest_s) {
      r.costliest_s = e.candidate_s;
      r.costliest = t.id();
    }
  }
  r.baselines = shapes.size();
  return r;
}

}  // namespace soltune
