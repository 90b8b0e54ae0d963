#include "search/tune_task.hpp"

#include <algorithm>

namespace soltune {

SolScore score(const EvalResult& r, const TaskBaseline& b) {
  if (r.status != Status::ok) return SolScore{};
  return sol_score(r.time.median_us, b.t_ref_us, b.t_sol_us);
}

TaskOutcome tune_task(const Task& t, Evaluator& ev, Strategy& s, const TaskBudget& budget, int batch, Rng& rng,
                      TaskObserver& obs, const TaskBaseline& baseline) {
  TaskOutcome out;
  out.baseline = baseline;
  auto time_left = [&] { return !budget.deadline || std::chrono::steady_clock::now() < *budget.deadline; };
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
    for (auto& r : results) {
      ++out.evaluated;
      auto sol = score(r, baseline);
      if (sol.below_sol) {
        // Faster than the hardware allows: measure and check again before believing anything.
        auto again = ev.evaluate(t, {r.config});
        const auto first = r.time.median_us;
        if (!again.empty()) r = std::move(again.front());
        sol = score(r, baseline);
        r.log = "first timed at " + std::to_string(first) + " us, under T_SOL " + std::to_string(baseline.t_sol_us) +
                " us: re-measured and re-validated" + (sol.below_sol ? ", still under T_SOL: not counted; " : "; ") + r.log;
      }
      if (r.status != Status::ok) ++out.failed;
      // A time under T_SOL is a red flag, never a win: it is recorded but cannot become the best.
      else if (!sol.below_sol && (!out.best || r.time.median_us < out.best->time.median_us)) {
        out.best = r;
        out.best_sol = sol;
      }
      obs.on_result(t, r, sol);
    }
    s.observe(results);
  }
  return out;
}

}  // namespace soltune
