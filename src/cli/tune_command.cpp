#include "cli/tune_command.hpp"

#include <boost/program_options.hpp>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "agents/dispatcher.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "cli/resume_loader.hpp"
#include "codegen/content_hash.hpp"
#include "codegen/signature_check.hpp"
#include "core/array_file.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/space.hpp"
#include "core/task.hpp"
#include "cli/backends.hpp"
#include "kb/knowledge_base.hpp"

namespace po = boost::program_options;

namespace soltune::cli {
namespace {

constexpr size_t kSeeds = 4;  // configurations from elsewhere proposed first in each task

// Records every baseline and result in the knowledge base as it completes, and shows progress.
class RunObserver final : public TaskObserver {
 public:
  RunObserver(KnowledgeBase& kb, int64_t run, Progress& p) : kb_(kb), run_(run), progress_(p) {}
  // Replayed baselines and results (a resumed run) are in the knowledge base already.
  void on_baseline(const Task& t, const TaskBaseline& b) override {
    if (!b.replayed) kb_.record_baseline(run_, t, b);
    progress_.baseline(t, b);
  }
  void on_seeds(const Task& t, size_t n, size_t presets) override { progress_.seeds(t, n, presets); }
  // Checkpoints are written as the run goes; a resumed run compares its rebuilt state with the one
  // recorded at the same point, which proves the replay exact (or says where it was not).
  void on_checkpoint(const Task& t, int64_t evaluated, const std::string& state) override {
    if (auto it = recorded_checkpoints.find(t.id()); it != recorded_checkpoints.end() && it->second.first == evaluated) {
      if (it->second.second == state) ++checkpoints_matched;
      else
        progress_.warning(t.id() + ": the resumed search differs from its checkpoint after " + std::to_string(evaluated) +
                          " evaluations (templates or soltune changed since?)");
    }
    kb_.save_checkpoint(run_, t.id(), evaluated, state);
  }
  std::map<std::string, std::pair<int64_t, std::string>> recorded_checkpoints;
  int checkpoints_matched = 0;
  void on_retime(const Task& t, const TaskBaseline& b, const EvalResult& best, const SolScore& s) override {
    kb_.record_baseline(run_, t, b);  // the re-timed T_ref, noted as such
    progress_.retime(t, b, best, s);
  }
  void on_demoted(const Task& t, const EvalResult& r) override {
    kb_.demote(run_, t, r.key, r.status, r.log.substr(0, r.log.find("; ")));
    progress_.warning("task " + t.id() + ": " + r.key + " is " + std::string(status_name(r.status)) + ": " + r.log);
  }
  void on_result(const Task& t, const EvalResult& r, const SolScore& s) override {
    if (!r.replayed) kb_.record(run_, t, content_hash(t.variant->source), r, s);
    if (r.status == Status::compile_error) {
      auto& [count, log] = compile_errors[t.id()];
      if (count++ == 0) log = r.log;
    }
    progress_.result(t, r, s);
  }
  // Per task id: how many candidates failed to compile, and the first one's compile log.
  std::map<std::string, std::pair<int64_t, std::string>> compile_errors;

