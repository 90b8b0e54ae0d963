#include "eval/model_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "eval/candidates.hpp"
#include "eval/model_predictor.hpp"

namespace soltune {
namespace {
// Rough constants of the model (docs/MODEL.md): loaded-memory latency, the fraction of the
// datasheet bandwidth a streaming kernel reaches, the launch cost, and how far behind its average
// SM a grid of one wave ends (fitted to H200 measurements, docs/FINDINGS.md).
constexpr double kLatency = 1.0e-6;
constexpr double kAchievable = 0.90;
constexpr double kLaunchUs = 2.5;
// The share of its unit's ceiling a vendor library's routine reaches (a problem's library baseline).
constexpr double kLibraryEfficiency = 0.75;
constexpr double kImbalance = 0.10;

// The baseline's kernels are simple ones, an element or a row loop per thread as a framework's
// generic path runs them, and their time is fitted to the baselines measured on the H200
// (tests/data/h200_baselines.json: within 0.75x to 1.3x at all of its 67 tasks): per launch, the launch
// itself, then the slowest of three. Streaming: such kernels are bound by element accesses, about
// 5700 per SM per microsecond whether an element is 2 or 4 bytes (f32 GELU's eight launches ran at
// 2.9 TB/s, bf16's at 1.6), never faster than the bytes at 0.9 x the bandwidth. A thread's serial
// loads: each wave of threads walks its share of the elements (a row reduction over few rows).
// A thread's serial FLOPs: each waits on its operands (a naive contraction loads both per
// multiply-add), which FLOP-rate bounds miss by 15x at 1000^3.
constexpr double kBaselineLaunchUs = 2.3;
constexpr double kAccessesPerSmUs = 5700;
constexpr double kSerialAccessUs = 0.04;
constexpr double kSerialFlopUs = 0.075;

double baseline_launch_us(double bytes, double elements, double flops, const Geometry& g, const Resources& r,
                          const DeviceInfo& d) {
  const double threads = std::max(1.0, static_cast<double>(g.threads()));
  const double slots = static_cast<double>(std::max(1, occupancy_blocks_per_sm(r, g, d))) * d.sms;
  const double waves = std::ceil(static_cast<double>(g.blocks()) / slots);
  const double stream = std::max(bytes / (kAchievable * d.ceilings().mem_bw) * 1e6, elements / (kAccessesPerSmUs * d.sms));
  const double loads = waves * std::ceil(elements / threads) * kSerialAccessUs;
  const double serial_flops = waves * (flops / threads) * kSerialFlopUs;
  return kBaselineLaunchUs + std::max({stream, loads, serial_flops});
}
}  // namespace

Prediction predict_time(double flops, double bytes, double inflight, const Resources& r, const Geometry& g,
                        const DeviceInfo& d, ComputeUnit unit) {
  Prediction p;
  p.blocks_per_sm = occupancy_blocks_per_sm(r, g, d);
  const double slots = static_cast<double>(std::max(1, p.blocks_per_sm)) * d.sms;
  const double blocks = static_cast<double>(g.blocks());
  const double resident = std::min(blocks, slots) * static_cast<double>(g.block_threads());
  const double spill_bytes = static_cast<double>(r.spill_loads + r.spill_stores) * static_cast<double>(g.threads());
  const double peak = kAchievable * d.ceilings().mem_bw;
  // Little's law with queueing: the bytes in flight over one latency, as a fraction x of what the
  // peak needs, reach peak * x / (1 + x). Bandwidth keeps growing with concurrency and approaches
  // the peak smoothly (a hard min(peak, ...) knee made every configuration past it tie). A thread's
  // loads are in flight only between its other work (reductions, stores, address arithmetic), and
  // the fuller an SM, the more of its threads are loading at a time: the bytes in flight are
  // weighted by the occupancy. Without that weight, few threads holding many bytes each (a warp per
  // row of 128 floats) ranked first where they measure 9% behind full SMs.
  // Per SM in use: a grid of fewer blocks than SMs leaves the others idle, not its own SMs emptier
  // (weighted over all SMs, one block of 256 threads streamed 8 MB in 20 minutes).
  const double threads_per_sm = d.max_threads_per_sm > 0 ? d.max_threads_per_sm : 2048;
  const double sms_used = std::max(1.0, std::min(blocks, static_cast<double>(d.sms)));
  const double occupancy = std::min(1.0, resident / (threads_per_sm * sms_used));
  const double x = resident * std::max(inflight, 1.0) * occupancy / (peak * kLatency);
  p.bandwidth = peak * x / (1 + x);
  const double waves = std::ceil(blocks / slots);
  const double tail = blocks > slots ? waves * slots / blocks : 1.0;
  // A grid of one wave is balanced statically: each block keeps its SM until its share is done, and
  // the kernel ends with the slowest SM. Over many waves the block scheduler hands the last blocks
  // to whichever SM is free, which leaves 1/waves of the imbalance. On the H200, grid-stride and
  // persistent kernels ran a median 5-12% behind the same work launched as many waves.
  const double balance = 1 + kImbalance / std::max(1.0, blocks / slots);
  const double t_mem = (bytes + spill_bytes) / p.bandwidth * tail * balance;
  const double rate = d.ceilings().rate(unit);
  const double t_fp = rate > 0 ? flops / rate : 0;
  p.why = t_fp > t_mem ? "compute" : (x < 4 ? "memory latency (too few bytes in flight)" : "memory bandwidth");
  p.t_us = std::max(t_mem, t_fp) * 1e6 + kLaunchUs;
  return p;
}

Prediction predict_config(const Task& t, const Bindings& b, const Resources& r, const Geometry& g, const DeviceInfo& d) {
  const double bytes = t.bytes();
  const double inflight = t.variant->inflight_bytes.empty() ? bytes / static_cast<double>(g.threads())
                                                            : t.variant->inflight_bytes.eval(b);
  auto p = predict_time(t.flops(), bytes, inflight, r, g, d, t.variant->model_unit);
  // A plan of several launches: each further launch costs a launch, and the scratch buffers
  // between them are written once and read once at the streaming rate.
  double extra_launches = 0, scratch_bytes = 0;
  for (const auto* l : t.variant->all_launches())
    if (l != &t.variant->launch && (l->when.empty() || l->when.eval_bool(b))) extra_launches += 1;
  for (const auto& a : t.variant->scratch)
    scratch_bytes += static_cast<double>(buffer_elements(a, b)) * dtype_bytes(a.resolve_dtype(t.dtype));
  p.t_us += extra_launches * kLaunchUs + 2 * scratch_bytes / (kAchievable * d.ceilings().mem_bw) * 1e6;
  return p;
}

ModelEvaluator::ModelEvaluator(DeviceInfo d, const Compiler& c, std::string arch)
    : dev_(std::move(d)), compiler_(c), arch_(std::move(arch)) {}

TaskBaseline ModelEvaluator::baseline(const Task& t) {
  TaskBaseline b;
  b.kind = TimeKind::predicted;
  b.flops = t.flops();
  b.bytes = t.bytes();
  b.t_sol_us = t.t_sol_us(dev_.ceilings());
  const auto bind = t.fixed(dev_);
  const auto compiled = compiler_.compile_all(support_requests(t, bind, arch_));
  require_compiled(compiled[0], t.problem->name + "'s reference");
  require_compiled(compiled[1], t.problem->name + "'s baseline");
  if (const auto& lib = t.problem->baseline_library; lib && lib->steps.size() == 1) {
    // A vendor library runs near its unit's ceiling wherever the shape fills the device: cuBLAS bf16
    // at 4096^3 took 190 us on an H100 SXM, 73% of the datasheet's dense rate. (A plan of several
    // steps, the library's calls around the baseline's own kernels, is predicted as those kernels.)
    const double rate = dev_.ceilings().rate(t.problem->compute_unit(t.dtype));
    b.t_ref_us = std::max(rate > 0 ? t.flops() / (kLibraryEfficiency * rate) * 1e6 : 0.0,
                          t.bytes() / (kAchievable * dev_.ceilings().sol_bw()) * 1e6) + kLaunchUs;
    b.ref_timing.median_us = b.t_ref_us;
    b.source = lib->label;
    b.note = "T_ref: " + lib->label + ", predicted by the model backend for " + dev_.name + " at " +
             std::to_string(static_cast<int>(100 * kLibraryEfficiency)) + "% of the unit's ceiling";
    return b;
  }
  b.source = t.problem->baseline_label;
  Resources generic;  // the baseline's simple kernels: a modest register count, no shared memory
  generic.registers = 32;
  // Per launch: the elements (and bytes) of the buffers it names, as often as it names them: a
  // kernel given x twice loads it twice, and one given t0 as input and output reads and writes it.
  std::vector<double> bytes(t.problem->baseline.size()), elements(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!t.problem->baseline[i].when.empty() && t.problem->baseline[i].when.eval(bind) == 0) continue;  // not launched here
    for (const auto& name : t.problem->baseline[i].args) {
      const ArgSpec* a = t.problem->find_arg(name);
      if (!a)
        for (const auto& tmp : t.problem->baseline_temps)
          if (tmp.name == name) a = &tmp;
      // A workspace is small scratch that stays in cache: the model ignores it. An inout buffer is
      // read and written.
      if (!a || !a->is_buffer || a->role == Role::workspace) continue;
      const double n = static_cast<double>(buffer_elements(*a, bind)) * (a->role == Role::inout ? 2 : 1);  // with its lanes
      elements[i] += n;
      bytes[i] += n * dtype_bytes(a->resolve_dtype(t.dtype));
    }
  }
  // The problem's FLOPs, shared by its launches as their elements are (a GEMM's one launch does
  // them all; a reduction's last step over per-block partials almost none).
  const double all = std::max(1.0, std::accumulate(elements.begin(), elements.end(), 0.0));
  for (size_t i = 0; i < bytes.size(); ++i)
    if (t.problem->baseline[i].when.empty() || t.problem->baseline[i].when.eval(bind) != 0)
      b.t_ref_us += baseline_launch_us(bytes[i], elements[i], t.flops() * elements[i] / all,
                                       eval_geometry(t.problem->baseline[i], bind), generic, dev_);
  // However it moves its bytes, the baseline takes at least its FLOPs at the FP32 units' rate.
  b.t_ref_us = std::max(b.t_ref_us, t.flops() / dev_.ceilings().fp32 * 1e6 + kBaselineLaunchUs);
  b.ref_timing.median_us = b.t_ref_us;
  b.note = "predicted by the model backend for " + dev_.name;
  return b;
}

