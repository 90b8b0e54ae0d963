#include "eval/cuda_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eval/candidates.hpp"
#include "eval/cuda_devices.hpp"

namespace soltune {
namespace {
constexpr double kBaselineRelL2 = 1e-2;  // a few ulps of bf16 per element, on average
}  // namespace

CudaEvaluator::CudaEvaluator(int device, const Compiler& c, std::string arch, CudaEvalOptions o)
    : index_(device), dev_(cuda_device(device)), compiler_(c), arch_(std::move(arch)), opt_(o) {
  SOLTUNE_CUDA(cudaSetDevice(index_));
  if (opt_.measure_ceilings) measure_ceilings();
}

CudaEvaluator::~CudaEvaluator() = default;

TaskState& CudaEvaluator::state_for(const Task& t) {
  if (!state_ || state_->task_id() != t.id()) {
    state_.reset();  // free the previous task's buffers before allocating this one's
    state_ = std::make_unique<TaskState>(t, dev_, compiler_, arch_, opt_.seed);
  }
  return *state_;
}

void CudaEvaluator::recover(const std::string& why) {
  std::fprintf(stderr, "soltune: resetting the device after %s\n", why.c_str());
  if (state_) state_->abandon_all();
  state_.reset();
  SOLTUNE_CUDA(cudaDeviceReset());
  (void)cudaGetLastError();
  SOLTUNE_CUDA(cudaSetDevice(index_));
}

cudaError_t CudaEvaluator::time_it(TaskState& st, const std::function<cudaError_t(int)>& launch, Timing& out) {
  int set = 0;
  for (int i = 0; i < opt_.warmup; ++i)
    if (auto e = launch(set++ % st.sets()); e != cudaSuccess) return e;
  if (auto e = cudaStreamSynchronize(st.stream()); e != cudaSuccess) return e;

  auto timed = [&](int reps, std::vector<double>& us) -> cudaError_t {
    for (int r = 0; r < reps; ++r) {
      st.flush_l2(r);
      SOLTUNE_CUDA(cudaEventRecord(st.event(2 * r).get(), st.stream()));
      if (auto e = launch(set++ % st.sets()); e != cudaSuccess) return e;
      SOLTUNE_CUDA(cudaEventRecord(st.event(2 * r + 1).get(), st.stream()));
    }
    if (auto e = cudaStreamSynchronize(st.stream()); e != cudaSuccess) return e;
    for (int r = 0; r < reps; ++r) {
      float ms = 0;
      SOLTUNE_CUDA(cudaEventElapsedTime(&ms, st.event(2 * r).get(), st.event(2 * r + 1).get()));
      us.push_back(ms * 1000.0);
    }
    return cudaSuccess;
  };
  // A short first round sizes the real one so each candidate gets about target_ms of timed work.
  std::vector<double> probe;
  if (auto e = timed(3, probe); e != cudaSuccess) return e;
  std::sort(probe.begin(), probe.end());
  const double est_ms = std::max(probe[1] / 1000.0, 1e-3);
  const int reps = static_cast<int>(std::clamp(std::ceil(opt_.target_ms / est_ms), double(opt_.min_reps), double(opt_.max_reps)));
  std::vector<double> us;
  if (auto e = timed(reps, us); e != cudaSuccess) return e;
  out = summarize(us);
  return cudaSuccess;
}

TaskBaseline CudaEvaluator::baseline(const Task& t) {
  auto& st = state_for(t);
  TaskBaseline b;
  b.kind = TimeKind::measured;
  b.flops = t.flops();
  b.bytes = t.bytes();
  b.t_sol_us = t_sol_us(b.flops, b.bytes, dev_.ceilings().fp32, dev_.ceilings().mem_bw);
  // The baseline is checked too: a baseline that skips work would flatter every candidate.
  st.draw_inputs(0);
  st.run_reference(0);
  st.poison_outputs();
  SOLTUNE_CUDA(st.run_baseline(0));
  Accuracy acc;
  acc.rounds = 1;
  st.compare_outputs(acc);
  // The baseline rounds to the storage type after every operation, so it may miss a candidate's
  // tolerance; it must still compute the same function: every element written, finite, and close.
  if (acc.unwritten || acc.nonfinite || !(acc.rel_l2 <= kBaselineRelL2))
    throw Error(t.problem->name + "'s baseline does not compute the reference's function for " + t.id() + ": " +
                acc.summary());
  b.note = "baseline checked against the reference: rel L2 " + std::to_string(acc.rel_l2) + ", max abs err " +
           std::to_string(acc.max_abs_err);
  SOLTUNE_CUDA(time_it(st, [&](int set) { return st.run_baseline(set); }, b.ref_timing));
  b.t_ref_us = b.ref_timing.median_us;
  return b;
}

void CudaEvaluator::run_candidate(const Task& t, Candidate& c, const CompileResult& r) {
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
  if (res.geo.smem > 48 * 1024) {
    if (auto e = cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(res.geo.smem), index_);
        e != cudaSuccess) {
      res.status = Status::launch_error;
      res.log = "cannot raise the dynamic shared memory limit: " + cuda_error_text(e);
      return;
    }
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
      mod.lib.abandon();
      recover(c.result.key + " " + res.log);
    } else {
      (void)cudaGetLastError();
    }
  };

  res.acc = Accuracy{};
  for (int round = 0; round < opt_.check_rounds; ++round) {
    st.draw_inputs(0);
    st.run_reference(0);
    st.poison_outputs();
    if (auto e = launch(0); e != cudaSuccess) return failed(e, "launch");
    if (auto e = cudaStreamSynchronize(st.stream()); e != cudaSuccess) return failed(e, "during the run");
    st.compare_outputs(res.acc);
    res.acc.rounds = round + 1;
    if (!res.acc.pass) {
      res.status = Status::wrong_answer;
      res.log = res.acc.summary();
      return;
    }
  }
  if (auto e = time_it(st, launch, res.time); e != cudaSuccess) return failed(e, "while timing");
  res.status = Status::ok;
  res.log = res.acc.summary();
}

