#include "eval/cuda_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/rounds.hpp"
#include "eval/candidates.hpp"
#include "eval/ceiling_probes.hpp"
#include "eval/cuda_devices.hpp"

namespace soltune {
namespace {
constexpr size_t kStatesKept = 64;  // task states kept at most, memory permitting
constexpr double kBaselineRelL2 = 1e-2;  // a few ulps of bf16 per element, on average
// Above 48 KiB a block needs the opt-in, counting its static shared memory too (a 48 KiB row
// buffer beside a reduction scratch failed to launch without it); a cluster of more than 8 blocks
// needs the non-portable one.
cudaError_t set_launch_attributes(cudaKernel_t k, const PlannedLaunch& l, int device) {
  if (l.geo.smem + l.res.smem_static > 48 * 1024)
    if (auto e = cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(l.geo.smem), device);
        e != cudaSuccess)
      return e;
  if (l.geo.cluster_blocks() > 8)
    return cudaKernelSetAttributeForDevice(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1, device);
  return cudaSuccess;
}

// A candidate's plan, loaded: one kernel per launch, attributes raised. "" or why not (with the
// CUDA error's text).
std::string load_plan(const Candidate& c, const LoadedModule& mod, int device, std::vector<cudaKernel_t>& out) {
  out.clear();
  for (const auto& l : c.plan) {
    out.push_back(mod.at(l.name_expr));
    if (const auto err = set_launch_attributes(out.back(), l, device); err != cudaSuccess)
      return "cannot raise the dynamic shared memory or cluster size limit of " + l.spec->kernel + ": " +
             cuda_error_text(err);
  }
  return "";
}

// Every launch of the plan, in order, on the state's stream; the first error stops it.
cudaError_t run_plan(TaskState& st, const Candidate& c, const std::vector<cudaKernel_t>& ks, int set,
                     const TensorMapArgs* maps) {
  for (size_t i = 0; i < c.plan.size(); ++i) {
    auto a = st.args(*c.plan[i].spec, set, false, maps);
    if (auto e = launch_kernel(ks[i], c.plan[i].geo, a.ptrs.data(), st.stream(), c.plan[i].programmatic); e != cudaSuccess)
      return e;
  }
  return cudaSuccess;
}

// A cluster must fit on the device whole: its blocks are co-scheduled on one GPC, so shared memory
// and registers that leave room for one block per SM may still leave none for the cluster.
std::string cluster_occupancy(cudaKernel_t k, const Geometry& g, cudaStream_t s) {
  if (g.cluster_blocks() == 1) return "";
  const LaunchConfig c(g, s);
  int n = 0;
  if (auto e = cudaOccupancyMaxActiveClusters(&n, reinterpret_cast<const void*>(k), &c.config); e != cudaSuccess)
    return "cudaOccupancyMaxActiveClusters refused the cluster: " + cuda_error_text(e);
  if (n < 1)
    return "no cluster of " + std::to_string(g.cluster_blocks()) + " blocks fits on the device at once "
           "(cudaOccupancyMaxActiveClusters: 0): " + g.str();
  return "";
}

// Forgets the constants' variables of the modules bound while it lived, before those modules go.
struct ConstantsBound {
  TaskState& st;
  ~ConstantsBound() { st.unbind_constants(); }
};

// "a; b", or "a" when there is no b (the timing loop's note on dropped repetitions).
std::string with_note(std::string text, const std::string& note) {
  return note.empty() ? text : text + "; " + note;
}
}  // namespace

CudaRunner::CudaRunner(int device, const Compiler& c, std::string arch, CudaEvalOptions o)
    : index_(device), dev_(cuda_device(device)), compiler_(c), arch_(std::move(arch)), opt_(o) {
  SOLTUNE_CUDA(cudaSetDevice(index_));
  clock_ = std::make_unique<SmClock>(dev_.uuid);
  if (opt_.measure_ceilings) measure_ceilings();
}

CudaRunner::~CudaRunner() = default;