std::vector<EvalResult> ModelEvaluator::evaluate(const Task& t, const std::vector<Config>& configs) {
  auto batch = prepare_candidates(t, dev_, arch_, configs);
  for (auto& r : batch.requests) r.deadline = deadline_;  // stopped where the budget ends
  const auto compiled = compiler_.compile_all(batch.requests);
  std::vector<EvalResult> out;
  for (auto& c : batch.candidates) {
    c.result.kind = TimeKind::predicted;
    if (c.request >= 0 && compiled[c.request].abandoned) break;  // the rest of the batch is not measured
    if (c.request >= 0 && take_compile_result(c, compiled[c.request])) {
      if (auto why = plan_limits(c, dev_); !why.empty()) {
        c.result.status = Status::illegal;
        c.result.log = why;
      } else {
        const auto p = predict_config(t, c.bindings, c.result.res, c.result.geo, dev_);
        c.result.status = Status::ok;
        c.result.occupancy_blocks = p.blocks_per_sm;
        c.result.time.median_us = c.result.time.min_us = c.result.time.max_us = p.t_us;
        c.result.time.q1_us = c.result.time.q3_us = p.t_us;
        c.result.time.reps = 0;
        c.result.log = "predicted (model backend, " + dev_.name + "): bound by " + p.why;
      }
    }
    out.push_back(std::move(c.result));
  }
  return out;
}

std::unique_ptr<Predictor> ModelEvaluator::predictor(const Task& t) {
  return std::make_unique<ModelPredictor>(t, dev_);
}

}  // namespace soltune
