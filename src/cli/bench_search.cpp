// soltune bench-search: every strategy on every recorded landscape, over many seeds, through the
// same funnel a real run uses (TaskRun, with the replay backend). Reports the median number of
// evaluations each strategy needs to come within 1% and 5% of the landscape's best, the median
// best-so-far at every budget (the curve), and whether soltune's is ever worse than random search's.
// The landscape's variant takes its launch geometry and model hints from the file (recorded with
// it), or for older files from its template (--templates), so that the replay backend can offer
// the model's prior a real run has; how well that prior ranks the landscape is reported too (an
// analysis after the fact: the searches never see a time they did not evaluate).
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>

#include "agents/strategies.hpp"
#include "cli/landscape_command.hpp"
#include "cli/options.hpp"
#include "core/landscape.hpp"
#include "eval/replay_evaluator.hpp"
#include "eval/model_predictor.hpp"
#include "search/tune_task.hpp"

namespace po = boost::program_options;

namespace soltune::cli {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One run: the best time after each evaluation, until within 1% of the landscape's best.
struct Trace {
  std::vector<double> best;  // best-so-far after evaluation i+1 (infinity before the first ok one)
  int64_t to1 = -1, to5 = -1;
};

class Tracker final : public TaskObserver {
 public:
  Tracker(double best_us, Trace& t) : best_us_(best_us), t_(t) {}
  void on_result(const Task&, const EvalResult& r, const SolScore& s) override {
    double now = t_.best.empty() ? kInf : t_.best.back();
    if (r.status == Status::ok && !s.below_sol) now = std::min(now, r.time.median_us);
    t_.best.push_back(now);
    const auto n = static_cast<int64_t>(t_.best.size());
    if (t_.to5 < 0 && now <= best_us_ * 1.05) t_.to5 = n;
    if (t_.to1 < 0 && now <= best_us_ * 1.01) t_.to1 = n;
  }

 private:
  double best_us_;
  Trace& t_;
};

// The replay backend without its predictor: what a search does with measurements alone.
class NoPrior final : public Evaluator {
 public:
  explicit NoPrior(Evaluator& inner) : inner_(inner) {}
  const DeviceInfo& device() const override { return inner_.device(); }
  std::string backend_name() const override { return inner_.backend_name(); }
  TimeKind kind() const override { return inner_.kind(); }
  TaskBaseline baseline(const Task& t) override { return inner_.baseline(t); }
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& c) override { return inner_.evaluate(t, c); }

 private:
  Evaluator& inner_;
};

Trace run_one(const Landscape& l, const std::string& strategy, uint64_t seed, const SearchOptions& o, bool prior,
              int ahead) {
  const Space space(l.variant(), l.fixed);
  auto s = make_strategy(strategy, space, o);
  ReplayEvaluator replay({&l});
  NoPrior bare(replay);
  Evaluator& ev = prior ? static_cast<Evaluator&>(replay) : bare;
  Trace trace;
  Tracker obs(l.best_us(), trace);
  Rng rng(Rng::mix(seed, 0xbe7c4));
  const Task task = l.task();
  TaskRun run(task, ev, space, *s, o.batch, rng, obs, l.baseline);
  const auto cap = static_cast<int64_t>(l.results.size());  // every legal configuration
  while (trace.to1 < 0 && run.outcome().evaluated < cap) {
    const int64_t left = cap - run.outcome().evaluated;
    const int64_t now = std::min<int64_t>(o.batch, left);
    if (!run.step(now, std::min<int64_t>(ahead * o.batch, left - now))) break;
  }
  return trace;
}