TaskState& CudaRunner::state_for(const Task& t) {
  if (lost_) throw Error("the CUDA context was lost to an earlier fault; this worker must restart");
  if (const auto it = find_state(t); it != states_.end()) {
    std::rotate(it, it + 1, states_.end());  // now the most recently used
    return *states_.back();
  }
  // Room for the new state's buffers and its flush, and for its shape's kept rounds where none are
  // kept yet.
  const bool kept = kept_.count(t.dtype_shape()) > 0;
  make_room(task_device_bytes(t, timed_input_sets(t, dev_, opt_.timing)) + (kept ? 0.0 : kept_rounds_bytes(t, dev_)) +
                static_cast<double>(l2_flush_bytes(t, dev_, opt_.timing)),
            nullptr, t.dtype_shape(), false);
  if (states_.size() >= kStatesKept) states_.erase(states_.begin());
  states_.push_back(std::make_unique<TaskState>(t, dev_, compiler_, arch_, opt_.seed, opt_.timing));
  return *states_.back();
}

void CudaRunner::abandon_device_state() {
  for (auto& s : states_) s->abandon_all();
  for (auto& [shape, kept] : kept_)
    for (auto& [round, r] : kept.rounds)
      for (auto& b : r.results) b.abandon();
}

std::vector<std::unique_ptr<TaskState>>::iterator CudaRunner::find_state(const Task& t) {
  return std::find_if(states_.begin(), states_.end(), [&](const auto& s) { return s->task_id() == t.id(); });
}

void CudaRunner::make_room(double bytes, const TaskState* keep, const std::string& shape, bool kept_too) {
  auto roomy = [&] {
    size_t free = 0, total = 0;
    SOLTUNE_CUDA(cudaMemGetInfo(&free, &total));
    return static_cast<double>(free) >= bytes + static_cast<double>(device_reserve(total));
  };
  for (auto it = states_.begin(); it != states_.end() && !roomy();)
    it = it->get() == keep ? it + 1 : states_.erase(it);
  while (kept_too && !roomy()) {
    auto lru = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->first != shape && (lru == kept_.end() || it->second.last_used < lru->second.last_used)) lru = it;
    if (lru == kept_.end()) return;
    kept_.erase(lru);
  }
}

KeptRounds* CudaRunner::kept_for(const Task& t, uint64_t group) {
  if (group == 0) return nullptr;
  auto& k = kept_[t.dtype_shape()];
  k.last_used = ++uses_;
  if (k.group != group) {
    k.rounds.clear();  // the group before's: freed before room is made for this one's
    k.group = group;
    const auto it = find_state(t);
    make_room(kept_rounds_bytes(t, dev_), it == states_.end() ? nullptr : it->get(), t.dtype_shape(), true);
  }
  return &k;
}

