#include "eval/timing_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace soltune {
namespace {
constexpr int kGateReruns = 2;  // dropped repetitions of a batch are run again at most this often
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

TimingOutcome time_launches(TaskState& st, const CudaEvalOptions& opt, const std::function<cudaError_t(int)>& launch,
                            const TimingPlan& plan) {
  TimingOutcome out;
  const auto began = Clock::now();
  int set = 0;
  // The warm-up is not timed, so it needs no gate. At least one launch: it also loads kernels that
  // load lazily, and a first launch that waits for the device to go idle would wait on a held gate.
  if ((out.err = launch(set++ % st.sets())) != cudaSuccess) return out;
  // The second launch between events (the first may have loaded the kernel): a kernel of
  // milliseconds is warm after it, and the rest of the warm-up and the probe would cost several of
  // its runs.
  bool long_run = false;
  double second_us = 0;  // the second launch's time: a long run's probe
  if (opt.warmup > 1) {
    SOLTUNE_CUDA(cudaEventRecord(st.event(0).get(), st.stream()));
    if ((out.err = launch(set++ % st.sets())) != cudaSuccess) return out;
    SOLTUNE_CUDA(cudaEventRecord(st.event(1).get(), st.stream()));
    if ((out.err = cudaStreamSynchronize(st.stream())) != cudaSuccess) return out;
    float ms = 0;
    SOLTUNE_CUDA(cudaEventElapsedTime(&ms, st.event(0).get(), st.event(1).get()));
    long_run = ms >= kLongRunMs;
    second_us = ms * 1000.0;
  }
  for (int i = 2; i < opt.warmup && !long_run; ++i)
    if ((out.err = launch(set++ % st.sets())) != cudaSuccess) return out;
  if ((out.err = cudaStreamSynchronize(st.stream())) != cudaSuccess) return out;

  TimingGate& gate = st.gate();
  const auto timeout_ns = static_cast<uint64_t>(opt.gate_timeout_ms * 1e6);
  // The timed repetitions run on the declared distribution, whatever the correctness rounds left.
  for (int s = 0; s < st.sets(); ++s) st.draw_inputs(s);
  // `reps` repetitions, each queued once the previous one has finished (the flush waits for it), the
  // gate holding its start until the host has queued it whole. Appends the times of those whose gate
  // was opened by the host (all of them without the gate) and counts the others in `late`.
  // Every repetition looks the same to the kernel: its input set partly drawn afresh, its output
  // as the previous repetition left it (wrong for these inputs). Some are checked afterwards, each
  // with probability checks_per_batch / reps drawn from st.unpredictable() (at least one per
  // batch): a kernel can neither predict nor count the checks, so one that skips work or replays a
  // kept result in any repetition risks being caught in each.
  int timed_reps = 0;  // over every batch, for the log
  auto batch = [&](int reps, int checks, std::vector<double>& us, int& late) -> cudaError_t {
    std::vector<bool> checked(static_cast<size_t>(reps));
    if (checks > 0) {
      const double p = std::min(1.0, double(checks) / reps);
      bool any = false;
      for (auto&& c : checked) any |= (c = double(st.unpredictable() >> 11) * 0x1p-53 < p);
      if (!any) checked[static_cast<size_t>(st.unpredictable() % static_cast<uint64_t>(reps))] = true;
    }
    if (opt.timing.gate) gate.reserve(reps);
    const TimingGate::ReleaseOnExit released{gate};  // an error return must not leave a gate held
    for (int r = 0; r < reps; ++r, ++timed_reps) {
      const bool check = checked[static_cast<size_t>(r)];
      const int s = set++ % st.sets();
      if (auto e = st.before_repetition(s, r == 0); e != cudaSuccess) return e;
      if (opt.timing.settle_us > 0) st.settle(opt.timing.settle_us);
      if (opt.timing.gate) gate.hold(st.stream(), r, timeout_ns);
      SOLTUNE_CUDA(cudaEventRecord(st.event(2 * r).get(), st.stream()));
      if (auto e = launch(s); e != cudaSuccess) return e;
      SOLTUNE_CUDA(cudaEventRecord(st.event(2 * r + 1).get(), st.stream()));
      if (r > 0)
        if (auto e = st.before_release(st.event(2 * r - 1)); e != cudaSuccess) return e;
      gate.release();  // the repetition is queued up to its end event: the GPU may start the clock
      if (check) {
        const auto check_began = Clock::now();
        if (auto e = cudaStreamSynchronize(st.stream()); e != cudaSuccess) return e;
        st.check_inputs(out.loop_acc, s);  // restores a written input: the reference reads what was drawn
        st.check_repetition(out.loop_acc, s);
        ++out.checked_reps;
        if (!out.loop_acc.pass && out.failed_rep < 0) out.failed_rep = timed_reps;
        out.verified = out.loop_acc.pass;
        out.checks_ms += ms_since(check_began);
      }
    }
    if (auto e = cudaStreamSynchronize(st.stream()); e != cudaSuccess) return e;
    const auto timed_out = opt.timing.gate ? gate.timed_out(st.stream(), reps) : std::vector<bool>(static_cast<size_t>(reps));
    for (int r = 0; r < reps; ++r) {
      if (timed_out[static_cast<size_t>(r)]) {
        ++late;
        continue;
      }
      float ms = 0;
      SOLTUNE_CUDA(cudaEventElapsedTime(&ms, st.event(2 * r).get(), st.event(2 * r + 1).get()));
      us.push_back(ms * 1000.0);
      out.kernels_ms += ms;
    }
    return cudaSuccess;
  };
  // A batch whose gates timed out runs the dropped repetitions again, a few times at most: a CPU
  // that keeps stalling past the timeout leaves the batch short, and the note says so.
  auto rerun = [&](int reps, int checks, std::vector<double>& us) -> cudaError_t {
    int missing = reps;
    for (int run = 0; missing > 0 && run <= kGateReruns; ++run) {
      int late = 0;
      if (auto e = batch(missing, checks, us, late); e != cudaSuccess) return e;
      out.gate_timeouts += late;
      missing = late;
    }
    out.short_reps += missing;
    if (us.empty()) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "every timed repetition's gate timed out (%d, after %.0f ms each): the CPU never queued one in "
                    "time, or the device does not see the host-mapped gate counter; no GPU-only time to report",
                    out.gate_timeouts, opt.gate_timeout_ms);
      throw Error(buf);
    }
    return cudaSuccess;
  };
  // The checks are a phase of their own: what they cost leaves the batches' share.
  auto timed = [&](int reps, int checks, std::vector<double>& us) {
    const auto began_batch = Clock::now();
    const double checks_before = out.checks_ms;
    const auto e = rerun(reps, checks, us);
    out.batches_ms += ms_since(began_batch) - (out.checks_ms - checks_before);
    return e;
  };
  auto finish = [&](std::vector<double> us) {
    out.time = summarize(std::move(us));
    if (out.gate_timeouts == 0) return;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d timed repetitions dropped: the CPU had not queued them within the gate's %.0f ms",
                  out.gate_timeouts, opt.gate_timeout_ms);
    out.note = buf;
    if (out.short_reps > 0) {
      std::snprintf(buf, sizeof buf, " (%d still missing after %d re-runs: the CPU kept stalling)", out.short_reps,
                    kGateReruns);
      out.note += buf;
    }
  };

  // A short first round sizes the real one so each candidate gets about target_ms of timed work,
  // and stops a candidate that is clearly slower than the task's best (status slow).
  // The probe is not checked: its times size the run and may stop a slow candidate, but never
  // become an admitted candidate's time (a fast probe only earns the checked batches below).
  // A run of milliseconds needs no probe of its own: the second launch, timed above, sizes it (at
  // 6 ms a launch, a probe was a tenth of the 70B MLP's timed work).
  std::vector<double> probe;
  if (long_run)
    probe.push_back(second_us);
  else if ((out.err = timed(kProbeReps, 0, probe)) != cudaSuccess)
    return out;
  out.warmup_ms = ms_since(began);
  out.batches_ms = 0;  // the probe is the warm-up's
  std::sort(probe.begin(), probe.end());
  if (plan.incumbent_us > 0 && probe[0] > opt.slow_factor * plan.incumbent_us) {
    out.slow = true;
    finish(probe);
    return out;
  }
  const double est_ms = std::max(probe[probe.size() / 2] / 1000.0, 1e-3);
  const int reps = static_cast<int>(std::clamp(std::ceil(opt.target_ms / est_ms), double(opt.min_reps), double(opt.max_reps)));
  std::vector<double> us;
  if ((out.err = timed(reps, plan.checks_per_batch, us)) != cudaSuccess) return out;
  finish(us);
  // A wide spread (a noisy machine, clocks settling) earns more repetitions, up to a cap.
  for (int extra = 0; extra < opt.extra_batches && out.time.cv() > opt.target_cv; ++extra) {
    if ((out.err = timed(reps, plan.checks_per_batch, us)) != cudaSuccess) return out;
    finish(us);
  }
  return out;
}

}  // namespace soltune
