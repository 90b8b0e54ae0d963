#include "agents/dispatcher.hpp"

#include <chrono>

namespace soltune {

Dispatcher::Dispatcher(const RunConfig& cfg, Evaluator& ev, TaskObserver& obs) : cfg_(cfg), ev_(ev), obs_(obs) {}

std::vector<Task> Dispatcher::tasks() const {
  std::vector<Task> out;
  for (const auto& v : cfg_.spec.variants) {
    if (!cfg_.variants.empty() && std::find(cfg_.variants.begin(), cfg_.variants.end(), v.name) == cfg_.variants.end())
      continue;
    for (auto dt : cfg_.dtypes)
      for (const auto& sh : cfg_.shapes) out.push_back(Task{&cfg_.spec, &v, dt, sh});
  }
  return out;
}

std::vector<TaskReport> Dispatcher::run(const Budget& b, uint64_t seed,
                                        const std::function<std::set<std::string>(const Task&)>& known,
                                        const std::atomic<bool>* stop,
                                        const std::function<std::vector<std::string>(const Task&)>& seeds) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto all = tasks();
  std::vector<TaskReport> reports;
  int64_t evals_left = b.evals;
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& t = all[i];
    const auto remaining = static_cast<int64_t>(all.size() - i);
    if (stop && stop->load()) break;
    TaskBudget tb;
    tb.stop = stop;
    tb.conditions = cfg_.stop;
    if (b.evals > 0) {
      // Fewer evaluations than tasks: the budget is spent, and the tasks left are not started
      // (a TaskBudget of 0 evaluations would mean no limit).
      if (evals_left <= 0) break;
      tb.evals = std::max<int64_t>(1, evals_left / remaining);
    }
    if (b.seconds > 0) {
      const double used = std::chrono::duration<double>(clock::now() - start).count();
      const double share = std::max(0.0, b.seconds - used) / static_cast<double>(remaining);
      tb.deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(share));
    }
    const Space space(*t.variant, t.fixed(ev_.device()));
    EvolutionarySearch search(space, cfg_.search);
    for (const auto& k : known(t)) search.mark_seen(k);
    if (seeds) {
      size_t used = 0;
      for (const auto& key : seeds(t)) {
        try {
          search.add_seed(space.parse_key(key));
          ++used;
        } catch (const Error&) {
          // A key that does not fit this variant's knobs: not a seed for it.
        }
      }
      if (used) obs_.on_seeds(t, used);
    }
    Rng rng(Rng::mix(seed, i));
    const auto baseline = ev_.baseline(t);
    obs_.on_baseline(t, baseline);
    TaskReport r{t, tune_task(t, ev_, search, tb, cfg_.search.batch, rng, obs_, baseline), tb.evals};
    evals_left -= r.outcome.evaluated;
    reports.push_back(std::move(r));
  }
  return reports;
}

}  // namespace soltune
