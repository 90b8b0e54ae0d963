#include "core/run_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>

#include "core/fallback.hpp"
#include "core/rounds.hpp"
#include "core/yaml_util.hpp"

namespace soltune {

bool known_strategy(const std::string& name) {
  return std::find(kStrategies.begin(), kStrategies.end(), name) != kStrategies.end();
}

std::string strategy_names() {
  std::string names;
  for (const auto& k : kStrategies) names += (names.empty() ? "" : ", ") + k;
  return names;
}

std::string Budget::describe() const {
  std::string s;
  if (evals > 0) s = std::to_string(evals) + " evaluations";
  if (seconds > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
    s += (s.empty() ? "" : ", ") + std::string(buf);
  }
  return s;
}

std::vector<std::pair<std::string, std::string>> run_settings(const RunConfig& c) {
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  auto list = [](const auto& items, auto name) {
    std::string s;
    for (const auto& x : items) s += (s.empty() ? "" : " ") + name(x);
    return s.empty() ? std::string("all") : s;
  };
  const auto& s = c.search;
  const auto& t = c.stop;
  return {{"seed", std::to_string(c.seed)},
          {"budget.evals", c.budget.evals > 0 ? std::to_string(c.budget.evals) : "none"},
          {"budget.seconds", c.budget.seconds > 0 ? num(c.budget.seconds) : "none"},
          {"variants", list(c.variants, [](const std::string& v) { return v; })},
          {"dtypes", list(c.dtypes, [](DType d) { return std::string(dtype_name(d)); })},
          {"shapes", list(c.shapes, [](const Shape& x) { return "(" + x.key() + ")"; })},
          {"search.strategy", s.strategy},
          {"search.initial", std::to_string(s.initial)},
          {"search.population", std::to_string(s.population)},
          {"search.batch", std::to_string(s.batch)},
          {"search.mutation_rate", num(s.mutation_rate)},
          {"search.crossover_rate", num(s.crossover_rate)},
          {"search.screen", std::to_string(s.screen)},
          {"search.initial_candidates", std::to_string(s.initial_candidates)},
          {"stop.target_sol", num(t.target_sol)},
          {"stop.stagnation", std::to_string(t.stagnation)},
          {"stop.evals", std::to_string(t.evals)},
          {"stop.seconds", num(t.seconds)},
          {"stop.mode", t.all ? "all" : "any"}};
}

int64_t checked_evals(int64_t evals, const SourceLoc& where) {
  if (evals < 1) throw Error(where, "expected a positive number of evaluations, got " + std::to_string(evals));
  return evals;
}

double checked_seconds(double seconds, const SourceLoc& where) {
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", seconds);
    throw Error(where, std::string("expected a positive number of seconds, got ") + buf);
  }
  return seconds;
}

std::vector<Task> config_tasks(const RunConfig& c) {
  std::vector<Task> out;
  for (const auto& v : c.spec.variants) {
    if (!c.variants.empty() && std::find(c.variants.begin(), c.variants.end(), v.name) == c.variants.end()) continue;
    for (auto dt : c.dtypes)
      if (v.serves(dt))
        for (const auto& sh : c.shapes) out.push_back(Task{&c.spec, &v, dt, sh});
  }
  // The fallback, measured once per dtype at the smallest shape even where the run leaves its
  // variant out: export's kernel of last resort must have run and passed the checks. A fallback
  // that compiles a listed size in (matmul's trans_b) is measured at each of its values, unless a
  // task of the run already measures it there.
  const VariantSpec* fb = c.spec.fallback_variant();
  if (fb && !out.empty()) {
    const bool in_run = c.variants.empty() || std::find(c.variants.begin(), c.variants.end(), fb->name) != c.variants.end();
    for (auto dt : c.dtypes) {
      const auto cfg = fallback_config(*fb, dt);
      if (!fb->serves(dt) || !cfg) continue;
      const Shape* smallest = &c.shapes.front();
      for (const auto& sh : c.shapes)
        if (Task{&c.spec, fb, dt, sh}.bytes() < Task{&c.spec, fb, dt, *smallest}.bytes()) smallest = &sh;
      std::set<std::vector<int64_t>> measured;
      if (in_run)
        for (const auto& sh : c.shapes) measured.insert(fallback_class(c.spec, *fb, *cfg, sh));
      for (const auto& sh : fallback_shapes(c.spec, dt, *smallest))
        if (measured.insert(fallback_class(c.spec, *fb, *cfg, sh)).second) out.push_back(Task{&c.spec, fb, dt, sh, true});
    }
  }
  return out;
}

