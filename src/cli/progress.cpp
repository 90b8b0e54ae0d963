#include "cli/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace soltune::cli {
namespace {
const char* label(const Evaluator& ev) { return ev.kind() == TimeKind::predicted ? " (predicted)" : ""; }
}  // namespace

void Progress::header(const RunConfig& cfg, const std::filesystem::path& kb) {
  const auto& d = ev_.device();
  const auto& c = d.ceilings();
  total_ = cfg.budget.evals;
  std::printf("soltune: %s on %s (%s), backend %s%s\n", cfg.problem.c_str(), d.name.c_str(), d.arch().c_str(),
              ev_.backend_name().c_str(),
              ev_.kind() == TimeKind::predicted ? ": every time below is a model prediction, not a measurement" : "");
  std::printf("ceilings (%s): %.0f GB/s", c.source.c_str(), c.mem_bw / 1e9);
  if (c.read_bw > 0) std::printf(" (read %.0f, T_SOL's bandwidth %.0f)", c.read_bw / 1e9, c.sol_bw() / 1e9);
  std::printf(", %.1f TFLOP/s FP32", c.fp32 / 1e12);
  if (d.measured)
    std::printf("; datasheet %.0f GB/s, %.1f TFLOP/s", d.datasheet.mem_bw / 1e9, d.datasheet.fp32 / 1e12);
  std::printf("\nknowledge base: %s; budget: %lld evaluations, %.0f s; seed %llu\n", kb.string().c_str(),
              static_cast<long long>(cfg.budget.evals), cfg.budget.seconds, static_cast<unsigned long long>(cfg.seed));
  std::fflush(stdout);
}

void Progress::baseline(const Task& t, const TaskBaseline& b) {
  bytes_[t.id()] = b.bytes;
  std::printf("task %s: T_ref %.1f us%s (baseline: %s), T_SOL %.1f us\n", t.id().c_str(), b.t_ref_us, label(ev_),
              t.problem->baseline_description.c_str(), b.t_sol_us);
  if (!b.note.empty()) std::printf("  %s\n", b.note.c_str());
  std::fflush(stdout);
}

void Progress::result(const Task& t, const EvalResult& r, const SolScore& s) {
  ++done_;
  // GPU-side overheads of this run only: results replayed on resume were measured before (the replay
  // backend reports no GPU time of its own).
  if (r.kind == TimeKind::measured && !r.replayed && r.wall_ms > 0 && (r.status == Status::ok || r.status == Status::slow)) {
    wall_ms_.push_back(r.wall_ms);
    overhead_ms_.push_back(r.wall_ms - r.time.median_us * r.time.reps / 1000.0);
  }
  // This run's compiles (results replayed on resume were compiled before).
  if (!r.replayed) {
    if (r.cache_hit) ++cache_hits_;
    else if (r.compile_ms > 0) compile_ms_.push_back(r.compile_ms);
  }
  auto& best = best_us_[t.id()];
  if (r.status == Status::ok && !s.below_sol && (best == 0 || r.time.median_us < best)) best = r.time.median_us;
  if (!verbose_) return;
  std::printf("[%4lld/%lld] %-28s %-13s", static_cast<long long>(done_), static_cast<long long>(total_), r.key.c_str(),
              (std::string(status_name(r.status)) + (r.replayed ? "*" : "")).c_str());
  if (r.status == Status::ok) {
    std::printf(" %9.1f us %6.0f GB/s  SOL %.3f", r.time.median_us, bytes_[t.id()] / (r.time.median_us * 1e-6) / 1e9,
                s.score);
    if (s.below_sol) std::printf("  BELOW T_SOL: re-validate, not counted");
  }
  if (best > 0) std::printf("  | best %.1f us", best);
  if (r.log.find("(moved during the measurement)") != std::string::npos) std::printf("  WARNING: SM clock moved");
  std::printf("\n");
  std::fflush(stdout);
}

void Progress::seeds(const Task& t, size_t n, size_t presets) {
  if (n)
    std::printf("task %s: seeded with %zu configuration(s) that did best at other shapes, on other GPUs, under an earlier text of the template or timed another way\n",
                t.id().c_str(), n);
  if (presets) std::printf("task %s: %zu preset(s) of the template legal here, tried first\n", t.id().c_str(), presets);
  std::fflush(stdout);
}

