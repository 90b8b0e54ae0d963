#include "agents/dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <tuple>

#include "agents/strategies.hpp"

namespace soltune {

namespace {

constexpr int64_t kUnlimited = INT64_MAX / 4;
constexpr double kMinGap = 0.05;  // a task at the speed of light still gets a little effort
constexpr int kMaxAhead = 4;      // batches a task may hold ahead of the GPU when compiles are slow

// One task's search and everything it owns, kept alive while tasks interleave.
struct Slot {
  Task task;
  std::unique_ptr<Space> space;
  std::unique_ptr<Strategy> search;
  std::unique_ptr<Rng> rng;
  std::unique_ptr<TaskRun> run;  // made at the task's first batch, after its baseline
  bool active = true;
  int64_t spent() const { return run ? run->outcome().evaluated : 0; }
};

}  // namespace

double task_weight(const TaskOutcome& o, double recent_gain) {
  const double gap = o.best_sol.valid ? std::clamp(1.0 - o.best_sol.score, kMinGap, 1.0) : 1.0;
  return gap * (1.0 + 2.0 * std::clamp(recent_gain, 0.0, 1.0));
}

Dispatcher::Dispatcher(const RunConfig& cfg, Evaluator& ev, Archive& archive) : cfg_(cfg), ev_(ev), archive_(archive) {}

std::vector<Task> Dispatcher::tasks() const {
  std::vector<Task> out;
  for (const auto& t : config_tasks(cfg_))
    if ((!include_ || include_(t)) && why_variant_cannot_run(*t.variant, ev_.device()).empty()) out.push_back(t);
  return out;
}

std::vector<std::string> unavailable_variants(const RunConfig& cfg, const DeviceInfo& device) {
  std::vector<std::string> out;
  for (const auto& v : cfg.spec.variants)
    if (auto why = why_variant_cannot_run(v, device); !why.empty() &&
        (cfg.variants.empty() || std::find(cfg.variants.begin(), cfg.variants.end(), v.name) != cfg.variants.end()))
      out.push_back(why);
  return out;
}

std::vector<TaskReport> Dispatcher::run(const Budget& b, uint64_t seed, const std::atomic<bool>* stop) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(b.seconds));
  std::vector<Slot> slots;
  for (const auto& t : tasks()) {
    Slot s{t, std::make_unique<Space>(*t.variant, t.fixed(ev_.device())), nullptr,
           std::make_unique<Rng>(Rng::mix(seed, slots.size())), nullptr};
    s.search = make_strategy(cfg_.search.strategy, *s.space, cfg_.search);
    const auto seen = archive_.known(t);
    for (const auto& k : seen) s.search->mark_seen(k);
    // The fallback first, before what the knowledge base suggests: every search of its variant
    // measures it. A fallback-only task ends there, or never starts when it was measured before.
    const auto presets = s.space->presets();
    const bool has_fallback = !presets.empty() && presets.front().first == "fallback";
    if (t.fallback_only && (!has_fallback || seen.count(s.space->key(presets.front().second)))) continue;
    if (has_fallback) s.search->add_preset(presets.front().second);
    size_t used = 0;
    if (!t.fallback_only) {
      for (const auto& key : archive_.seeds(t)) {
        try {
          s.search->add_seed(s.space->parse_key(key));
          ++used;
        } catch (const Error&) {
          // A key that does not fit this variant's knobs: not a seed for it.
        }
      }
    }
    // The template's presets (the known designs) after what the knowledge base suggests.
    if (!t.fallback_only)
      for (size_t i = has_fallback ? 1 : 0; i < presets.size(); ++i) s.search->add_preset(presets[i].second);
    if (used || !presets.empty()) archive_.on_seeds(t, used, t.fallback_only ? 1 : presets.size());
    slots.push_back(std::move(s));
  }
  const int64_t batch = std::max(1, cfg_.search.batch);
  // Each task's warm-up share before weights apply; a small budget is spread over every task.
  int64_t warmup = std::max<int64_t>(cfg_.search.initial, batch);
  if (b.evals > 0 && !slots.empty())
    warmup = std::min(warmup, std::max<int64_t>(1, b.evals / static_cast<int64_t>(slots.size())));
  int64_t evals_left = b.evals > 0 ? b.evals : kUnlimited;
  auto interrupted = [&] { return stop && stop->load(); };
  auto out_of_time = [&] { return b.seconds > 0 && clock::now() >= deadline; };
  auto start_task = [&](Slot& s) {
    const auto baseline = ev_.baseline(s.task);
    archive_.on_baseline(s.task, baseline);
    s.run = std::make_unique<TaskRun>(s.task, ev_, *s.search, static_cast<int>(batch), *s.rng, archive_, baseline, cfg_.stop);
  };
  // Every task the budget reaches gets its baseline timed and its first batch proposed before
  // anything is measured: the first batches then compile on every core while the GPU times the
  // baselines, instead of each task's first compiles waiting for the task before it (H200 runs of
  // 30 tasks spent their first 100 s that way). Proposals are those the first steps would make.
  // A quarter of a time budget at most: tasks not primed by then start at their first batch, as
  // before, so that a short run over many tasks still measures (an H200 sweep of 8 tasks with 12 s
  // spent all of it on baselines).
  const auto priming_ends = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(b.seconds / 4));
  int64_t reach = evals_left;
  for (auto& s : slots) {
    if (reach <= 0 || interrupted() || (b.seconds > 0 && clock::now() >= priming_ends)) break;
    start_task(s);
    s.run->prime(s.task.fallback_only ? 1 : std::min({batch, reach, warmup}));
    reach -= warmup;
  }
  // Batches a task holds ahead of the GPU: one (two for a lone task), and one more, up to kMaxAhead,
  // after each step in which the GPU waited for compiles over a tenth of the time: with more queued,
  // every core keeps compiling while the GPU measures (a template whose compiles take seconds).
  int depth = slots.size() == 1 ? 2 : 1;
  double seen_wait_s = 0, seen_wall_s = 0;
  while (evals_left > 0 && !interrupted() && !out_of_time()) {
    if (const auto use = ev_.gpu_use()) {
      const double waited = use->compile_wait_s - seen_wait_s, wall = use->wall_s - seen_wall_s;
      if (wall > 0 && waited > 0.1 * wall) depth = std::min(depth + 1, kMaxAhead);
      seen_wait_s = use->compile_wait_s;
      seen_wall_s = use->wall_s;
    }
    // Warm-up first (least spent, then task order); then the least effort for the weight.
    Slot* next = nullptr;
    std::tuple<int, double, size_t> best{2, 0.0, 0};
    for (size_t i = 0; i < slots.size(); ++i) {
      auto& s = slots[i];
      if (!s.active) continue;
      const bool warming = s.spent() < warmup;
      const double w = s.run ? task_weight(s.run->outcome(), s.run->recent_gain(2 * batch)) : 1.0;
      const std::tuple<int, double, size_t> key{warming ? 0 : 1, warming ? static_cast<double>(s.spent()) : static_cast<double>(s.spent()) / w, i};
      if (!next || key < best) {
        best = key;
        next = &s;
      }
    }
    if (!next) break;
    if (!next->run) start_task(*next);
    const int64_t before = next->spent();
    const int64_t share = next->task.fallback_only ? 1 : next->spent() < warmup ? warmup - next->spent() : batch;
    const int64_t now = std::min({batch, evals_left, share});
    // Its next batches, proposed now and compiled while this one is measured, are sized the same way.
    // A lone task holds two batches ahead at least: with one, its GPU waited on the batch's slowest
    // compile (56% busy for LayerNorm on the H200, where other tasks' batches would have filled the gap).
    const int64_t after = next->spent() + now < warmup ? warmup - next->spent() - now : batch;
    const int64_t ahead = slots.size() == 1 ? std::min(depth * batch, evals_left - now)
                                             : std::min({depth * batch, evals_left - now, after + (depth - 1) * batch});
    const bool more = next->run->step(now, next->task.fallback_only ? 0 : ahead) && !next->task.fallback_only;
    evals_left -= next->spent() - before;
    if (!more) {
      next->run->finish({}, interrupted());
      next->active = false;
    }
  }
  std::vector<TaskReport> reports;
  for (auto& s : slots) {
    if (!s.run) continue;  // never started: the budget ran out first
    const auto& out = s.run->finish({}, interrupted());
    reports.push_back(TaskReport{s.task, out, out.evaluated});
  }
  return reports;
}

}  // namespace soltune