std::vector<EvalResult> CudaEvaluator::evaluate(const Task& t, const std::vector<Config>& configs) {
  auto batch = prepare_candidates(t, dev_, arch_, configs);
  const auto compiled = compiler_.compile_all(batch.requests);
  std::vector<EvalResult> out;
  for (auto& c : batch.candidates) {
    c.result.kind = TimeKind::measured;
    if (c.request >= 0 && take_compile_result(c, compiled[c.request])) run_candidate(t, c, compiled[c.request]);
    out.push_back(std::move(c.result));
  }
  return out;
}

void CudaEvaluator::measure_ceilings() {
  // Copy bandwidth (bytes read + written) with a device-to-device copy of 1 GiB, and the FP32 FMA
  // rate with a probe kernel: the ceilings T_SOL is computed from (the datasheet stays beside them).
  const size_t bytes = size_t(1) << 30;
  DeviceBuffer a(bytes), b(bytes);
  SOLTUNE_CUDA(cudaMemset(a.get(), 1, bytes));
  Event e0, e1;
  std::vector<double> bw;
  for (int i = 0; i < 23; ++i) {
    SOLTUNE_CUDA(cudaEventRecord(e0.get()));
    SOLTUNE_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice));
    SOLTUNE_CUDA(cudaEventRecord(e1.get()));
    SOLTUNE_CUDA(cudaEventSynchronize(e1.get()));
    float ms = 0;
    SOLTUNE_CUDA(cudaEventElapsedTime(&ms, e0.get(), e1.get()));
    if (i >= 3) bw.push_back(2.0 * static_cast<double>(bytes) / (ms * 1e-3));
  }
  std::sort(bw.begin(), bw.end());

  const auto r = compiler_.compile(CompileRequest{builtin_kernels_source(), "soltune_builtins.cu", builtin_name_expressions(), arch_, {}});
  if (!r.ok) throw Error("soltune's builtin kernels do not compile:\n" + r.log);
  LoadedModule m;
  std::string log;
  if (LoadedModule::load(r, m, log) != cudaSuccess) throw Error(log);
  const unsigned blocks = static_cast<unsigned>(dev_.sms) * 8, threads = 256;
  DeviceBuffer out(size_t(blocks) * threads * sizeof(float));
  void* p = out.get();
  int iters = 8192;
  float fa = 0.999f, fb = 1e-3f;
  void* args[] = {&p, &iters, &fa, &fb};
  Geometry g;
  g.grid = {blocks, 1, 1};
  g.block = {threads, 1, 1};
  std::vector<double> fl;
  for (int i = 0; i < 8; ++i) {
    SOLTUNE_CUDA(cudaEventRecord(e0.get()));
    SOLTUNE_CUDA(launch_kernel(m.at("soltune_fma_probe"), g, args, nullptr));
    SOLTUNE_CUDA(cudaEventRecord(e1.get()));
    SOLTUNE_CUDA(cudaEventSynchronize(e1.get()));
    float ms = 0;
    SOLTUNE_CUDA(cudaEventElapsedTime(&ms, e0.get(), e1.get()));
    if (i >= 2) fl.push_back(2.0 * 8 * iters * double(blocks) * threads / (ms * 1e-3));
  }
  std::sort(fl.begin(), fl.end());
  Ceilings c;
  c.mem_bw = bw[bw.size() / 2];
  c.fp32 = fl[fl.size() / 2];
  c.tensor_16 = dev_.datasheet.tensor_16;  // not probed yet: the datasheet figure
  c.source = "measured (copy bandwidth, FP32 FMA); tensor rate from the datasheet";
  dev_.measured = c;
}

}  // namespace soltune
