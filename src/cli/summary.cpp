// The end of `soltune tune`: the best of every task in at most 120 columns (the configuration on a
// line of its own), what the run cost, and where its results went.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "core/space.hpp"

namespace soltune::cli {
namespace {

constexpr size_t kWidth = 120;

std::string median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v[v.size() / 2]);
  return buf;
}

// Where a measured candidate's GPU-side time went, as means that add up to the worker's wall time:
// the phases around the timed kernels, the kernels, and what is left (transfers, the worker's own
// work between phases).
std::string phase_line(const std::vector<std::pair<double, GpuPhases>>& all) {
  double wall = 0;
  GpuPhases sum;
  for (const auto& [w, p] : all) {
    wall += w;
    for (const auto& [name, field] : kGpuPhaseFields) sum.*field += p.*field;
  }
  const double n = static_cast<double>(all.size());
  const std::pair<const char*, double> parts[] = {
      {"load", sum.load},
      {"correctness rounds", sum.rounds},
      {"of them drawing inputs and running the reference where no kept round served", sum.reference},
      {"draws, flushes and gaps between timed kernels (warm-up and probe included)", sum.warmup + sum.batches - sum.kernels},
      {"checks of timed repetitions", sum.checks},
      {"final checks", sum.after},
      {"timed kernels", sum.kernels},
      {"transfers and the rest", wall - sum.load - sum.rounds - sum.warmup - sum.batches - sum.checks - sum.after},
  };
  std::string line = "where a candidate's GPU-side time went (mean ms, share):";
  char buf[160];
  for (const auto& [what, ms] : parts) {
    std::snprintf(buf, sizeof buf, " %s %.1f (%.0f%%),", what, ms / n, wall > 0 ? 100 * ms / wall : 0.0);
    line += buf;
  }
  line.back() = ';';
  std::snprintf(buf, sizeof buf, " %zu candidates", all.size());
  return line + buf;
}

}  // namespace

double tied_fraction(std::vector<double> times) {
  if (times.size() < 2) return 0;
  std::sort(times.begin(), times.end());
  size_t tied = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    const bool prev = i > 0 && times[i] - times[i - 1] <= 1e-9 * times[i];
    const bool next = i + 1 < times.size() && times[i + 1] - times[i] <= 1e-9 * times[i + 1];
    tied += prev || next;
  }
  return static_cast<double>(tied) / static_cast<double>(times.size());
}

