#include "agents/dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "agents/archivist.hpp"
#include "agents/strategies.hpp"
#include "core/fallback.hpp"

namespace soltune {

namespace {

// A task's best over this many times its shape's best (another variant's) is left behind.
constexpr double kDominated = 2.0;
// Variants within kContender of their shape's leader weigh in full; kFadeOver further behind, a tenth.
constexpr double kContender = 1.1, kFadeOver = 0.3;
// A variant whose first this many candidates all failed to compile stops.
constexpr int64_t kBrokenAfter = 8;

constexpr int64_t kUnlimited = INT64_MAX / 4;
constexpr double kMinGap = 0.05;  // a task at the speed of light still gets a little effort
constexpr int kMaxAhead = 4;      // batches a task may hold ahead of the GPU when compiles are slow

// One task's search and everything it owns, kept alive while tasks interleave.
struct Slot {
  Task task;
  std::unique_ptr<Space> space;
  std::unique_ptr<Strategy> search;
  SearchPrior prior;             // handed to the run at its start
  // A task of the fallback's variant: (dtype, the fallback's class at its shape), whose first
  // evaluation measures the fallback there; nullopt for the others.
  std::optional<std::pair<DType, std::vector<int64_t>>> fallback_key;
  std::unique_ptr<Rng> rng;
  std::unique_ptr<TaskRun> run;  // made at the task's first batch, after its baseline
  bool active = true;
  std::string shared = {};  // the key of its best as last offered to its siblings
  double step_s = 0;      // wall time of its steps so far
  int64_t stepped = 0;    // ... and the evaluations they made
  int64_t spent() const { return run ? run->outcome().evaluated : 0; }
};

// Seconds one more evaluation of s is expected to take: its own average once it has one; before that,
// the least it can take, the costliest average of the tasks of no more work (T_SOL) than it (an
// evaluation's cost does not grow in proportion to the work: checks and flushes cost the same);
// 0 where none is known.
double expected_eval_s(const Slot& s, const std::vector<Slot>& all, const Ceilings& ceil) {
  if (s.stepped > 0) return s.step_s / static_cast<double>(s.stepped);
  const double own = s.task.t_sol_us(ceil);
  double least = 0;
  for (const auto& o : all)
    if (o.stepped > 0 && o.task.t_sol_us(ceil) <= own) least = std::max(least, o.step_s / static_cast<double>(o.stepped));
  return least;
}

// Seconds the end's interleaved re-timing of s is expected to take: (1 + its configurations re-timed)
// measurements a round, each of about `per_measure` of an evaluation (calibrated as tasks finish).
double expected_retime_s(const Slot& s, const RetimePolicy& p, double each, double per_measure) {
  if (!s.run || s.run->valid() == 0) return 0;
  const auto top = std::min<size_t>(static_cast<size_t>(p.top), s.run->valid());
  return per_measure * each * p.rounds * static_cast<double>(1 + top);
}

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
  const auto start = b.clock_start == clock::time_point{} ? clock::now() : b.clock_start;
  const auto deadline = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(b.seconds));
  std::vector<Slot> slots;
  for (const auto& t : tasks()) {
    Slot s{t, std::make_unique<Space>(*t.variant, t.fixed(ev_.device())), nullptr, {}, {},
           std::make_unique<Rng>(Rng::mix(seed, slots.size())), nullptr};
    if (t.variant == cfg_.spec.fallback_variant())
      if (const auto fb = fallback_config(*t.variant, t.dtype))
        s.fallback_key = std::pair{t.dtype, fallback_class(cfg_.spec, *t.variant, *fb, t.shape)};
    auto prior = archivist_prior(archive_, t, *s.space);
    if (!prior) continue;
    s.prior = std::move(*prior);
    s.search = make_strategy(cfg_.search.strategy, *s.space, cfg_.search);
    slots.push_back(std::move(s));
  }
  const int64_t batch = std::max(1, cfg_.search.batch);
  // Each task's warm-up share before weights apply; a small budget is spread over every task.
  int64_t warmup = std::max<int64_t>(cfg_.search.initial, batch);
  if (b.evals > 0 && !slots.empty())
    warmup = std::min(warmup, std::max<int64_t>(1, b.evals / static_cast<int64_t>(slots.size())));
  int64_t evals_left = b.evals > 0 ? b.evals : kUnlimited;
  auto interrupted = [&] { return stop && stop->load(); };
  // The re-timing at every task's end comes out of a time budget too: the search stops early enough to
  // leave it the time it is expected to take (at most a quarter of the budget), and a task whose
  // re-timing no longer fits keeps its search times, saying so. per_measure: one re-timed
  // measurement over one evaluation (the check rounds, references and timing), from the finished
  // ones; 0.25 before any (an H100 run of matmul-models.yaml).
  const RetimePolicy retime{};
  double per_measure = 0.25, measured_s = 0, measured_units = 0;
  auto reserve_s = [&] {
    if (b.seconds <= 0) return 0.0;
    double r = 0;
    for (const auto& s : slots) r += expected_retime_s(s, retime, expected_eval_s(s, slots, ev_.device().ceilings()), per_measure);
    return std::min(r, b.seconds / 4);
  };
  auto seconds_left = [&] { return std::chrono::duration<double>(deadline - clock::now()).count() - reserve_s(); };
  auto out_of_time = [&] { return b.seconds > 0 && seconds_left() <= 0; };
  // The baseline depends on the problem, dtype and shape, not the variant: timed once per shape and
  // given to each variant's task there (a config of four variants timed it four times).
  // Under a time budget a baseline may take a quarter of the time left (5 s at least): one that
  // would take longer (a naive GEMM where cuBLASLt is missing: seconds a run) is said and its
  // shape's tasks are skipped. False where the task cannot start.
  std::map<std::string, TaskBaseline> baselines;
  auto start_task = [&](Slot& s) {
    const auto key = s.task.dtype_shape();
    auto it = baselines.find(key);
    if (it == baselines.end()) {
      const double limit = b.seconds > 0 ? std::max(5.0, seconds_left() / 4) : 0.0;
      it = baselines.emplace(key, ev_.baseline_within(s.task, limit)).first;
    }
    const auto& baseline = it->second;
    if (!baseline.skipped.empty()) {
      s.active = false;
      archive_.on_warning(s.task, s.task.id() + ": not tuned: " + baseline.skipped);
      return false;
    }
    archive_.on_baseline(s.task, baseline);
    s.run = std::make_unique<TaskRun>(s.task, ev_, *s.space, *s.search, static_cast<int>(batch), *s.rng, archive_, baseline,
                                      cfg_.stop, std::move(s.prior));
    return true;
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
    if (!start_task(s)) continue;
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
    // Variants compete at a shape: a task whose best, after two evaluations, is over kDominated times
    // the best any variant reached at its dtype and shape leaves its warm-up and weighs little (a
    // SIMT GEMM 20 times slower than a wgmma one had taken as many evaluations as it, at seconds each).
    std::map<std::string, double> best_at;  // dtype/shape -> the fastest time any of its tasks reached
    for (const auto& s : slots)
      if (s.run && s.run->outcome().best) {
        const double us = s.run->outcome().best->time.median_us;
        auto [it, fresh] = best_at.emplace(s.task.dtype_shape(), us);
        if (!fresh) it->second = std::min(it->second, us);
      }
    auto dominated = [&](const Slot& s) {
      if (!s.run || s.spent() < 2 || s.task.fallback_only) return false;
      const auto& o = s.run->outcome();
      return o.best && o.best->time.median_us > kDominated * best_at.at(s.task.dtype_shape());
    };
    // A task's best over the best at its shape: 1 where it leads, more behind; 0 before any result.
    auto behind_by = [&](const Slot& s) {
      if (!s.run || !s.run->outcome().best) return 0.0;
      return s.run->outcome().best->time.median_us / best_at.at(s.task.dtype_shape());
    };
    // What a user keeps of a shape is its fastest kernel: a variant within kContender of the leader
    // may still overtake it and weighs in full; further behind, less, down to a tenth at kContender +
    // kFadeOver (a 120-s run of eight GEMM shapes gave the mma.sync variant, 1.5 times slower, as many
    // evaluations as the wgmma one, whose best stayed 6% behind cuBLAS at a shape it matches).
    auto contention = [&](const Slot& s) {
      const double r = behind_by(s);
      return r <= kContender ? 1.0 : std::max(0.1, 1.0 - 0.9 * (r - kContender) / kFadeOver);
    };
    // Out of the warm-up after two evaluations: a task far behind its shape's best, or one behind the
    // leader by more than kContender (the warm-up of every variant at every shape had taken 264 of a
    // 120-s run's 336 evaluations over 33 tasks, leaving the leader 14 at each shape).
    auto trails = [&](const Slot& s) { return dominated(s) || (s.run && s.spent() >= 2 && behind_by(s) > kContender); };
    // Warm-up first: tasks without a result, then the variant leading at its shape before those
    // behind it (a 120-s run of eight GEMM shapes gave the first variant listed its whole warm-up and
    // the fastest one a single evaluation), then the least spent; then the least effort for the weight.
    // Before them, the first task to measure the fallback of each dtype and class (a budget smaller
    // than the tasks would otherwise end before the fallback's variant starts, and export would
    // have no kernel of last resort).
    std::set<std::pair<DType, std::vector<int64_t>>> fallback_started;
    for (const auto& s : slots)
      if (s.run && s.fallback_key) fallback_started.insert(*s.fallback_key);
    Slot* next = nullptr;
    std::tuple<int, double, double, size_t> best{2, 0.0, 0.0, 0};
    for (size_t i = 0; i < slots.size(); ++i) {
      auto& s = slots[i];
      if (!s.active) continue;
      const bool behind = dominated(s);
      const bool warming = s.spent() < warmup && !trails(s);
      // Behind: a tenth of its gap's weight, without the boost of recent progress.
      const double w = !s.run  ? 1.0
                       : behind ? 0.1 * task_weight(s.run->outcome(), 0)
                                : contention(s) * task_weight(s.run->outcome(), s.run->recent_gain(2 * batch));
      const bool fallback_first = !s.run && s.fallback_key && !fallback_started.count(*s.fallback_key);
      const std::tuple<int, double, double, size_t> key =
          fallback_first ? std::tuple{-1, static_cast<double>(s.task.bytes()), 0.0, i}  // the smallest shape first
          : warming      ? std::tuple{0, behind_by(s), static_cast<double>(s.spent()), i}
                         : std::tuple{1, static_cast<double>(s.spent()) / w, 0.0, i};
      if (!next || key < best) {
        best = key;
        next = &s;
      }
    }
    if (!next) break;
    // A time budget ends where it says: a batch is cut to the evaluations expected to fit the time
    // left, and a task none of whose evaluations fits stops (or never starts: its baseline would be
    // timed for nothing). With nothing measured yet, one evaluation first, so that the next batch
    // has an estimate.
    const double left = seconds_left();
    const double each = b.seconds > 0 ? expected_eval_s(*next, slots, ev_.device().ceilings()) : 0;
    if (each > 0 && left < each) {
      next->active = false;
      if (next->run) {
        next->run->note_stop("out of time: an evaluation takes about " + std::to_string(static_cast<int>(each + 0.5)) +
                             " s, " + std::to_string(static_cast<int>(std::max(left, 0.0))) + " s were left");
      }
      continue;
    }
    if (!next->run && !start_task(*next)) continue;
    // Compiles in flight when the search's time is up are stopped, not waited for.
    if (b.seconds > 0)
      ev_.set_deadline(clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(std::max(seconds_left(), 0.0))));
    const int64_t before = next->spent();
    const int64_t share = next->task.fallback_only                           ? 1
                          : next->spent() < warmup && !trails(*next)    ? warmup - next->spent()
                                                                       : batch;
    int64_t now = std::min({batch, evals_left, share});
    bool near_end = false;
    if (b.seconds > 0) {
      const double left_now = seconds_left();  // after the baseline
      // A task's first evaluation comes alone: its cost is known only after it.
      now = next->stepped > 0 ? std::clamp<int64_t>(static_cast<int64_t>(left_now / each), 1, now) : 1;
      near_end = each > 0 && left_now < 3 * each * static_cast<double>(batch);
    }
    // Its next batches, proposed now and compiled while this one is measured, are sized the same way.
    // A lone task holds two batches ahead at least: with one, its GPU waited on the batch's slowest
    // compile (56% busy for LayerNorm on the H200, where other tasks' batches would have filled the gap).
    const int64_t after = next->spent() + now < warmup ? warmup - next->spent() - now : batch;
    const int64_t ahead = slots.size() == 1 ? std::min(depth * batch, evals_left - now)
                                             : std::min({depth * batch, evals_left - now, after + (depth - 1) * batch});
    // Near the end of a time budget nothing more is proposed and compiled ahead: it would not be measured.
    const auto step_began = clock::now();
    const bool more = next->run->step(now, next->task.fallback_only || near_end ? 0 : ahead) && !next->task.fallback_only;
    next->step_s += std::chrono::duration<double>(clock::now() - step_began).count();
    next->stepped += next->spent() - before;
    evals_left -= next->spent() - before;
    if (!more) next->active = false;  // re-timed with the others at the end, as the budget allows
    // A new best is offered to the same variant's tasks at the dtype's other shapes: a design that
    // wins at one GEMM shape is the first guess at the next (a 420-s run of eight Llama-3 GEMMs had
    // 14 to 28 evaluations a shape, and its best moved by a few percent from run to run).
    if (const auto& found = next->run->outcome().best; found && found->key != next->shared) {
      next->shared = found->key;
      for (auto& o : slots)
        if (&o != next && o.active && !o.task.fallback_only && o.task.variant == next->task.variant && o.task.dtype == next->task.dtype) {
          Proposal p{found->config, "archivist.sibling"};
          if (o.run)
            o.run->offer(std::move(p));
          else
            o.prior.seeds.push_back(std::move(p));
        }
    }
    // A variant whose first kBrokenAfter candidates, over all its tasks, failed to compile is broken,
    // not slow: its tasks stop, and the rest of the budget goes to the others.
    int64_t tried = 0, rejected = 0;
    std::string why;
    for (const auto& s : slots)
      if (s.run && s.task.variant == next->task.variant) {
        tried += s.run->outcome().evaluated;
        rejected += s.run->outcome().compile_errors;
        if (why.empty()) why = s.run->outcome().first_compile_error;
      }
    if (tried >= kBrokenAfter && rejected == tried)
      for (auto& s : slots)
        if (s.task.variant == next->task.variant && s.active) {
          s.active = false;
          if (s.run)
            s.run->note_stop("every one of variant " + s.task.variant->name + "'s first " + std::to_string(tried) +
                             " candidates failed to compile: " + why);
        }
  }
  ev_.set_deadline(std::nullopt);  // the re-timing compiles nothing new (cache hits)
  std::vector<TaskReport> reports;
  for (auto& s : slots) {
    if (!s.run) continue;  // never started: the budget ran out first
    if (const auto n = s.run->outcome().unmeasured; n > 0)
      archive_.on_warning(s.task, s.task.id() + ": " + std::to_string(n) +
                                      " proposal(s) not measured: the time budget ended while they compiled or waited");
    RetimePolicy p = retime;
    const double each = expected_eval_s(s, slots, ev_.device().ceilings());
    const double expected = expected_retime_s(s, p, each, per_measure);
    if (b.seconds > 0 && expected > 0) {
      const double left = std::chrono::duration<double>(deadline - clock::now()).count();
      if (expected > left) {
        p.top = 0;
        s.run->note_not_retimed("its re-timing would take about " + std::to_string(static_cast<int>(expected + 0.5)) +
                                " s, " + std::to_string(static_cast<int>(std::max(left, 0.0))) + " s were left");
      }
    }
    const auto began = clock::now();
    const auto& out = s.run->finish(p, interrupted());
    if (out.retimed && each > 0 && expected > 0) {  // calibrates the estimate for the tasks after it
      measured_s += std::chrono::duration<double>(clock::now() - began).count();
      measured_units += expected / per_measure;
      per_measure = measured_s / measured_units;
    }
    reports.push_back(TaskReport{s.task, out, out.evaluated});
  }
  return reports;
}

}  // namespace soltune