std::string slug(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

std::filesystem::path kb_path(const RunConfig& c, const DeviceInfo& d) {
  std::string p = c.kb;
  const std::string tag = "{gpu}";
  for (auto pos = p.find(tag); pos != std::string::npos; pos = p.find(tag)) p.replace(pos, tag.size(), slug(d.name));
  std::filesystem::path path(p);
  if (path.is_relative()) path = c.path.parent_path() / path;
  return path.lexically_normal();
}

RunConfig load_run_config(const std::filesystem::path& path) {
  auto n = yaml::load_file(path);
  n.only_keys({"problem", "variants", "dtypes", "shapes", "budget", "seed", "kb", "backend", "model_gpu", "arch",
               "templates", "search", "stop", "timing"});
  RunConfig c;
  c.path = path;
  const auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  c.problem = n.at("problem").str();
  c.templates_dir = n.has("templates") ? dir / n.at("templates").str() : dir / ".." / "templates";
  try {
    c.spec = load_problem(c.templates_dir, c.problem);
  } catch (const Error& e) {
    n.at("problem").fail(e.what());
  }
  if (n.has("variants"))
    for (const auto& v : n.at("variants").seq()) {
      try {
        c.spec.variant(v.str());
      } catch (const Error& e) {
        v.fail(e.what());
      }
      c.variants.push_back(v.str());
    }
  if (n.has("dtypes"))
    for (const auto& d : n.at("dtypes").seq()) {
      DType t;
      try {
        t = parse_dtype(d.str());
      } catch (const Error& e) {
        d.fail(e.what());
      }
      if (std::find(c.spec.dtypes.begin(), c.spec.dtypes.end(), t) == c.spec.dtypes.end())
        d.fail("problem '" + c.problem + "' does not support dtype " + d.str());
      c.dtypes.push_back(t);
    }
  if (c.dtypes.empty()) c.dtypes = c.spec.dtypes;
  // A variant named in the config must serve one of its dtypes, or it would silently do nothing.
  for (const auto& name : c.variants) {
    const auto& v = c.spec.variant(name);
    if (std::none_of(c.dtypes.begin(), c.dtypes.end(), [&](DType t) { return v.serves(t); })) {
      std::string served;
      for (auto t : v.dtypes) served += (served.empty() ? "" : ", ") + std::string(dtype_name(t));
      n.at("variants").fail("variant '" + name + "' serves " + served + ", none of the config's dtypes");
    }
  }
  for (const auto& s : n.at("shapes").seq()) {
    Shape sh;
    for (const auto& size : c.spec.sizes) {
      const auto opt = c.spec.size_options.find(size);
      const SizeOption* o = opt == c.spec.size_options.end() ? nullptr : &opt->second;
      if (o && o->def && !s.has(size)) {
        sh.dims.emplace_back(size, *o->def);
        continue;
      }
      auto v = s.at(size);
      if (o) {
        const auto value = o->parse(v.str());
        if (!value) v.fail("size '" + size + "' takes " + o->listing() + (o->doc.empty() ? "" : " (" + o->doc + ")") + ", got " + v.str());
        sh.dims.emplace_back(size, *value);
        continue;
      }
      const int64_t value = v.integer();
      if (value < 1) v.fail("size '" + size + "' must be positive, got " + v.str());
      sh.dims.emplace_back(size, value);
    }
    for (const auto& [k, v] : s.map_items())
      if (std::find(c.spec.sizes.begin(), c.spec.sizes.end(), k) == c.spec.sizes.end())
        v.fail("unknown size '" + k + "' for problem '" + c.problem + "'");
    if (const auto why = c.spec.broken_rule(Task{&c.spec, nullptr, c.dtypes.front(), sh}.sizes()); !why.empty())
      s.fail("problem '" + c.problem + "' refuses this shape: " + why);
    // A range's bounds are expressions over the sizes: each must give a magnitude for this shape.
    for (auto dt : c.dtypes)
      for (const auto& a : c.spec.args)
        if (a.range.narrowed()) try {
            (void)round_draw(a, a.resolve_dtype(dt), kFullRangeRound, Task{&c.spec, nullptr, dt, sh}.sizes());
          } catch (const Error& e) {
            s.fail(e.what());
          }
    // A scalar carries its size into the kernels in its own dtype: a value past that would wrap.
    for (auto dt : c.dtypes) {
      const auto sizes = Task{&c.spec, nullptr, dt, sh}.sizes();
      for (const auto& a : c.spec.args) {
        const DType sd = a.resolve_dtype(dt);
        if (a.is_buffer || dtype_is_float(sd)) continue;
        const double v = a.value.eval(sizes);
        if (const auto r = dtype_int_range(sd); !r.holds(v)) {
          char buf[240];
          std::snprintf(buf, sizeof buf, "scalar '%s' = %.17g at this shape overflows its dtype %s (%.17g to %.17g)",
                        a.name.c_str(), v, std::string(dtype_name(sd)).c_str(), r.min, r.end - 1);
          s.fail(buf);
        }
      }
    }
    c.shapes.push_back(std::move(sh));
  }
  if (c.shapes.empty()) n.at("shapes").fail("at least one shape is needed");
  auto b = n.at("budget");
  b.only_keys({"evals", "seconds"});
  // What is given must be a limit: a positive count or time (leave a key out for "no limit").
  if (b.has("evals")) c.budget.evals = checked_evals(b.at("evals").integer(), b.at("evals").loc());
  if (b.has("seconds")) c.budget.seconds = checked_seconds(b.at("seconds").number(), b.at("seconds").loc());
  if (c.budget.evals == 0 && c.budget.seconds == 0) b.fail("the budget needs evals or seconds (or both)");
  c.seed = static_cast<uint64_t>(n.int_or("seed", 0, 0, INT64_MAX));
  c.kb = n.str_or("kb", "soltune-{gpu}.sqlite");
  c.backend = n.str_or("backend", "auto");
  if (c.backend != "auto" && c.backend != "cuda" && c.backend != "model")
    n.at("backend").fail("expected backend auto, cuda or model, got '" + c.backend + "'");
  c.model_gpu = n.str_or("model_gpu", "H200");
  if (!find_known_gpu(c.model_gpu))
    n.at("model_gpu").fail("unknown GPU '" + c.model_gpu + "' (known: " + known_gpu_names() + ")");
  c.arch = n.str_or("arch", "auto");
  if (c.arch != "auto" && (c.arch.rfind("sm_", 0) != 0 || c.arch.size() < 5))
    n.at("arch").fail("expected auto or sm_XY, got '" + c.arch + "'");
  if (n.has("stop")) {
    auto s = n.at("stop");
    s.only_keys({"target_sol", "stagnation", "evals", "seconds", "mode"});
    c.stop.target_sol = s.number_or("target_sol", 0);
    c.stop.stagnation = s.int_or("stagnation", 0, 0, INT64_MAX);
    c.stop.evals = s.int_or("evals", 0, 0, INT64_MAX);
    c.stop.seconds = s.number_or("seconds", 0);
    const auto mode = s.str_or("mode", "any");
    if (mode != "any" && mode != "all") s.at("mode").fail("expected any or all, got '" + mode + "'");
    c.stop.all = mode == "all";
    if (c.stop.target_sol < 0 || c.stop.target_sol > 1.05) s.fail("target_sol must lie in [0, 1.05]");
    if (c.stop.stagnation < 0 || c.stop.evals < 0 || c.stop.seconds < 0)
      s.fail("stagnation, evals and seconds must not be negative");
  }
  if (n.has("search")) {
    auto s = n.at("search");
    s.only_keys({"initial", "population", "batch", "mutation_rate", "crossover_rate", "screen", "initial_candidates", "strategy"});
    c.search.strategy = s.str_or("strategy", c.search.strategy);
    if (!known_strategy(c.search.strategy))
      s.at("strategy").fail("unknown strategy '" + c.search.strategy + "' (expected one of " + strategy_names() + ")");
    // Bounded so that no value wraps when it becomes an int; far above anything useful.
    constexpr int64_t kMost = 1 << 20;
    c.search.initial = static_cast<int>(s.int_or("initial", c.search.initial, 1, kMost));
    c.search.population = static_cast<int>(s.int_or("population", c.search.population, 1, kMost));
    c.search.batch = static_cast<int>(s.int_or("batch", c.search.batch, 1, kMost));
    c.search.screen = static_cast<int>(s.int_or("screen", c.search.screen, 1, kMost));
    c.search.initial_candidates = static_cast<int>(s.int_or("initial_candidates", c.search.initial_candidates, 1, kMost));
    c.search.mutation_rate = s.number_or("mutation_rate", c.search.mutation_rate);
    c.search.crossover_rate = s.number_or("crossover_rate", c.search.crossover_rate);
    if (c.search.initial < 1 || c.search.population < 1 || c.search.batch < 1 || c.search.screen < 1 ||
        c.search.initial_candidates < 1)
      s.fail("initial, population, batch, screen and initial_candidates must be at least 1");
    if (c.search.mutation_rate < 0 || c.search.mutation_rate > 1 || c.search.crossover_rate < 0 ||
        c.search.crossover_rate > 1)
      s.fail("rates must lie in [0, 1]");
  }
  if (n.has("timing")) {
    auto t = n.at("timing");
    t.only_keys({"gate", "settle_us", "input_sets", "flush_mib"});
    if (t.has("gate")) c.timing.gate = t.at("gate").boolean();
    c.timing.settle_us = t.number_or("settle_us", c.timing.settle_us);
    c.timing.input_sets = static_cast<int>(t.int_or("input_sets", c.timing.input_sets, INT32_MIN, INT32_MAX));
    if (c.timing.settle_us < 0 || c.timing.settle_us > 100000) t.at("settle_us").fail("settle_us must lie in [0, 100000]");
    if (c.timing.input_sets < 0 || c.timing.input_sets > 8)
      t.at("input_sets").fail("input_sets must lie in [0, 8] (0: one set, the default)");
    c.timing.flush_mib = t.number_or("flush_mib", c.timing.flush_mib);
    if (c.timing.flush_mib != 0 && (c.timing.flush_mib < 1 || c.timing.flush_mib > 65536))
      t.at("flush_mib").fail("flush_mib must be 0 (four times L2, at least 256 MiB) or lie in [1, 65536]");
  }
  return c;
}

std::string TimingOptions::describe() const {
  std::string s;
  auto add = [&](const char* format, double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, format, v);
    s += (s.empty() ? "" : ", ") + std::string(buf);
  };
  if (!gate) s = "gate off";
  if (settle_us > 0) add("settle %g us", settle_us);
  if (input_sets > 0) add(input_sets == 1 ? "%g input set" : "%g input sets", input_sets);
  if (flush_mib > 0) add("flush %g MiB", flush_mib);
  return s;
}

}  // namespace soltune
