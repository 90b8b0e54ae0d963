#include "eval/cuda_runner.hpp"

#include <algorithm>
#include <cstdio>

#include "eval/candidates.hpp"
#include "eval/cuda_devices.hpp"

namespace soltune {
namespace {
constexpr double kBaselineRelL2 = 1e-2;  // a few ulps of bf16 per element, on average

// Above 48 KiB a block needs the opt-in, counting its static shared memory too (a 48 KiB row
// buffer beside a reduction scratch failed to launch without it).
cudaError_t allow_shared_memory(cudaKernel_t k, const EvalResult& r, int device) {
  if (r.geo.smem + r.res.smem_static <= 48 * 1024) return cudaSuccess;
  return cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(r.geo.smem),
                                         device);
}

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
  if (!state_ || state_->task_id() != t.id()) {
    state_.reset();  // free the previous task's buffers before allocating this one's
    state_ = std::make_unique<TaskState>(t, dev_, compiler_, arch_, opt_.seed, opt_.timing);
  }
  return *state_;
}

TaskBaseline CudaRunner::baseline(const Task& t) {
  auto& st = state_for(t);
  TaskBaseline b;
  b.kind = TimeKind::measured;
  b.flops = t.flops();
  b.bytes = t.bytes();
  b.t_sol_us = t_sol_us(b.flops, b.bytes, dev_.ceilings().fp32, dev_.ceilings().sol_bw());
  // The baseline is checked too: a baseline that skips work would flatter every candidate.
  st.draw_inputs(0);
  st.run_reference(0);
  // Candidates are blamed for a dirty workspace, so the reference must be seen to leave it zeroed.
  Accuracy ref_ws;
  st.check_workspaces(ref_ws);
  if (ref_ws.workspace_dirty || ref_ws.out_of_bounds)
    throw Error(t.problem->name + "'s reference does not leave its workspace as it found it for " + t.id() + ": " +
                std::to_string(ref_ws.workspace_dirty) + " bytes left non-zero, " +
                std::to_string(ref_ws.out_of_bounds) + " guard bytes changed");
  st.poison_outputs();
  SOLTUNE_CUDA(st.run_baseline(0));
  Accuracy acc;
  acc.rounds = 1;
  st.compare_outputs(acc);
  // The baseline rounds to the storage type after every operation, so it may miss a candidate's
  // tolerance; it must still compute the same function: every element written, finite, and close,
  // and leave any workspace it uses zeroed.
  if (acc.unwritten || acc.nonfinite || !(acc.rel_l2 <= kBaselineRelL2) || acc.workspace_dirty)
    throw Error(t.problem->name + "'s baseline does not compute the reference's function for " + t.id() + ": " +
                acc.summary());
  char note[160];
  std::snprintf(note, sizeof note, "baseline checked against the reference: rel L2 %.3g, max abs err %.3g", acc.rel_l2,
                acc.max_abs_err);
  b.note = note;
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
  auto& res = c.result;
  if (auto why = launch_limits(res.res, res.geo, dev_); !why.empty()) {
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
  const cudaKernel_t k = mod.at(c.name_expr);
  if (auto e = allow_shared_memory(k, res, index_); e != cudaSuccess) {
    res.status = Status::launch_error;
    res.log = "cannot raise the dynamic shared memory limit: " + cuda_error_text(e);
    return;
  }
  auto launch = [&](int set) {
    auto a = st.args(t.variant->launch, set, false);
    return launch_kernel(k, res.geo, a.ptrs.data(), st.stream());
  };
  // A failed launch is the candidate's: sticky errors (faults) also cost the device state.
  auto failed = [&](cudaError_t e, const char* when) {
    const bool sticky = cuda_error_is_sticky(e);
    res.status = sticky ? Status::fault : Status::launch_error;
    res.log = std::string(when) + ": " + cuda_error_text(e);
    if (sticky) {
      // The context is gone: release nothing (it would fail), and let the worker end.
      mod.lib.abandon();
      if (state_) state_->abandon_all();
      lost_ = true;
    } else {
      (void)cudaGetLastError();
      st.reset_workspaces();  // it may have run part of the way: the next candidate starts clean
    }
  };

  // Correctness first, each round on freshly drawn inputs from another distribution.
  res.acc = Accuracy{};
  const int rounds = std::max(opt_.check_rounds, st.distributions());
  for (int round = 0; round < rounds; ++round) {
    st.draw_inputs(0, round);
    st.run_reference(0);
    st.poison_outputs();
    if (auto e = launch(0); e != cudaSuccess) return failed(e, "launch");
    if (auto e = cudaStreamSynchronize(st.stream()); e != cudaSuccess) return failed(e, "during the run");
    st.compare_outputs(res.acc);
    res.acc.rounds = round + 1;
    if (!res.acc.pass) {
      res.status = Status::wrong_answer;
      res.log = "round " + std::to_string(round + 1) + " (" + TaskState::distribution_name(round) + " inputs): " + res.acc.summary();
      return;
    }
  }
  const auto clock_before = clock_->mhz();
  TimingPlan plan;
  plan.incumbent_us = incumbent_us;
  plan.verify = true;
  plan.pick = st.next_random();
  const auto timed = time_launches(st, opt_, launch, plan);
  if (timed.err != cudaSuccess) return failed(timed.err, "while timing");
  res.time = timed.time;
  const auto clock = with_note(clock_note(clock_before, clock_->mhz()), timed.note);
  // After every repetition (a slow candidate's few included) the workspace must be zero again.
  Accuracy after;
  st.check_workspaces(after);
  if (after.workspace_dirty || after.out_of_bounds) {
    res.status = Status::wrong_answer;
    res.acc.workspace_dirty = after.workspace_dirty;
    res.acc.out_of_bounds += after.out_of_bounds;
    res.acc.pass = false;
    res.log = "correct while checked, but after the timed loop: " + res.acc.summary();
    return;
  }
  if (!timed.verified) {
    res.status = Status::wrong_answer;
    res.log = "correct while checked, wrong inside the timed loop (repetition " + std::to_string(timed.checked_rep + 1) +
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
  res.log = res.acc.summary() + "; timed loop checked at repetition " + std::to_string(timed.checked_rep + 1) + "; " + clock;
}

Retimed CudaRunner::retime(const Task& t, const std::vector<Candidate>& cs, const std::vector<CompileResult>& rs,
                           int rounds) {
  auto& st = state_for(t);
  std::vector<LoadedModule> mods(cs.size());
  std::vector<cudaKernel_t> kernels;
  for (size_t i = 0; i < cs.size(); ++i) {
    std::string log;
    if (LoadedModule::load(rs[i], mods[i], log) != cudaSuccess) throw Error("re-timing " + cs[i].result.key + ": " + log);
    kernels.push_back(mods[i].at(cs[i].name_expr));
    SOLTUNE_CUDA(allow_shared_memory(kernels.back(), cs[i].result, index_));
  }
  auto check = [&](const TimingOutcome& o, const std::string& what) {
    if (o.err == cudaSuccess) return;
    lost_ = cuda_error_is_sticky(o.err);
    throw Error("re-timing " + what + ": " + cuda_error_text(o.err));
  };
  Retimed out;
  out.config_us.resize(cs.size());
  for (int r = 0; r < rounds; ++r) {
    const auto b = time_launches(st, opt_, [&](int set) { return st.run_baseline(set); }, TimingPlan{});
    check(b, "the baseline");
    out.baseline_us.push_back(b.time.median_us);
    for (size_t i = 0; i < cs.size(); ++i) {
      const auto o = time_launches(st, opt_, [&](int set) {
        auto a = st.args(t.variant->launch, set, false);
        return launch_kernel(kernels[i], cs[i].result.geo, a.ptrs.data(), st.stream());
      }, TimingPlan{});
      check(o, cs[i].result.key);
      out.config_us[i].push_back(o.time.median_us);
    }
  }
  return out;
}

namespace {

// Median of `reps` timed runs of `launch` (after two untimed ones), in milliseconds. Ungated (see
// timing_loop.hpp): the probes run for milliseconds, so the few microseconds the CPU takes to
// queue the launch after the start event are noise, and the median drops a repetition that a
// descheduled CPU stretched.
template <typename F>
double median_ms(int reps, F launch) {
  Event e0, e1;
  std::vector<double> ms;
  for (int i = 0; i < reps + 2; ++i) {
    SOLTUNE_CUDA(cudaEventRecord(e0.get()));
    launch();
    SOLTUNE_CUDA(cudaEventRecord(e1.get()));
    SOLTUNE_CUDA(cudaEventSynchronize(e1.get()));
    float t = 0;
    SOLTUNE_CUDA(cudaEventElapsedTime(&t, e0.get(), e1.get()));
    if (i >= 2) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

void CudaRunner::measure_ceilings() {
  // Bandwidth: the better of a 16-byte copy kernel and cudaMemcpy over 2 GiB (bytes read + written,
  // far beyond L2); FP32: an FMA probe. The ceilings T_SOL is computed from; the datasheet stays beside.
  const auto r = compiler_.compile(CompileRequest{builtin_kernels_source(), "soltune_builtins.cu", builtin_name_expressions(), arch_, {}});
  if (!r.ok) throw Error("soltune's builtin kernels do not compile:\n" + r.log);
  LoadedModule m;
  std::string log;
  if (LoadedModule::load(r, m, log) != cudaSuccess) throw Error(log);

  // 2 GiB each way where memory allows: large enough that launch and tail costs vanish.
  const size_t bytes = std::min(size_t(2) << 30, static_cast<size_t>(dev_.mem_bytes / 8)) / 256 * 256;
  DeviceBuffer a(bytes), b(bytes);
  SOLTUNE_CUDA(cudaMemset(a.get(), 1, bytes));
  const double memcpy_ms = median_ms(20, [&] { SOLTUNE_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice)); });
  void* src = a.get();
  void* dst = b.get();
  long long words = static_cast<long long>(bytes / 16);
  void* copy_args[] = {&src, &dst, &words};
  Geometry cg;
  cg.grid = {static_cast<int64_t>(dev_.sms) * 8, 1, 1};
  cg.block = {256, 1, 1};
  Geometry flat;
  flat.grid = {(words + 127) / 128, 1, 1};
  flat.block = {128, 1, 1};
  const double copy_ms =
      std::min(median_ms(20, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_copy_probe"), cg, copy_args, nullptr)); }),
               median_ms(20, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_copy_probe_flat"), flat, copy_args, nullptr)); }));
  // Reading only: the same 2 GiB, the better of the read probe and the L2 flush's kernel.
  void* sink = b.get();  // written only if the buffer's xor hits a magic value: never with memset 1
  void* read_args[] = {&src, &words, &sink};
  const double read_ms =
      std::min(median_ms(20, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_read_probe"), cg, read_args, nullptr)); }),
               median_ms(20, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_flush_read"), cg, read_args, nullptr)); }));

  const unsigned blocks = static_cast<unsigned>(dev_.sms) * 8, threads = 256;
  DeviceBuffer out(size_t(blocks) * threads * sizeof(float));
  void* p = out.get();
  int iters = 8192;
  float fa = 0.999f, fb = 1e-3f;
  void* fma_args[] = {&p, &iters, &fa, &fb};
  Geometry g;
  g.grid = {blocks, 1, 1};
  g.block = {threads, 1, 1};
  const double fma_ms = median_ms(6, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_fma_probe"), g, fma_args, nullptr)); });

  int mma_iters = 256;
  void* mma_args[] = {&p, &mma_iters};
  auto mma_rate_of = [&](const char* probe, double flops_per_mma) {
    const double ms = median_ms(6, [&] { SOLTUNE_CUDA(launch_kernel(m.at(probe), g, mma_args, nullptr)); });
    return flops_per_mma * 4 * mma_iters * (double(blocks) * threads / 32) / (ms * 1e-3);
  };
  const double mma_rate = mma_rate_of("soltune_mma_probe<1>", 4096);
  const double f16_rate = mma_rate_of("soltune_mma_probe<0>", 4096);
  const double fp8_rate = dev_.cc() >= 89 ? mma_rate_of("soltune_mma_probe<2>", 8192) : 0;

  Ceilings c;
  c.mem_bw = 2.0 * static_cast<double>(bytes) / (std::min(memcpy_ms, copy_ms) * 1e-3);
  c.read_bw = static_cast<double>(bytes) / (read_ms * 1e-3);
  c.fp32 = 2.0 * 8 * iters * double(blocks) * threads / (fma_ms * 1e-3);
  // T_SOL must never be too fast to reach: the mma.sync probe is a floor (wgmma goes higher), so
  // the tensor ceiling stays the datasheet's unless the probe beats it.
  c.tensor_16 = std::max(mma_rate, dev_.datasheet.tensor_16);
  char src_text[440];
  std::snprintf(src_text, sizeof src_text,
                "measured: copy kernel %.0f GB/s, cudaMemcpy %.0f GB/s (best kept), read %.0f GB/s, FP32 FMA; mma.sync "
                "probes bf16 %.0f, f16 %.0f, fp8 %.0f TFLOP/s (the tensor ceiling stays the datasheet's)",
                2.0 * static_cast<double>(bytes) / (copy_ms * 1e6), 2.0 * static_cast<double>(bytes) / (memcpy_ms * 1e6),
                c.read_bw / 1e9, mma_rate / 1e12, f16_rate / 1e12, fp8_rate / 1e12);
  c.source = src_text;
  dev_.measured = c;
}

}  // namespace soltune