double median(std::vector<double> v) {
  if (v.empty()) return kInf;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Median best-so-far over the runs at budget b (a run that stopped early keeps its last value).
double median_at(const std::vector<Trace>& runs, size_t b) {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(r.best.empty() ? kInf : r.best[std::min(b, r.best.size()) - 1]);
  return median(v);
}

struct Summary {
  double to1 = 0, to5 = 0;
  double to1_q1 = 0, to1_q3 = 0;
  int reached1 = 0;
};

Summary summarize_runs(const std::vector<Trace>& runs, int64_t cap) {
  std::vector<double> a, b;
  Summary s;
  for (const auto& r : runs) {
    a.push_back(static_cast<double>(r.to1 < 0 ? cap + 1 : r.to1));
    b.push_back(static_cast<double>(r.to5 < 0 ? cap + 1 : r.to5));
    s.reached1 += r.to1 >= 0;
  }
  s.to1 = median(a);
  s.to5 = median(b);
  std::sort(a.begin(), a.end());
  s.to1_q1 = a[a.size() / 4];
  s.to1_q3 = a[a.size() * 3 / 4];
  return s;
}

// Gives the landscape's variant the launch geometry and model hints of its template, where the
// template's space is the landscape's (same knobs and values). Returns why not, or "".
std::string attach_template(Landscape& l, const std::filesystem::path& dir) {
  if (l.has_geometry()) return "";  // recorded with the file: the template may have changed since
  try {
    const auto p = load_problem(dir, l.problem.name);
    const auto& v = p.variant(l.variant().name);
    auto& mine = l.problem.variants.front();
    if (v.knobs.size() != mine.knobs.size()) return "its template's knobs differ";
    for (size_t i = 0; i < v.knobs.size(); ++i)
      if (v.knobs[i].name != mine.knobs[i].name || v.knobs[i].values != mine.knobs[i].values)
        return "its template's knob " + v.knobs[i].name + " differs";
    mine.launch = v.launch;
    mine.inflight_bytes = v.inflight_bytes;
    mine.registers = v.registers;
    l.problem.flops = p.flops;  // the model's FLOP and byte counts, as the task's problem has them
    l.problem.bytes = p.bytes;
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// Lists every knob's values of the landscape's variant in an order drawn from `seed`: the same space,
// listed as another template might list it. The search must not lean on the listing order.
void shuffle_values(Landscape& l, uint64_t seed) {
  Rng rng(seed);
  for (auto& k : l.problem.variants.front().knobs)
    for (size_t i = k.values.size(); i > 1; --i) std::swap(k.values[i - 1], k.values[rng.below(i)]);
}

// How well the prior alone ranks the landscape: Spearman's rho between predicted and measured times
// over the correct configurations, and the measured time of the model's top k over the best.
nlohmann::json model_ranking(const Landscape& l) {
  ReplayEvaluator ev({&l});
  const auto p = ev.predictor(l.task());
  if (!p) return nullptr;
  const Space space(l.variant(), l.fixed);
  std::vector<Config> configs;
  std::vector<double> measured;
  for (const auto& [key, r] : l.results)
    if (r.status == Status::ok || r.status == Status::slow) {
      configs.push_back(space.parse_key(key));
      measured.push_back(r.status == Status::ok ? r.time.median_us : kInf);
    }
  const std::vector<size_t> ks{1, 8, 24};
  const auto r = rank_agreement(p->predict(configs), measured, ks);
  nlohmann::json j{{"prior", p->describe()}, {"spearman_ok", r.rho}};
  for (size_t i = 0; i < ks.size(); ++i) j["top" + std::to_string(ks[i]) + "_over_best"] = r.top_over_best[i];
  return j;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const auto comma = std::min(s.find(',', at), s.size());
    if (comma > at) out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace

int bench_search_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune bench-search options");
  std::vector<std::string> files;
  int seeds = 25, batch = 8, ahead = 1;
  int64_t shuffle = -1;
  SearchOptions o;
  std::string strategies, templates;
  desc.add_options()("help,h", "this text")("landscape", po::value(&files)->multitoken(), "recorded landscapes (JSON)")(
      "seeds", po::value(&seeds)->default_value(25), "runs per strategy and landscape, seeds 0..N-1")(
      "strategies", po::value(&strategies), "comma-separated subset of the strategies (default: all)")(
      "batch", po::value(&batch)->default_value(8), "configurations per batch (as a real run compiles them)")(
      "ahead", po::value(&ahead)->default_value(1),
      "batches proposed ahead of the one measured (a run's dispatcher holds 1, a lone task 2)")(
      "screen", po::value(&o.screen)->default_value(o.screen), "candidates the pool's screen judges per proposal (1: none)")(
      "initial-candidates", po::value(&o.initial_candidates)->default_value(o.initial_candidates),
      "what a warm-up round's screen judges in all, before any result")(
      "templates", po::value(&templates), "templates folder the landscapes' launch geometry comes from, for the model's prior "
      "(default: ./templates, $SOLTUNE_TEMPLATES, or the installed ones)")(
      "no-prior", "run every strategy without the model's prior (measurements only)")(
      "shuffle-values", po::value(&shuffle),
      "list every knob's values in an order drawn from this seed (the same space as another template might list it)")(
      "json", "print the results as JSON (with each strategy's curve: the median best-so-far per budget)");
  const auto parsed = parse_command(desc, args, "bench-search", "--landscape FILE... --seeds N [--json]");
  if (!parsed) return 0;
  const auto& [vm, positional] = *parsed;
  for (const auto& p : positional) files.push_back(p);
  if (files.empty()) throw UsageError("bench-search needs --landscape FILE (one or more)");
  if (seeds < 1 || batch < 1 || ahead < 1 || o.screen < 1 || o.initial_candidates < 1)
    throw UsageError("--seeds, --batch, --ahead, --screen and --initial-candidates must be at least 1");
  const auto names = strategies.empty() ? kStrategies : split(strategies);
  for (const auto& n : names)
    if (!known_strategy(n)) throw UsageError("--strategies: unknown strategy '" + n + "' (expected one of " + strategy_names() + ")");
  o.batch = batch;
  const bool as_json = vm.count("json") > 0;
  const bool prior = vm.count("no-prior") == 0;
  const auto template_dir = templates.empty() ? default_templates() : std::filesystem::path(templates);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : files) {
    auto l = load_landscape(f);
    const auto why = prior ? attach_template(l, template_dir) : std::string("--no-prior");
    if (shuffle >= 0) shuffle_values(l, static_cast<uint64_t>(shuffle));
    const auto cap = static_cast<int64_t>(l.results.size());
    const auto name = std::filesystem::path(f).stem().string();
    std::map<std::string, std::vector<Trace>> traces;
    for (const auto& s : names) {
      std::vector<std::future<Trace>> runs;
      for (int seed = 0; seed < seeds; ++seed)
        runs.push_back(std::async(std::launch::async, [&, s, seed] { return run_one(l, s, static_cast<uint64_t>(seed), o, prior, ahead); }));
      for (auto& r : runs) traces[s].push_back(r.get());
    }
    const auto ranking = why.empty() ? model_ranking(l) : nlohmann::json(nullptr);
    // Every key under a landscape is a strategy ({"<landscape>": {"<strategy>": {...}}}): the prior's
    // analysis rides with soltune's entry, the strategy that uses it.
    if (traces.count("soltune")) out[name]["soltune"]["prior"] = ranking.is_null() ? nlohmann::json("none: " + why) : ranking;
    if (!as_json) {
      std::printf("%s: %s, %lld legal configurations, best %.2f us (T_ref %.2f, T_SOL %.2f), %d seeds, batch %d\n",
                  name.c_str(), l.task_id.c_str(), static_cast<long long>(cap), l.best_us(), l.baseline.t_ref_us,
                  l.baseline.t_sol_us, seeds, batch);
      if (ranking.is_null()) std::printf("  prior: none (%s)\n", why.c_str());
      else
        std::printf("  prior: %s; Spearman %.3f over the correct configurations; its top 1 / 8 / 24 at %.3f / %.3f / "
                    "%.3f x the best\n", ranking["prior"].get<std::string>().c_str(), ranking["spearman_ok"].get<double>(),
                    ranking["top1_over_best"].get<double>(), ranking["top8_over_best"].get<double>(),
                    ranking["top24_over_best"].get<double>());
      std::printf("  %-13s %14s %14s %18s\n", "strategy", "evals to 1%", "evals to 5%", "1%: quartiles");
    }
    // The curves run until every strategy's median is within 1% of the best (or a run ended).
    size_t horizon = 0;
    for (const auto& s : names)
      for (const auto& t : traces[s]) horizon = std::max(horizon, t.best.size());
    for (size_t b = 1; b <= horizon; ++b) {
      bool all = true;
      for (const auto& s : names) all = all && median_at(traces[s], b) <= l.best_us() * 1.01;
      if (all) {
        horizon = b;
        break;
      }
    }
    for (const auto& s : names) {
      const auto sum = summarize_runs(traces[s], cap);
      auto& j = out[name][s];
      j["evals_to_1pct"] = sum.to1;
      j["evals_to_5pct"] = sum.to5;
      j["evals_to_1pct_q1"] = sum.to1_q1;
      j["evals_to_1pct_q3"] = sum.to1_q3;
      j["runs"] = seeds;
      j["space"] = cap;
      auto curve = nlohmann::json::array();
      for (size_t b = 1; b <= horizon; ++b) {
        const double m = median_at(traces[s], b);
        curve.push_back(std::isfinite(m) ? nlohmann::json(m) : nlohmann::json(nullptr));
      }
      j["curve"] = curve;
      if (!as_json)
        std::printf("  %-13s %14.1f %14.1f %8.0f .. %6.0f\n", s.c_str(), sum.to1, sum.to5, sum.to1_q1, sum.to1_q3);
    }
    if (traces.count("soltune") && traces.count("random")) {
      // Never worse than random at any budget: the median best-so-far, budget by budget, until
      // random's median is within 1% of the best (past that both are at the best, within noise).
      const auto& a = traces["soltune"];
      const auto& r = traces["random"];
      size_t longest = 0;
      for (const auto* set : {&a, &r})
        for (const auto& t : *set) longest = std::max(longest, t.best.size());
      int64_t worse = 0, first_worse = -1;
      double worst_ratio = 1;
      for (size_t b = 1; b <= longest; ++b) {
        const double ms = median_at(a, b), mr = median_at(r, b);
        if (mr <= l.best_us() * 1.01) break;
        if (ms > mr) {
          ++worse;
          if (first_worse < 0) first_worse = static_cast<int64_t>(b);
          worst_ratio = std::max(worst_ratio, ms / mr);
        }
      }
      const double ratio = summarize_runs(a, cap).to5 / summarize_runs(r, cap).to5;
      auto& j = out[name]["soltune"];
      j["to_5pct_vs_random"] = ratio;
      j["budgets_worse_than_random"] = worse;
      j["first_budget_worse"] = first_worse;
      j["worst_ratio_to_random"] = worst_ratio;
      if (!as_json)
        std::printf("  soltune/random evals to 5%%: %.3f (target <= 0.25); budgets where soltune's median best was worse "
                    "than random's: %lld%s\n", ratio, static_cast<long long>(worse),
                    worse ? (" (first at " + std::to_string(first_worse) + ", up to " + std::to_string(worst_ratio) + "x)").c_str() : "");
    }
  }
  if (as_json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace soltune::cli
