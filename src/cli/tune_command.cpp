#include "cli/tune_command.hpp"

#include <boost/program_options.hpp>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>

#include "cli/backends.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "cli/report_command.hpp"
#include "core/error.hpp"
#include "core/task.hpp"
#include "eval/cost_estimate.hpp"
#include "run/preflight.hpp"
#include "run/tune.hpp"

namespace po = boost::program_options;

namespace soltune::cli {
namespace {

// What the run reports, shown as it happens.
class ProgressView final : public TaskObserver {
 public:
  explicit ProgressView(Progress& p) : p_(p) {}
  void on_baseline(const Task& t, const TaskBaseline& b) override { p_.baseline(t, b); }
  void on_seeds(const Task& t, size_t n, size_t presets) override { p_.seeds(t, n, presets); }
  void on_retime(const Task& t, const TaskBaseline& b, const EvalResult& best, const SolScore& s) override {
    p_.retime(t, b, best, s);
  }
  void on_demoted(const Task& t, const EvalResult& r) override {
    p_.warning("task " + t.id() + ": " + r.key + " is " + std::string(status_name(r.status)) + ": " + r.log);
  }
  void on_result(const Task& t, const EvalResult& r, const SolScore& s) override { p_.result(t, r, s); }
  void on_warning(const Task&, const std::string& text) override { p_.warning(text); }

 private:
  Progress& p_;
};

// The replay backend runs only the tasks a landscape records; the others are named and skipped.
std::set<std::string> replay_tasks(const RunConfig& cfg, const std::vector<Landscape>& landscapes) {
  std::set<std::string> recorded;
  for (const auto& l : landscapes) recorded.insert(l.task_id);
  std::string skipped;
  size_t n_skipped = 0, n_kept = 0;
  for (const auto& t : config_tasks(cfg)) {
    if (recorded.count(t.id())) {
      ++n_kept;
      continue;
    }
    skipped += (n_skipped++ < 8 ? "\n  " + t.id() : "");
  }
  if (n_kept == 0) throw Error("--backend replay: no task of " + cfg.path.string() + " has a landscape");
  if (n_skipped > 8) skipped += "\n  ... and " + std::to_string(n_skipped - 8) + " more";
  if (n_skipped)
    std::fprintf(stderr, "soltune: warning: --backend replay: %zu task(s) of %s have no landscape and are skipped:%s\n",
                 n_skipped, cfg.path.string().c_str(), skipped.c_str());
  return recorded;
}

// The command that continues this run as printed: the same program, config and options, and --resume.
std::string resume_command(const std::string& program, const std::vector<std::string>& args) {
  std::string s = shell_quote(program) + " tune";
  const std::string resume = "--resume";
  for (const auto& a : args)
    if (a.size() < 3 || resume.rfind(a, 0) != 0) s += " " + shell_quote(a);  // also an abbreviated --resume
  return s + " " + resume;
}

// What the run expects its first steps to take, before it measures anything (eval/cost_estimate).
void print_estimate(const RunEstimate& e) {
  std::printf("expected before measuring (from the ceilings, not measured): %zu baseline(s) about %.1f s, each task's "
              "first evaluation about %.1f s for %zu tasks; the costliest, %s, about %.2f s an evaluation\n",
              e.baselines, e.baseline_s, e.first_s, e.tasks, e.costliest.c_str(), e.costliest_s);
}

}  // namespace

int tune_command(const std::vector<std::string>& args, const std::string& command_line, const std::string& program) {
  const auto began = std::chrono::steady_clock::now();  // a time budget counts from here
  po::options_description desc("soltune tune CONFIG options");
  std::string backend, kb_override, strategy, report_path;
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
      "quiet,q", "print the summary only")("report", po::value(&report_path),
                                             "write the run's knowledge base as an HTML report here at the end (soltune report)")(
      "check", "load and check the config and its templates, list the tasks, and tune nothing");
  const auto parsed = parse_command(desc, args, "tune", "CONFIG [options]");
  if (!parsed) return 0;
  const auto& [vm, positional] = *parsed;
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
  cfg.budget.clock_start = began;
  if (vm.count("seed")) {
    if (seed < 0) throw UsageError("--seed: expected a non-negative integer, got " + std::to_string(seed));
    cfg.seed = static_cast<uint64_t>(seed);
  }