TaskBaseline CudaRunner::baseline(const Task& t, double limit_s) {
  auto& st = state_for(t);
  TaskBaseline b;
  b.kind = TimeKind::measured;
  b.flops = t.flops();
  b.bytes = t.bytes();
  b.t_sol_us = t.t_sol_us(dev_.ceilings());
  // The baseline is checked too: a baseline that skips work would flatter every candidate.
  st.draw_inputs(0);
  SOLTUNE_CUDA(cudaStreamSynchronize(st.stream()));
  // The reference's own time, for the note: every check of a candidate pays it.
  const auto ref_began = std::chrono::steady_clock::now();
  st.run_reference(0);
  SOLTUNE_CUDA(cudaStreamSynchronize(st.stream()));
  const double ref_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - ref_began).count();
  // Candidates are blamed for a dirty workspace, so the reference must be seen to leave it zeroed.
  Accuracy ref_ws;
  st.check_workspaces(ref_ws);
  if (ref_ws.workspace_dirty || ref_ws.out_of_bounds)
    throw Error(t.problem->name + "'s reference does not leave its workspace as it found it for " + t.id() + ": " +
                std::to_string(ref_ws.workspace_dirty) + " bytes left non-zero, " +
                std::to_string(ref_ws.out_of_bounds) + " guard bytes changed");
  st.check_inputs(ref_ws, 0);
  if (ref_ws.inputs_written)
    throw Error(t.problem->name + "'s reference writes its input " + ref_ws.written_input + " for " + t.id() + " (" +
                std::to_string(ref_ws.inputs_written) + " bytes changed): inputs are read-only");
  st.poison_outputs();
  const auto run_began = std::chrono::steady_clock::now();
  SOLTUNE_CUDA(st.run_baseline(0));
  SOLTUNE_CUDA(cudaStreamSynchronize(st.stream()));
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_began).count();
  Accuracy acc;
  acc.rounds = 1;
  st.check_inputs(acc, 0);
  // The baseline rounds to the storage type after every operation, so it may miss a candidate's
  // tolerance; it must still compute the same function: every element written, finite, and close
  // (each output within kBaselineRelL2, or its dtype's rel_l2 where that is wider: e4m3 quantized
  // from rounded intermediates moves by a whole step here and there), nothing written outside its
  // outputs, any workspace it uses left zeroed, its inputs as they were.
  st.compare_outputs(acc, kBaselineRelL2);
  if (acc.unwritten || acc.nonfinite || !acc.precision_ok || acc.workspace_dirty || acc.inputs_written || acc.out_of_bounds)
    throw Error(t.problem->name + "'s baseline does not compute the reference's function for " + t.id() + ": " +
                acc.summary());
  char note[160];
  std::snprintf(note, sizeof note, "baseline checked against the reference (%.1f ms a run): rel L2 %.3g, max abs err %.3g",
                ref_ms, acc.rel_l2, acc.max_abs_err);
  b.note = note;
  b.source = st.baseline_source();
  if (!st.baseline_library_note().empty()) b.note = st.baseline_library_note() + "; " + b.note;
  // Its timing runs it at least this often (warm-up, probe, the fewest repetitions): a run that makes
  // that outlast the limit is said and skipped, not timed for minutes of a budget.
  const double timing_s = run_s * (launches_before_timing(run_s * 1e3, opt_.warmup) + opt_.min_reps);
  if (limit_s > 0 && timing_s > limit_s) {
    char why[320];
    std::snprintf(why, sizeof why, "its baseline (%s) took %.2f s a run: timing it would take about %.0f s, over the %.0f s "
                  "it may use", b.source.c_str(), run_s, timing_s, limit_s);
    b.skipped = why;
    if (!st.baseline_library_note().empty()) b.skipped += " (" + st.baseline_library_note() + ")";
    return b;
  }
  const auto clock_before = clock_->mhz();
  const auto timed = time_launches(st, opt_, [&](int set) { return st.run_baseline(set); }, TimingPlan{});
  SOLTUNE_CUDA(timed.err);
  b.ref_timing = timed.time;
  b.note += "; " + clock_note(clock_before, clock_->mhz());
  b.note = with_note(b.note, timed.note);
  b.t_ref_us = b.ref_timing.median_us;
  return b;
}

void CudaRunner::run(const Task& t, Candidate& c, const CompileResult& r, double incumbent_us) {
  run_checked(t, c, r, incumbent_us, true);
}

void CudaRunner::check(const Task& t, Candidate& c, const CompileResult& r) { run_checked(t, c, r, 0, false); }