 private:
  KnowledgeBase& kb_;
  int64_t run_;
  Progress& progress_;
};

// Every argument given as a file holds the dtype and the element count each task needs of it: a
// mismatch stops the run before anything is measured or recorded.
void check_given_data(const RunConfig& cfg) {
  std::string problems;
  std::set<std::string> seen;
  // Each file read once per dtype: its element count, or why it cannot be read as that dtype.
  std::map<std::pair<std::string, DType>, std::pair<int64_t, std::string>> files;
  for (const auto& t : config_tasks(cfg))
    for (const auto& a : t.problem->args) {
      if (a.file.empty()) continue;
      const DType dt = a.resolve_dtype(t.dtype);
      auto [it, fresh] = files.try_emplace({a.file.string(), dt});
      if (fresh) {
        try {
          it->second.first = read_array_file(a.file, a.file_raw, dt).elems;
        } catch (const Error& e) {
          it->second.second = e.what();
        }
      }
      Bindings sizes;
      for (const auto& [name, value] : t.shape.dims) sizes[name] = static_cast<double>(value);
      const int64_t want = buffer_elements(a, sizes);
      const auto& [elems, error] = it->second;
      const std::string why = !error.empty() ? error
                              : elems != want ? a.file.string() + ": " + std::to_string(elems) + " elements, '" + a.name +
                                                    "' needs " + std::to_string(want) + " at " + t.shape.key()
                                              : "";
      if (!why.empty() && seen.insert(why).second) problems += "\n" + why + " (" + t.id() + ")";
    }
  if (!problems.empty()) throw Error("arguments given as files do not fit the tasks:" + problems);
}

// Every shape's buffers fit the device, with a tenth left for the L2 flush, a candidate's scratch and
// the runtime: a shape that cannot stops the run before anything is measured or recorded.
void check_device_memory(const RunConfig& cfg, const DeviceInfo& d) {
  if (d.mem_bytes <= 0) return;
  std::string problems;
  std::set<std::string> seen;
  for (const auto& t : config_tasks(cfg)) {
    const double need = task_device_bytes(t, cfg.timing.input_sets);
    const std::string what = t.shape.key() + " " + std::string(dtype_name(t.dtype));
    if (need <= 0.9 * static_cast<double>(d.mem_bytes) || !seen.insert(what).second) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf, "\n%s needs %.1f GiB for its buffers, the reference's and the baseline's", what.c_str(),
                  need / (1 << 30));
    problems += buf;
  }
  if (!problems.empty()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: shapes too large for the %s (%.1f GiB, of which 90%% may hold a task):",
                  cfg.path.string().c_str(), d.name.c_str(), static_cast<double>(d.mem_bytes) / (1 << 30));
    throw Error(buf + problems);
  }
}

// Each variant's kernels against what it passes them, once per dtype, on a legal configuration of
// its first task: a mismatch stops the run before anything is measured or recorded.
void check_kernel_signatures(const RunConfig& cfg, const Compiler& compiler, const DeviceInfo& device) {
  std::set<std::pair<const VariantSpec*, DType>> done;
  std::string problems;
  for (const auto& t : config_tasks(cfg)) {
    if (!done.insert({t.variant, t.dtype}).second) continue;
    const Space space(*t.variant, t.fixed(device));
    Rng rng(cfg.seed);
    const auto c = space.sample(rng);
    if (!c) continue;  // no legal configuration here: the task says so itself
    const std::string arch = variant_arch(*t.variant, cfg.arch == "auto" ? device.arch() : cfg.arch);
    std::istringstream lines(check_signatures(compiler, *t.problem, *t.variant, t.dtype, space.bind(*c), arch));
    for (std::string line; std::getline(lines, line);)
      problems += "\n" + line + " (variant " + t.variant->name + ", " + std::string(dtype_name(t.dtype)) + ")";
  }
  if (!problems.empty())
    throw Error("kernel parameters do not take what the variants pass them (fix the kernel or the variant's args):" +
                problems);
}

// The command that continues this run as printed: the same program, config and options, and --resume.
std::string resume_command(const std::string& program, const std::vector<std::string>& args) {
  std::string s = shell_quote(program) + " tune";
  const std::string resume = "--resume";
  for (const auto& a : args)
    if (a.size() < 3 || resume.rfind(a, 0) != 0) s += " " + shell_quote(a);  // also an abbreviated --resume
  return s + " " + resume;
}

}  // namespace

