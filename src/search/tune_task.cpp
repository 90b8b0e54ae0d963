#include "search/tune_task.hpp"

#include <algorithm>
#include <cstdio>

namespace soltune {

SolScore score(const EvalResult& r, const TaskBaseline& b) {
  if (r.status != Status::ok) return SolScore{};
  return sol_score(r.time.median_us, b.t_ref_us, b.t_sol_us);
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Re-times the baseline and the fastest distinct configurations interleaved, so that the reported
// ratio T_ref / T holds even if the machine's speed drifted during the search.
void retime_best(const Task& t, Evaluator& ev, const std::vector<EvalResult>& ok, const RetimePolicy& p,
                 TaskOutcome& out, TaskObserver& obs) {
  std::vector<Config> top;
  for (size_t i = 0; i < ok.size() && top.size() < static_cast<size_t>(p.top); ++i) top.push_back(ok[i].config);
  const auto r = ev.retime(t, top, p.rounds);
  if (!r) return;
  out.baseline.t_ref_us = median(r->baseline_us);
  size_t best = 0;
  for (size_t i = 1; i < top.size(); ++i)
    if (median(r->config_us[i]) < median(r->config_us[best])) best = i;
  out.best = ok[best];
  out.best->time.median_us = median(r->config_us[best]);
  char note[200];
  std::snprintf(note, sizeof note, "; re-timed interleaved with %zu best configuration(s) over %d rounds", top.size(),
                p.rounds);
  out.baseline.note += note;
  out.best_sol = score(*out.best, out.baseline);
  out.retimed = true;
  obs.on_retime(t, out.baseline, *out.best, out.best_sol);
}

}  // namespace

TaskOutcome tune_task(const Task& t, Evaluator& ev, Strategy& s, const TaskBudget& budget, int batch, Rng& rng,
                      TaskObserver& obs, const TaskBaseline& baseline, const RetimePolicy& retime) {
  TaskOutcome out;
  std::vector<EvalResult> ok;  // counted results, fastest first
  int64_t since_better = 0;    // evaluations since the best time last improved
  out.baseline = baseline;
  auto time_left = [&] {
    if (budget.stop && budget.stop->load()) return false;
    return !budget.deadline || std::chrono::steady_clock::now() < *budget.deadline;
  };
  while (time_left()) {
    size_t n = static_cast<size_t>(batch);
    if (budget.evals > 0) n = std::min<size_t>(n, static_cast<size_t>(budget.evals - out.evaluated));
    if (n == 0) break;
    auto proposals = s.propose(n, rng);
    if (proposals.empty()) {
      out.exhausted = true;
      break;
    }
    auto results = ev.evaluate(t, proposals);
    const auto proposers = s.last_proposers();
    for (size_t i = 0; i < results.size() && i < proposers.size(); ++i) results[i].proposer = proposers[i];
    for (auto& r : results) {
      ++out.evaluated;
      auto sol = score(r, baseline);
      if (sol.below_sol) {
        // Faster than the hardware allows: measure and check again before believing anything.
        auto again = ev.evaluate(t, {r.config});
        const auto first = r.time.median_us;
        const auto proposer = r.proposer;
        if (!again.empty()) r = std::move(again.front());
        r.proposer = proposer;
        sol = score(r, baseline);
        r.log = "first timed at " + std::to_string(first) + " us, under T_SOL " + std::to_string(baseline.t_sol_us) +
                " us: re-measured and re-validated" + (sol.below_sol ? ", still under T_SOL: not counted; " : "; ") + r.log;
      }
      if (r.status == Status::ok && !sol.below_sol) ok.push_back(r);
      if (r.status != Status::ok) ++out.failed;
      // A time under T_SOL is a red flag, never a win: it is recorded but cannot become the best.
      else if (!sol.below_sol && (!out.best || r.time.median_us < out.best->time.median_us)) {
        out.best = r;
        out.best_sol = sol;
        since_better = -1;
      }
      ++since_better;
      obs.on_result(t, r, sol);
    }
    s.observe(results);
    obs.on_checkpoint(t, out.evaluated, s.checkpoint() + ";rng=" + rng.state());
    const auto& c = budget.conditions;
    if (c.target_sol > 0 && out.best_sol.valid && out.best_sol.score >= c.target_sol) {
      out.stopped_by = "target SOL score " + std::to_string(c.target_sol).substr(0, 4) + " reached";
      break;
    }
    if (c.stagnation > 0 && since_better >= c.stagnation) {
      out.stopped_by = "no better time in " + std::to_string(since_better) + " evaluations";
      break;
    }
  }
  std::stable_sort(ok.begin(), ok.end(),
                   [](const EvalResult& a, const EvalResult& b) { return a.time.median_us < b.time.median_us; });
  const bool stopped = budget.stop && budget.stop->load();
  if (!ok.empty() && retime.top > 0 && retime.rounds > 0 && !stopped) retime_best(t, ev, ok, retime, out, obs);
  return out;
}

}  // namespace soltune