void CudaRunner::run_checked(const Task& t, Candidate& c, const CompileResult& r, double incumbent_us, bool time_it) {
  auto& res = c.result;
  res.phases = GpuPhases{};
  auto lap = std::chrono::steady_clock::now();
  auto phase = [&lap](double& into) {  // adds the time since the last lap, and starts the next
    const auto now = std::chrono::steady_clock::now();
    into += std::chrono::duration<double, std::milli>(now - lap).count();
    lap = now;
  };
  if (auto why = plan_limits(c, dev_); !why.empty()) {
    res.status = Status::illegal;
    res.log = why;
    return;
  }
  res.occupancy_blocks = occupancy_blocks_per_sm(res.res, res.geo, dev_);
  auto& st = state_for(t);
  LoadedModule mod;
  if (LoadedModule::load(r, mod, res.log) != cudaSuccess) {
    res.status = Status::launch_error;
    return;
  }
  std::vector<cudaKernel_t> ks;
  if (auto why = load_plan(c, mod, index_, ks); !why.empty()) {
    res.status = Status::launch_error;
    res.log = why;
    return;
  }
  const cudaKernel_t k = mod.at(c.name_expr);
  const ConstantsBound bound{st};
  if (auto why = st.bind_constants(mod.lib); !why.empty()) {
    res.status = Status::launch_error;
    res.log = why;
    return;
  }
  if (auto why = st.use_scratch(*t.variant, c.bindings); !why.empty()) {
    res.status = Status::illegal;
    res.log = why;
    return;
  }
  if (auto why = cluster_occupancy(k, res.geo, st.stream()); !why.empty()) {
    (void)cudaGetLastError();
    res.status = Status::illegal;
    res.log = why;
    return;
  }
  // Tensor maps, encoded once per input set (each set's inputs lie elsewhere): a map the driver
  // refuses makes the candidate illegal before it runs.
  std::vector<TensorMapArgs> maps(t.variant->tensor_maps.empty() ? 0 : static_cast<size_t>(st.sets()));
  for (size_t s = 0; s < maps.size(); ++s)
    if (auto why = st.encode_tensor_maps(*t.variant, c.bindings, static_cast<int>(s), maps[s]); !why.empty()) {
      res.status = Status::illegal;
      res.log = why;
      return;
    }
  auto launch = [&](int set) {
    return run_plan(st, c, ks, set, maps.empty() ? nullptr : &maps[static_cast<size_t>(set) % maps.size()]);
  };
  // A failed launch is the candidate's: sticky errors (faults) also cost the device state.
  auto failed = [&](cudaError_t e, const char* when) {
    const bool sticky = cuda_error_is_sticky(e);
    res.status = sticky ? Status::fault : Status::launch_error;
    res.log = std::string(when) + ": " + cuda_error_text(e);
    if (sticky) {
      // The context is gone: release nothing (it would fail), and let the worker end.
      mod.lib.abandon();
      abandon_device_state();
      lost_ = true;
    } else {
      (void)cudaGetLastError();
      st.reset_workspaces();  // it may have run part of the way: the next candidate starts clean
    }
  };

  // Correctness first, each round on freshly drawn inputs from another distribution.
  phase(res.phases.load);
  res.acc = Accuracy{};
  // Checked only (an audit under a sanitizer, which slows the kernel 10-1000x): the first round.
  const int rounds = time_it ? std::max(opt_.check_rounds, st.distributions()) : 1;
  KeptRounds* kept = time_it ? kept_for(t, batch_) : nullptr;
  const double reference_before = st.reference_ms();
  for (int round = 0; round < rounds; ++round) {
    st.round_inputs(round, kept);
    st.poison_outputs();
    st.poison_scratch();
    if (auto e = launch(0); e != cudaSuccess) return failed(e, "launch");
    if (auto e = cudaStreamSynchronize(st.stream()); e != cudaSuccess) return failed(e, "during the run");
    // The reference ran before the candidate, on what was drawn; a write to an input matters only
    // where a reference runs after it (the timed loop), and a kernel cannot tell the last round
    // from the others: the inputs are checked there.
    if (round == rounds - 1) st.check_inputs(res.acc, 0);
    st.compare_outputs(res.acc);
    res.acc.rounds = round + 1;
    if (!res.acc.pass) {
      res.status = Status::wrong_answer;
      res.log = "round " + std::to_string(round + 1) + " (" + round_name(round) + " inputs): " + res.acc.summary();
      return;
    }
  }
  if (!time_it) {
    res.status = Status::ok;
    res.log = res.acc.summary() + "; not timed (checked only)";
    return;
  }
  phase(res.phases.rounds);
  res.phases.reference = st.reference_ms() - reference_before;
  const auto clock_before = clock_->mhz();
  TimingPlan plan;
  plan.incumbent_us = incumbent_us;
  plan.checks_per_batch = kChecksPerBatch;
  const auto timed = time_launches(st, opt_, launch, plan);
  if (timed.err != cudaSuccess) return failed(timed.err, "while timing");
  res.phases.warmup = timed.warmup_ms;
  res.phases.batches = timed.batches_ms;
  res.phases.checks = timed.checks_ms;
  res.phases.kernels = timed.kernels_ms;
  double timing_ms = 0;
  phase(timing_ms);
  res.time = timed.time;
  const auto clock = with_note(clock_note(clock_before, clock_->mhz()), timed.note);
  // After every repetition (a slow candidate's few included) the workspace must be zero again, and
  // every input set as drawn: a kernel that writes its inputs only while unchecked is seen here.
  Accuracy after;
  st.check_workspaces(after);
  st.check_inputs(after, -1);
  phase(res.phases.after);
  if (after.workspace_dirty || after.out_of_bounds || after.inputs_written) {
    res.status = Status::wrong_answer;
    res.acc.workspace_dirty = after.workspace_dirty;
    res.acc.out_of_bounds += after.out_of_bounds;
    res.acc.inputs_written += after.inputs_written;
    if (res.acc.written_input.empty()) res.acc.written_input = after.written_input;
    res.acc.pass = false;
    res.log = "correct while checked, but after the timed loop: " + res.acc.summary();
    return;
  }
  if (!timed.verified) {
    res.status = Status::wrong_answer;
    res.log = "correct while checked, wrong inside the timed loop (timed repetition " + std::to_string(timed.failed_rep + 1) +
              "): " + timed.loop_acc.summary();
    return;
  }
  if (timed.slow) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "stopped after %d repetitions: %.1f us or more against the best %.1f us; ",
                  timed.time.reps, timed.time.min_us, incumbent_us);
    res.status = Status::slow;
    res.log = with_note(buf + res.acc.summary(), timed.note);
    return;
  }
  res.status = Status::ok;
  res.log = res.acc.summary() + "; " + std::to_string(timed.checked_reps) + " timed repetitions checked" +
            (st.rotates() ? " (" + std::to_string(st.sets()) + " input sets rotated, no flush between them)" : "") +
            (timed.loop_acc.detail.empty() ? "" : ", the last " + timed.loop_acc.detail) + "; " + clock;
}