int tune_command(const std::vector<std::string>& args, const std::string& command_line, const std::string& program) {
  po::options_description desc("soltune tune CONFIG options");
  std::string backend, kb_override, strategy;
  std::vector<std::string> landscape_files;
  int64_t evals = -1;
  double seconds = -1;
  int64_t seed = -1;
  int device = 0;
  double timeout_cap = 60;
  desc.add_options()("help,h", "this text")(
      "backend", po::value(&backend)->default_value("config"), "auto | cuda | model | replay (default: the config's)")(
      "landscape", po::value(&landscape_files)->multitoken(), "replay backend: recorded landscapes (tests/data/*landscape*)")(
      "strategy", po::value(&strategy), "search strategy (overrides the config): random, exhaustive, evolutionary, explorer, tuner, soltune")(
      "evals", po::value(&evals), "evaluation budget (overrides the config)")(
      "seconds", po::value(&seconds), "wall-time budget in seconds (overrides the config)")(
      "seed", po::value(&seed), "random seed (overrides the config)")(
      "kb", po::value(&kb_override), "knowledge base file (overrides the config)")(
      "device", po::value(&device)->default_value(0), "CUDA device index")(
      "timeout-cap", po::value(&timeout_cap)->default_value(60), "most seconds one candidate may take on the GPU")(
      "resume", "continue the last unfinished run of this config (same seed and budget)")(
      "no-wait", "fail at once when another run holds the GPU, instead of waiting for it")(
      "quiet,q", "print the summary only")(
      "check", "load and check the config and its templates, list the tasks, and tune nothing");
  std::vector<std::string> positional;
  const auto vm = parse_options(desc, args, positional, "tune");
  if (vm.count("help")) {
    std::printf("usage: soltune tune CONFIG [options]\n%s", to_string(desc).c_str());
    return 0;
  }
  if (positional.size() != 1) throw UsageError("tune takes exactly one CONFIG file\n" + to_string(desc));

  RunConfig cfg = load_run_config(positional[0]);
  if (backend == "config") backend = cfg.backend;
  if (backend != "auto" && backend != "cuda" && backend != "model" && backend != "replay")
    throw UsageError("--backend: expected auto, cuda, model or replay, got '" + backend + "'");
  if (!strategy.empty()) {
    if (!known_strategy(strategy))
      throw UsageError("--strategy: unknown strategy '" + strategy + "' (expected one of " + strategy_names() + ")");
    cfg.search.strategy = strategy;
  }
  std::vector<Landscape> landscapes;
  for (const auto& f : landscape_files) landscapes.push_back(load_landscape(f));
  if (backend == "replay" && kb_override.empty())
    throw UsageError("--backend replay needs --kb FILE: replayed results are kept apart from real measurements");
  // The same limits as the config's budget, refused the same way (as usage errors here).
  try {
    if (vm.count("evals")) cfg.budget.evals = checked_evals(evals, SourceLoc{"--evals"});
    if (vm.count("seconds")) cfg.budget.seconds = checked_seconds(seconds, SourceLoc{"--seconds"});
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (vm.count("seed")) {
    if (seed < 0) throw UsageError("--seed: expected a non-negative integer, got " + std::to_string(seed));
    cfg.seed = static_cast<uint64_t>(seed);
  }

  if (vm.count("check")) {
    // Everything a run reads before it measures, without a device or a knowledge base.
    const auto tasks = config_tasks(cfg);
    std::printf("%s: problem %s, %zu task(s), budget %s; loads and checks\n", cfg.path.string().c_str(),
                cfg.problem.c_str(), tasks.size(), cfg.budget.describe().c_str());
    for (const auto& t : tasks) std::printf("  %s\n", t.id().c_str());
    const auto gpu = find_known_gpu(cfg.model_gpu);
    check_given_data(cfg);
    check_device_memory(cfg, *gpu);
    check_kernel_signatures(cfg, Compiler(compiler_options()), *gpu);
    std::printf("kernel parameters take what the variants pass them\n");
    return 0;
  }
  Compiler compiler(compiler_options());
  if (!(timeout_cap > 0)) throw UsageError("--timeout-cap must be positive");
  auto ev = make_evaluator(backend, cfg, device, compiler, cfg.seed, timeout_cap, landscapes, vm.count("no-wait") == 0);
  check_given_data(cfg);
  check_device_memory(cfg, ev->device());
  check_kernel_signatures(cfg, compiler, ev->device());
  const auto path = kb_override.empty() ? kb_path(cfg, ev->device()) : std::filesystem::path(kb_override);
  auto kb = KnowledgeBase::open(path);  // before any tuning: a foreign file stops the run here
  const auto gpu = kb.gpu_id(ev->device(), ev->kind());
  RunInfo info{std::filesystem::weakly_canonical(cfg.path).string(), cfg.problem, cfg.seed, ev->backend_name(),
               "evals=" + std::to_string(cfg.budget.evals) + " seconds=" + std::to_string(cfg.budget.seconds),
               SOLTUNE_VERSION, command_line, toolchain(ev->device())};
  int64_t run = 0;
  RecordedRun recorded;
  Budget budget = cfg.budget;
  if (vm.count("resume")) {
    const auto last = kb.last_unfinished_run(info.config_path);
    if (!last) throw Error("--resume: " + path.string() + " holds no unfinished run of " + info.config_path);
    if (last->gpu_id != gpu || last->info.seed != info.seed || last->info.budget_text != info.budget_text ||
        last->info.backend != info.backend || last->info.toolchain != info.toolchain)
      throw Error("--resume: run " + std::to_string(last->id) + " was started on another GPU, backend or toolchain (" +
                  last->info.toolchain + "), or with seed " +
                  std::to_string(last->info.seed) + " and budget " + last->info.budget_text +
                  ": resume it with the same settings");
    run = last->id;
    recorded = load_recorded(kb, run);
    if (budget.seconds > 0) budget.seconds = std::max(1.0, budget.seconds - seconds_used(kb, *last));
    kb.reopen_run(run);
    std::printf("resuming run %lld: %zu task(s) with recorded results; they are replayed (marked *), not evaluated again\n",
                static_cast<long long>(run), recorded.results.size());
  } else {
    run = kb.begin_run(info, gpu);
  }
  for (const auto& v : cfg.spec.variants) kb.store_source(content_hash(v.source), v.source);

  ResumeEvaluator resumed(*ev, recorded);  // answers recorded configurations; a plain pass-through otherwise
  Progress progress(*ev, Progress::mode_for_stdout(vm.count("quiet") > 0));
  progress.header(cfg, path, budget);
  RunObserver obs(kb, run, progress);
  if (vm.count("resume")) obs.recorded_checkpoints = kb.checkpoints(run);
  Dispatcher dispatcher(cfg, resumed, obs);
  // A variant built for another GPU's architecture is left out, said so, and noted in the run.
  for (const auto& why : dispatcher.unavailable_variants()) {
    std::fprintf(stderr, "soltune: warning: %s: its tasks are skipped\n", why.c_str());
    kb.add_run_note(run, why + ": its tasks are skipped");
  }
  if (backend == "replay") {
    // Only the tasks a landscape records can be replayed; the others are named and skipped.
    std::set<std::string> recorded_tasks;
    for (const auto& l : landscapes) recorded_tasks.insert(l.task_id);
    dispatcher.include_only([recorded_tasks](const Task& t) { return recorded_tasks.count(t.id()) > 0; });
    if (dispatcher.tasks().empty()) throw Error("--backend replay: no task of " + cfg.path.string() + " has a landscape");
    std::string skipped;
    size_t n_skipped = 0;
    for (const auto& t : config_tasks(cfg))
      if (!recorded_tasks.count(t.id())) skipped += (n_skipped++ < 8 ? "\n  " + t.id() : "");
    if (n_skipped > 8) skipped += "\n  ... and " + std::to_string(n_skipped - 8) + " more";
    if (n_skipped)
      std::fprintf(stderr, "soltune: warning: --backend replay: %zu task(s) of %s have no landscape and are skipped:%s\n",
                   n_skipped, cfg.path.string().c_str(), skipped.c_str());
  }
  std::vector<TaskReport> reports;
  static std::atomic<bool> stop{false};
  struct sigaction sa {};
  sa.sa_handler = [](int) { stop.store(true); };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  try {
    reports = dispatcher.run(budget, cfg.seed, [&](const Task& t) {
      // Configurations of earlier runs are not proposed again; this run's own recorded ones are
      // replayed instead, so that the search retraces its steps.
      auto keys = kb.evaluated_keys(gpu, t, content_hash(t.variant->source), info.toolchain, info.backend);
      if (auto it = recorded.results.find(t.id()); it != recorded.results.end())
        for (const auto& [key, r] : it->second) keys.erase(key);
      return keys;
    }, &stop, [&](const Task& t) {
      // Seeds: the best configurations of earlier runs at other shapes or on other GPUs, and at this
      // shape as timed another way (an older soltune, a config's timing:).
      // After them, an edited template: the first seed of an earlier text with each knob value that
      // no result of an earlier text has (the values the edit added, or ones never reached).
      const auto hash = content_hash(t.variant->source);
      const auto seeds = kb.seeds(t, ev->device().name, hash, run, kSeeds, info.backend);
      std::vector<std::string> keys;
      for (const auto& r : seeds) keys.push_back(r.config_key);
      const auto older = std::find_if(seeds.begin(), seeds.end(), [&](const auto& r) { return r.source_hash != hash; });
      if (older != seeds.end()) {
        const Space space(*t.variant, t.fixed(ev->device()));
        try {
          for (const auto& c : space.with_new_values(space.parse_key(older->config_key), kb.knob_values_elsewhere(t, hash)))
            keys.push_back(space.key(c));
        } catch (const Error&) {
          // A key of knobs this text no longer has: nothing to vary.
        }
      }
      return keys;
    });
  } catch (const std::exception& e) {
    // An error of the machine (a full disk, a lost GPU, a broken worker), not of a candidate: what
    // the run recorded is kept, and --resume continues it once the cause is fixed. Marking it may
    // fail for the same cause; it then stays "running", which --resume continues too.
    try {
      kb.finish_run(run, "stopped");
    } catch (const std::exception&) {
    }
    throw Error(std::string(e.what()) + "\nsoltune: the run stopped; what it recorded is kept in " + path.string() +
                ". Once the cause is fixed, continue it with:\n  " + resume_command(program, args));
  }
  if (!obs.recorded_checkpoints.empty())
    std::printf("resume: %d of %zu recorded task checkpoint(s) matched the replayed search exactly\n",
                obs.checkpoints_matched, obs.recorded_checkpoints.size());
  if (stop.load()) {
    kb.finish_run(run, "interrupted");
    progress.summary(reports);
    std::fprintf(stderr, "soltune: interrupted; continue with: %s\n", resume_command(program, args).c_str());
    return 130;
  }
  // A template that does not compile at all is an error, not a result: a task whose every
  // candidate was a compile error fails the run, naming the source and the start of the log.
  const TaskReport* broken = nullptr;
  for (const auto& r : reports) {
    const auto it = obs.compile_errors.find(r.task.id());
    if (r.outcome.evaluated > 0 && it != obs.compile_errors.end() && it->second.first == r.outcome.evaluated) {
      broken = &r;
      break;
    }
  }
  kb.finish_run(run, broken ? "failed" : "finished");
  progress.summary(reports);
  if (broken) {
    std::string head;
    std::istringstream log(obs.compile_errors[broken->task.id()].second);
    std::string line;
    for (int i = 0; i < 12 && std::getline(log, line); ++i) head += "  " + line + "\n";
    std::fprintf(stderr, "soltune: error: %s: every candidate of task %s failed to compile; first compile log:\n%s",
                 broken->task.variant->source_path.string().c_str(), broken->task.id().c_str(), head.c_str());
    return 1;
  }
  progress.next_steps(program, path, cfg.problem);
  return 0;
}

}  // namespace soltune::cli