void Progress::retime(const Task& t, const TaskBaseline& b, const EvalResult& best, const SolScore& s) {
  std::printf("task %s re-timed interleaved: T_ref %.1f us, best %.1f us (%s), SOL %.3f / %.3f\n", t.id().c_str(),
              b.t_ref_us, best.time.median_us, best.key.c_str(), s.score, s.execbench);
  std::fflush(stdout);
}

void Progress::summary(const std::vector<TaskReport>& reports) {
  std::printf("\nsummary%s on %s:\n", label(ev_), ev_.device().name.c_str());
  // %BW: the best's bandwidth over the copy bandwidth the ceilings give (measured on this device
  // in this run where it has one): what memory-bound targets are judged by.
  const double copy = ev_.device().ceilings().mem_bw;
  std::printf("%-48s %10s %8s %5s %10s %10s %6s %6s %6s  %s\n", "task", "time us", "GB/s", "%BW", "T_ref us", "T_SOL us",
              "SOL", "SOL-EB", "evals", "best configuration");
  for (const auto& r : reports) {
    const auto& o = r.outcome;
    if (!o.best) {
      std::printf("%-48s %10s %8s %5s %10.1f %10.1f %6s %6s %6lld  no valid configuration (%lld failed)\n",
                  r.task.id().c_str(), "-", "-", "-", o.baseline.t_ref_us, o.baseline.t_sol_us, "-", "-",
                  static_cast<long long>(o.evaluated), static_cast<long long>(o.failed));
      continue;
    }
    const double t = o.best->time.median_us;
    const double gbs = o.baseline.bytes / (t * 1e-6) / 1e9;
    std::printf("%-48s %10.1f %8.0f %5.1f %10.1f %10.1f %6.3f %6.3f %6lld  %s (found by %s)\n", r.task.id().c_str(), t,
                gbs, copy > 0 ? 100 * gbs * 1e9 / copy : 0.0, o.baseline.t_ref_us, o.baseline.t_sol_us, o.best_sol.score,
                o.best_sol.execbench, static_cast<long long>(o.evaluated), o.best->key.c_str(),
                o.best->proposer.empty() ? "?" : o.best->proposer.c_str());
  }
  for (const auto& r : reports)
    if (!r.outcome.stopped_by.empty())
      std::printf("%s stopped early: %s; its unused evaluations went to the tasks after it\n", r.task.id().c_str(),
                  r.outcome.stopped_by.c_str());
  if (!wall_ms_.empty()) {
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf("evaluation overhead: median %.1f ms per measured candidate on the GPU side, of which %.1f ms outside "
                "its timed runs (checks, L2 flushes, input draws, transfers); %zu candidates\n",
                median(wall_ms_), median(overhead_ms_), wall_ms_.size());
    double worker = 0, kernels = 0;
    for (size_t i = 0; i < wall_ms_.size(); ++i) {
      worker += wall_ms_[i];
      kernels += wall_ms_[i] - overhead_ms_[i];
    }
    const double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    std::printf("GPU use over the run's %.1f s: worker busy with candidates %.0f%%, in timed kernel runs %.0f%%\n",
                total / 1000, 100 * worker / total, 100 * kernels / total);
  }
  if (!compile_ms_.empty() || cache_hits_ > 0) {
    // What the CPU side cost: where the GPU waits, compiles are the usual reason.
    std::sort(compile_ms_.begin(), compile_ms_.end());
    if (compile_ms_.empty())
      std::printf("compiles: none in this run, %lld from the on-disk cache\n", static_cast<long long>(cache_hits_));
    else
      std::printf("compiles: %zu in this run (median %.0f ms, longest %.0f ms), %lld from the on-disk cache\n",
                  compile_ms_.size(), compile_ms_[compile_ms_.size() / 2], compile_ms_.back(),
                  static_cast<long long>(cache_hits_));
  }
  if (const auto use = ev_.gpu_use())
    std::printf("GPU busy %.1f%% of the wall time after the first compile batch (%.1f of %.1f s: candidates, baselines, "
                "re-timing)\n", 100 * use->fraction(), use->busy_s, use->wall_s);
  // Which agent found each task's best, and how the bandit shared the proposals.
  for (const auto& r : reports)
    if (!r.outcome.search_report.empty()) std::printf("%s: %s\n", r.task.id().c_str(), r.outcome.search_report.c_str());
  std::fflush(stdout);
}

}  // namespace soltune::cli