Retimed CudaRunner::retime(const Task& t, const std::vector<Candidate>& cs, const std::vector<CompileResult>& rs,
                           int rounds) {
  auto& st = state_for(t);
  std::vector<LoadedModule> mods(cs.size());
  std::vector<std::vector<cudaKernel_t>> kernels(cs.size());
  std::vector<std::vector<TensorMapArgs>> maps(cs.size());  // per candidate, per input set
  const ConstantsBound bound{st};
  for (size_t i = 0; i < cs.size(); ++i) {
    std::string log;
    if (LoadedModule::load(rs[i], mods[i], log) != cudaSuccess) throw Error("re-timing " + cs[i].result.key + ": " + log);
    if (auto why = st.bind_constants(mods[i].lib); !why.empty()) throw Error("re-timing " + cs[i].result.key + ": " + why);
    if (auto why = load_plan(cs[i], mods[i], index_, kernels[i]); !why.empty())
      throw Error("re-timing " + cs[i].result.key + ": " + why);
    maps[i].resize(t.variant->tensor_maps.empty() ? 0 : static_cast<size_t>(st.sets()));
  }
  // Encoded once the candidate's scratch is in place: a map may lie over a scratch buffer, which
  // moves when the next candidate's sizes differ.
  auto encode = [&](size_t i) {
    for (size_t s = 0; s < maps[i].size(); ++s)
      if (auto why = st.encode_tensor_maps(*t.variant, cs[i].bindings, static_cast<int>(s), maps[i][s]); !why.empty())
        throw Error("re-timing " + cs[i].result.key + ": " + why);
  };
  auto check = [&](const TimingOutcome& o, const std::string& what) {
    if (o.err == cudaSuccess) return;
    lost_ = cuda_error_is_sticky(o.err);
    throw Error("re-timing " + what + ": " + cuda_error_text(o.err));
  };
  Retimed out;
  out.config_us.resize(cs.size());
  out.failed.resize(cs.size());
  TimingPlan plan;
  plan.checks_per_batch = kChecksPerBatch;  // re-timings feed the reported figures: checked like the search's
  for (int r = 0; r < rounds; ++r) {
    const auto b = time_launches(st, opt_, [&](int set) { return st.run_baseline(set); }, TimingPlan{});
    check(b, "the baseline");
    out.baseline_us.push_back(b.time.median_us);
    for (size_t i = 0; i < cs.size(); ++i) {
      if (!out.failed[i].empty()) continue;
      if (auto why = st.use_scratch(*t.variant, cs[i].bindings); !why.empty())
        throw Error("re-timing " + cs[i].result.key + ": " + why);
      encode(i);
      const auto o = time_launches(st, opt_, [&](int set) {
        const auto* m = maps[i].empty() ? nullptr : &maps[i][static_cast<size_t>(set) % maps[i].size()];
        return run_plan(st, cs[i], kernels[i], set, m);
      }, plan);
      check(o, cs[i].result.key);
      Accuracy after;
      st.check_workspaces(after);
      if (!o.verified || after.workspace_dirty || after.out_of_bounds) {
        out.failed[i] = "correct while checked, wrong when re-timed (round " + std::to_string(r + 1) + "): " +
                        (o.verified ? after.summary() : o.loop_acc.summary());
        continue;
      }
      out.config_us[i].push_back(o.time.median_us);
    }
  }
  return out;
}

void CudaRunner::measure_ceilings() { dev_.measured = measure_device_ceilings(dev_, compiler_, arch_); }

}  // namespace soltune