void Progress::summary(const std::vector<TaskReport>& reports) {
  if (block_) block_->clear();
  std::printf("\nsummary%s on %s:\n", ev_.kind() == TimeKind::predicted ? " (predicted)" : "", ev_.device().name.c_str());
  // %BW: the best's bandwidth over the copy bandwidth the ceilings give (measured on this device
  // in this run where it has one): what memory-bound targets are judged by. Where every task's
  // T_SOL is its FLOPs (a GEMM), the rate and the share of the compute ceiling say more.
  const auto& ceil = ev_.device().ceilings();
  const double copy = ceil.mem_bw;
  const bool compute_bound = !reports.empty() && std::all_of(reports.begin(), reports.end(), [&](const TaskReport& r) {
    const double rate = ceil.rate(r.task.problem->compute_unit(r.task.dtype));
    return rate > 0 && r.outcome.baseline.flops / rate > r.outcome.baseline.bytes / ceil.sol_bw();
  });
  // The figures take 72 columns; the task's id takes what is left, else a line of its own.
  constexpr size_t kFigures = 72;
  size_t id_width = 4;
  for (const auto& r : reports) id_width = std::max(id_width, r.task.id().size());
  id_width = std::min(id_width, kWidth - kFigures);
  // The T_ref column names what it timed where every task's baseline is the same (a library's label).
  std::map<std::string, std::vector<std::string>> ref_sources;  // label -> tasks
  for (const auto& r : reports) ref_sources[r.outcome.baseline.source].push_back(r.task.id());
  std::string ref_head = "T_ref us";
  if (ref_sources.size() == 1 && !ref_sources.begin()->first.empty() && ref_sources.begin()->first.size() <= 7)
    ref_head = ref_sources.begin()->first + " us";
  std::printf("%-*s %9s %6s %5s %10s %9s %6s %6s %6s\n", static_cast<int>(id_width), "task", "time us",
              compute_bound ? "TF/s" : "GB/s", compute_bound ? "%PK" : "%BW", ref_head.c_str(), "T_SOL us", "SOL",
              "SOL-EB", "evals");
  for (const auto& r : reports) {
    const auto& o = r.outcome;
    const auto id = r.task.id();
    if (id.size() > id_width) std::printf("%s\n", id.c_str());
    const char* first = id.size() > id_width ? "" : id.c_str();
    if (!o.best) {
      std::printf("%-*s %9s %6s %5s %10.1f %9.1f %6s %6s %6lld\n", static_cast<int>(id_width), first, "-", "-", "-",
                  o.baseline.t_ref_us, o.baseline.t_sol_us, "-", "-", static_cast<long long>(o.evaluated));
      if (o.evaluated == 0 && !o.stopped_by.empty()) {  // never measured: the budget ended first
        std::fputs(wrap("  not measured: " + o.stopped_by, kWidth, 4).c_str(), stdout);
        continue;
      }
      // None failed: none was legal here. Which constraint excluded the shape says what to widen.
      const std::string why = o.failed > 0 ? "" : Space(*r.task.variant, r.task.fixed(ev_.device())).why_empty();
      if (why.empty()) std::printf("  no valid configuration (%lld failed)\n", static_cast<long long>(o.failed));
      else std::fputs(wrap("  no legal configuration: " + why, kWidth, 4).c_str(), stdout);
      continue;
    }
    const double t = o.best->time.median_us;
    const double gbs = o.baseline.bytes / (t * 1e-6) / 1e9;
    const double tflops = o.baseline.flops / (t * 1e-6) / 1e12;
    const double peak = ceil.rate(r.task.problem->compute_unit(r.task.dtype));
    std::printf("%-*s %9.1f %6.0f %5.1f %10.1f %9.1f %6.3f %6.3f %6lld\n", static_cast<int>(id_width), first, t,
                compute_bound ? tflops : gbs,
                compute_bound ? 100 * tflops * 1e12 / peak : copy > 0 ? 100 * gbs * 1e9 / copy : 0.0,
                o.baseline.t_ref_us, o.baseline.t_sol_us, o.best_sol.score, o.best_sol.execbench,
                static_cast<long long>(o.evaluated));
    const std::string found = " (found by " + (o.best->proposer.empty() ? std::string("?") : o.best->proposer) +
                              (o.best->kind == TimeKind::predicted ? "; correctness not checked: predicted" : "") + ")";
    std::fputs(wrap("  " + o.best->key + found, kWidth, 4).c_str(), stdout);
  }
  // What T_ref timed (SOL 0.5 is its time): each source and its tasks where they differ, and why a
  // library's tasks fell back to the baseline kernels (the baseline's note says).
  const bool any_library = std::any_of(reports.begin(), reports.end(), [](const TaskReport& r) {
    return r.task.problem->baseline_library.has_value();
  });
  if (any_library && (ref_sources.size() > 1 || ref_head == "T_ref us"))
    for (const auto& [label, tasks] : ref_sources) {
      std::string line = "T_ref is " + (label.empty() ? std::string("the baseline") : label) + " at " +
                         std::to_string(tasks.size()) + " task" + (tasks.size() == 1 ? "" : "s");
      if (tasks.size() <= 4) {
        line += ":";
        for (const auto& id : tasks) line += " " + id;
      }
      std::fputs(wrap(line, kWidth, 2).c_str(), stdout);
    }
  for (const auto& r : reports)
    if (const auto& lib = r.task.problem->baseline_library; lib && r.outcome.baseline.source != lib->label) {
      const auto& note = r.outcome.baseline.note;
      std::fputs(wrap(r.task.id() + ": " + note.substr(0, note.find("; ")), kWidth, 2).c_str(), stdout);
    }
  size_t not_retimed = 0;
  std::string why_not;
  for (const auto& r : reports)
    if (!r.outcome.not_retimed.empty()) {
      ++not_retimed;
      why_not = r.outcome.not_retimed;
    }
  if (not_retimed > 0)
    std::fputs(wrap(std::to_string(not_retimed) + " of " + std::to_string(reports.size()) +
                        " tasks keep their search times, not re-timed beside T_ref at the end: the time budget was "
                        "spent (the last: " + why_not + ")", kWidth, 2).c_str(), stdout);
  for (const auto& r : reports)
    if (!r.outcome.stopped_by.empty() && r.outcome.evaluated > 0)
      std::fputs(wrap(r.task.id() + " stopped early: " + r.outcome.stopped_by +
                          (r.outcome.stopped_by.rfind("out of time", 0) == 0 ? ""
                                                                               : "; its unused evaluations went to the tasks after it"),
                      kWidth, 2).c_str(), stdout);
  char buf[512];
  if (!wall_ms_.empty()) {
    std::snprintf(buf, sizeof buf, "evaluation overhead: median %s ms per measured candidate on the GPU side, of which %s "
                  "ms outside its timed runs (checks, L2 flushes, input draws, transfers); %zu candidates",
                  median_of(wall_ms_).c_str(), median_of(overhead_ms_).c_str(), wall_ms_.size());
    std::fputs(wrap(buf, kWidth, 2).c_str(), stdout);
    double worker = 0, kernels = 0;
    for (size_t i = 0; i < wall_ms_.size(); ++i) {
      worker += wall_ms_[i];
      kernels += wall_ms_[i] - overhead_ms_[i];
    }
    const double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    std::snprintf(buf, sizeof buf, "GPU use over the run's %.1f s: worker busy with candidates %.0f%%, in timed kernel "
                  "runs %.0f%%", total / 1000, 100 * worker / total, 100 * kernels / total);
    std::fputs(wrap(buf, kWidth, 2).c_str(), stdout);
    if (!phases_.empty()) std::fputs(wrap(phase_line(phases_), kWidth, 2).c_str(), stdout);
  }
  if (!compile_ms_.empty() || cache_hits_ > 0) {
    // What the CPU side cost: where the GPU waits, compiles are the usual reason.
    std::sort(compile_ms_.begin(), compile_ms_.end());
    if (compile_ms_.empty())
      std::snprintf(buf, sizeof buf, "compiles: none in this run, %lld from the on-disk cache",
                    static_cast<long long>(cache_hits_));
    else
      std::snprintf(buf, sizeof buf, "compiles: %zu in this run (median %.0f ms, longest %.0f ms), %lld from the on-disk "
                    "cache", compile_ms_.size(), compile_ms_[compile_ms_.size() / 2], compile_ms_.back(),
                    static_cast<long long>(cache_hits_));
    std::fputs(wrap(buf, kWidth, 2).c_str(), stdout);
  }
  // Spilling candidates are timed like the others: their spills are a cost their times show.
  for (const auto& r : reports) {
    const auto it = spilled_.find(r.task.id());
    if (it == spilled_.end()) continue;
    const auto [count, fastest] = it->second;
    std::string line = r.task.id() + ": " + std::to_string(count) + " candidate(s) spilled registers and were " +
                       (ev_.kind() == TimeKind::predicted ? "predicted" : "timed") + " with their spills";
    if (fastest > 0 && r.outcome.best) {
      std::snprintf(buf, sizeof buf, "; the fastest of them %.1f us against the task's best %.1f us%s", fastest,
                    r.outcome.best->time.median_us,
                    r.outcome.best->res.spill_stores + r.outcome.best->res.spill_loads > 0 ? " (the best spills)" : "");
      line += buf;
    }
    std::fputs(wrap(line, kWidth, 2).c_str(), stdout);
  }
  if (const auto use = ev_.gpu_use()) {
    std::snprintf(buf, sizeof buf, "GPU busy %.1f%% of the wall time after the first compile batch (%.1f of %.1f s: "
                  "candidates, baselines, re-timing); it waited %.1f s (%.1f%%) for compiles", 100 * use->fraction(),
                  use->busy_s, use->wall_s, use->compile_wait_s, use->wall_s > 0 ? 100 * use->compile_wait_s / use->wall_s : 0.0);
    std::fputs(wrap(buf, kWidth, 2).c_str(), stdout);
  }
  // A model that predicts one time for most candidates cannot rank them: the search among them is
  // blind, and only a GPU can tell them apart.
  for (const auto& [id, times] : predicted_us_) {
    const double tied = tied_fraction(times);
    if (times.size() >= 8 && tied >= kTiedWarn) {
      std::snprintf(buf, sizeof buf, "%s: predictions tie for %.0f%% of its %zu candidates: the model cannot tell them "
                    "apart; measure on a GPU (--backend cuda)", id.c_str(), 100 * tied, times.size());
      std::fputs(wrap(buf, kWidth, 2).c_str(), stdout);
    }
  }
  // Which agent found each task's best, and how the bandit shared the proposals.
  for (const auto& r : reports)
    if (!r.outcome.search_report.empty())
      std::fputs(wrap(r.task.id() + ": " + r.outcome.search_report, kWidth, 2).c_str(), stdout);
  std::fflush(stdout);
}

void Progress::next_steps(const std::string& program, const std::filesystem::path& kb, const std::string& problem) {
  const std::string p = shell_quote(program), k = shell_quote(kb.string());
  std::printf("\nresults: %lld new in %s\n", static_cast<long long>(results_recorded_), kb.string().c_str());
  std::printf("next:\n  %s kb best --kb %s --problem %s\n", p.c_str(), k.c_str(), problem.c_str());
  // What export ships is audited on the GPU that measured it, once, before it is exported.
  if (ev_.kind() == TimeKind::measured)
    std::printf("  %s audit --kb %s --problem %s\n", p.c_str(), k.c_str(), problem.c_str());
  std::printf("  %s export --kb %s --problem %s -o %s.cuh%s\n", p.c_str(), k.c_str(), problem.c_str(), problem.c_str(),
              ev_.kind() == TimeKind::predicted ? " --allow-predicted" : "");
  if (ev_.kind() == TimeKind::predicted)
    std::printf("  (the times are predictions: on a GPU, tune with --backend cuda before using the kernels)\n");
  std::fflush(stdout);
}

}  // namespace soltune::cli