  if (vm.count("check")) {
    // Everything a run reads before it measures, without a device or a knowledge base.
    // The verdict once, after every check: a check that fails exits 1 with its error instead.
    const auto tasks = config_tasks(cfg);
    std::printf("%s: problem %s, %zu task(s), budget %s\n", cfg.path.string().c_str(), cfg.problem.c_str(), tasks.size(),
                cfg.budget.describe().c_str());
    for (const auto& t : tasks) std::printf("  %s\n", t.id().c_str());
    std::fflush(stdout);
    const auto gpu = find_known_gpu(cfg.model_gpu);
    check_given_data(cfg);
    check_device_memory(cfg, *gpu);
    check_kernel_signatures(cfg, Compiler(compiler_options()), *gpu);  // to its end, whatever the budget
    std::printf("%s loads and checks: its data, the device memory it needs, and kernel parameters that take what "
                "the variants pass them\n", cfg.path.string().c_str());
    return 0;
  }
  Compiler compiler(compiler_options());
  if (!(timeout_cap > 0)) throw UsageError("--timeout-cap must be positive");
  auto ev = make_evaluator(backend, cfg, device, compiler, cfg.seed, timeout_cap, landscapes, vm.count("no-wait") == 0);
  check_given_data(cfg);
  check_device_memory(cfg, ev->device());
  check_kernel_signatures(cfg, compiler, ev->device(), cfg.budget.deadline());
  TuneRequest req;
  req.kb = kb_override.empty() ? kb_path(cfg, ev->device()) : std::filesystem::path(kb_override);
  req.info = describe_run(cfg, ev->backend_name(), toolchain(ev->device()), command_line);
  req.resume = vm.count("resume") > 0;
  req.resume_hint = resume_command(program, args);
  if (backend == "replay") req.only_tasks = replay_tasks(cfg, landscapes);
  req.cfg = cfg;
  const auto config_path = req.info.config_path;
  TuneRun run(std::move(req), *ev);
  if (vm.count("resume")) {
    std::printf("resuming run %lld: %zu task(s) with recorded results; they are replayed (marked *), not evaluated again\n",
                static_cast<long long>(run.id()), run.resumed_tasks());
    if (run.resumed_config() != config_path)
      std::printf("the run was started from %s, with the settings of this config\n", run.resumed_config().c_str());
  }

  Progress progress(*ev, Progress::mode_for_stdout(vm.count("quiet") > 0));
  progress.header(cfg, run.kb_path(), run.budget());
  if (ev->backend_name().rfind("cuda", 0) == 0 && vm.count("quiet") == 0) print_estimate(estimate_run(cfg, ev->device()));
  for (const auto& why : run.left_out()) std::fprintf(stderr, "soltune: warning: %s: its tasks are skipped\n", why.c_str());
  ProgressView view(progress);
  static std::atomic<bool> stop{false};
  // Ctrl-C, a kill or a closed terminal end the batch in flight, mark the run interrupted and exit
  // 128 + the signal's number, as a shell reports a process that signal stopped.
  static std::atomic<int> signal_seen{0};
  struct sigaction sa {};
  sa.sa_handler = [](int sig) {
    signal_seen.store(sig);
    stop.store(true);
  };
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  const auto out = run.run(view, &stop);
  if (out.checkpoints_recorded > 0)
    std::printf("resume: %d of %zu recorded task checkpoint(s) matched the replayed search exactly\n",
                out.checkpoints_matched, out.checkpoints_recorded);
  progress.summary(out.reports);
  if (!report_path.empty() && out.end != TuneOutcome::End::interrupted) {
    // What the run found and what failed, this problem on this GPU, whatever the run's outcome.
    report::ReportOptions o;
    o.problem = cfg.problem;
    o.gpu = ev->device().name;
    o.templates = cfg.templates_dir;
    write_report(run.kb_path(), o, report_path);
  }
  if (out.end == TuneOutcome::End::interrupted) {
    const int sig = signal_seen.load();
    if (sig != SIGINT) std::fprintf(stderr, "soltune: %s\n", strsignal(sig));
    std::fprintf(stderr, "soltune: interrupted; continue with: %s\n", resume_command(program, args).c_str());
    return 128 + sig;
  }
  if (out.broken) {
    // A template that does not compile at all: the source and the start of the first log.
    std::string head;
    std::istringstream log(out.broken->first_log);
    std::string line;
    for (int i = 0; i < 12 && std::getline(log, line); ++i) head += "  " + line + "\n";
    std::fprintf(stderr, "soltune: error: %s: every candidate of task %s failed to compile; first compile log:\n%s",
                 out.broken->source.string().c_str(), out.broken->task_id.c_str(), head.c_str());
    return 1;
  }
  // A run in which no task found a valid configuration has nothing to export: it failed.
  if (std::none_of(out.reports.begin(), out.reports.end(), [](const TaskReport& r) { return r.outcome.best.has_value(); })) {
    std::fprintf(stderr, "soltune: error: no task of %s found a valid configuration (the summary says why, per task); "
                 "nothing to export\n", cfg.path.string().c_str());
    return 1;
  }
  progress.next_steps(program, run.kb_path(), cfg.problem);
  return 0;
}

}  // namespace soltune::cli
