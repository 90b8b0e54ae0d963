// soltune landscape: the exhaustive mode. Every legal configuration of one task is compiled,
// checked and timed, in the space's canonical order, and the whole landscape is written as JSON
// for the replay backend and bench-search (docs/LANDSCAPES.md).
#include "cli/landscape_command.hpp"

#include <boost/program_options.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "cli/options.hpp"
#include "cli/backends.hpp"
#include "core/landscape.hpp"
#include "core/output_file.hpp"

namespace po = boost::program_options;

namespace soltune::cli {

namespace {

const Task& pick_task(const std::vector<Task>& tasks, const std::string& variant, const std::string& dtype,
                      const std::string& shape) {
  const Task* found = nullptr;
  std::string ids;
  for (const auto& t : tasks) {
    ids += "\n  " + t.id();
    if ((!variant.empty() && t.variant->name != variant) || (!dtype.empty() && dtype_name(t.dtype) != dtype) ||
        (!shape.empty() && t.shape.key() != shape))
      continue;
    if (found) throw UsageError("--variant, --dtype and --shape must pick one task; several match:" + ids);
    found = &t;
  }
  if (!found) throw UsageError("no task matches --variant/--dtype/--shape; the config's tasks:" + ids);
  return *found;
}

}  // namespace

int landscape_command(const std::vector<std::string>& args, const std::string& command_line) {
  po::options_description desc("soltune landscape CONFIG options");
  std::string out, variant, dtype, shape, backend = "cuda";
  int batch = 48, device = 0;
  double timeout_cap = 60;
  desc.add_options()("help,h", "this text")("output,o", po::value(&out), "the landscape file to write (JSON)")(
      "variant", po::value(&variant), "the variant (needed when the problem has several)")(
      "dtype", po::value(&dtype), "the dtype (f32, bf16...)")("shape", po::value(&shape), "the shape, e.g. n=268435456")(
      "batch", po::value(&batch)->default_value(48), "configurations compiled together")(
      "backend", po::value(&backend)->default_value("cuda"), "cuda, or model (predicted times, for tests; labelled)")(
      "resume", "continue the partial landscape FILE (a recording cut short): measure only what it lacks")(
      "count", "print the number of legal configurations of every task of CONFIG, and measure nothing")(
      "device", po::value(&device)->default_value(0), "CUDA device index")(
      "timeout-cap", po::value(&timeout_cap)->default_value(60), "most seconds one candidate may take on the GPU")(
      "no-wait", "fail at once when another run holds the GPU, instead of waiting for it")(
      "force", "replace a landscape FILE already holds (a recording is hours of GPU time: refused otherwise)");
  const auto parsed = parse_command(desc, args, "landscape",
                                    "CONFIG -o FILE [--variant V] [--dtype D] [--shape KEY] [--resume]\n"
                                    "Measures every legal configuration of one task of CONFIG on the GPU.");
  if (!parsed) return 0;
  const auto& [vm, positional] = *parsed;
  if (positional.size() != 1 || (out.empty() && !vm.count("count"))) throw UsageError("landscape takes one CONFIG and -o FILE\n" + to_string(desc));
  if (batch < 1) throw UsageError("--batch must be at least 1");
  if (backend != "cuda" && backend != "model") throw UsageError("--backend: expected cuda or model, got '" + backend + "'");
  RunConfig cfg = load_run_config(positional[0]);
  cfg.search.strategy = "exhaustive";
  if (vm.count("count")) {  // legality on the config's model GPU: no device needed
    const auto dev = *find_known_gpu(cfg.model_gpu);
    std::printf("legal on %s: every constraint, and each launch within %d threads and %d KiB of dynamic shared memory a "
                "block\n",
                dev.name.c_str(), dev.max_threads_per_block, dev.smem_per_block_optin / 1024);
    for (const auto& t : config_tasks(cfg)) {
      const Space space(*t.variant, t.fixed(dev));
      std::printf("%-56s %8zu legal of %.0f\n", t.id().c_str(), space.all_legal().size(), space.cardinality());
    }
    return 0;
  }
  // A recording already at FILE is continued (--resume) or replaced (--force), never overwritten by
  // default: decided before any GPU work.
  // A stream (standard output, a pipe, a FIFO) has nothing to continue or keep: the recording goes
  // there once, whole, at its end.
  const bool stream = !out.empty() && is_stream_output(out);
  if (stream && vm.count("resume"))
    throw UsageError("--resume continues a landscape file; " + out + " is a stream (standard output, a pipe or a FIFO)");
  if (!stream && !vm.count("resume") && !vm.count("force") && std::filesystem::exists(out)) {
    std::string what = "a file";
    try {
      const auto old = load_landscape(out, true);
      what = std::string(old.complete() ? "a complete" : "a partial") + " landscape of " + old.task_id + " (" +
             std::to_string(old.results.size()) + " of " + std::to_string(old.legal) + " measured on " + old.gpu + ")";
    } catch (const Error&) {
      // Not a landscape: any file is kept all the same.
    }
    throw UsageError(out + " already holds " + what + ": --resume continues a partial one, --force replaces it, "
                     "or give another -o");
  }
  Compiler compiler(compiler_options());
  auto ev = make_evaluator(backend, cfg, device, compiler, cfg.seed, timeout_cap, {}, vm.count("no-wait") == 0);
  const auto tasks = config_tasks(cfg);
  const Task& t = pick_task(tasks, variant, dtype, shape);

  const Space space(*t.variant, t.fixed(ev->device()));
  const auto all = space.enumerate_legal(1u << 22);
  std::fprintf(stderr, "landscape %s: %zu legal configurations of %.0f\n", t.id().c_str(), all.size(), space.cardinality());
  // Predictions do not depend on how candidates would be timed: only measurements record it.
  const std::string timing = ev->kind() == TimeKind::measured ? cfg.timing.describe() : "";
  Landscape l;
  if (!stream && vm.count("resume") && std::filesystem::exists(out)) {
    l = load_landscape(out, true);
    if (l.task_id != t.id() || l.gpu != ev->device().name || l.legal != all.size())
      throw UsageError(out + ": --resume continues the same task on the same GPU; it holds " + l.task_id + " on " +
                       l.gpu + " (" + std::to_string(l.legal) + " legal), this is " + t.id() + " on " +
                       ev->device().name + " (" + std::to_string(all.size()) + " legal)");
    if (l.timing != timing)
      throw UsageError(out + ": --resume continues with the same timing; it was measured with '" +
                       (l.timing.empty() ? "soltune's default" : l.timing) + "', the config now says '" +
                       (timing.empty() ? "soltune's default" : timing) + "'");
    l.command += " ; resumed: " + command_line;
    std::fprintf(stderr, "resuming: %zu of %zu measured\n", l.results.size(), all.size());
  } else {
    l.task_id = t.id();
    l.gpu = ev->device().name;
    l.kind = ev->kind();
    l.recorded = utc_now();
    l.command = command_line;
    l.toolchain = toolchain(ev->device());
    l.timing = timing;
    l.dtype = t.dtype;
    l.shape = t.shape;
    l.problem.name = t.problem->name;
    l.problem.sizes = t.problem->sizes;
    l.problem.dtypes = {t.dtype};
    l.problem.variants.push_back(*t.variant);  // with its launch geometry and model hints
    l.problem.flops = t.problem->flops;
    l.problem.bytes = t.problem->bytes;
    l.fixed = t.fixed(ev->device());
    l.legal = all.size();
    l.baseline = ev->baseline(t);
  }
  // What is left, in canonical order, in batches; the file is rewritten (atomically) after each
  // batch, so a recording cut short by a deadline or a crash resumes where it stopped.
  std::vector<Config> todo;
  for (const auto& c : all)
    if (!l.results.count(space.key(c))) todo.push_back(c);
  const auto start = std::chrono::steady_clock::now();
  const auto slice = [&](size_t at) {
    return std::vector<Config>(todo.begin() + static_cast<long>(at),
                               todo.begin() + static_cast<long>(std::min(todo.size(), at + static_cast<size_t>(batch))));
  };
  for (size_t at = 0; at < todo.size(); at += static_cast<size_t>(batch)) {
    if (at + static_cast<size_t>(batch) < todo.size()) ev->prefetch(t, slice(at + static_cast<size_t>(batch)));
    for (auto& r : ev->evaluate(t, slice(at))) l.results.emplace(r.key, std::move(r));
    if (!stream) save_landscape(l, out);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "  %zu/%zu evaluated, %.0f s, best %.2f us\n", l.results.size(), all.size(), s, l.best_us());
  }
  if (todo.empty() || stream) save_landscape(l, out);  // otherwise the last batch wrote it
  size_t ok = 0;
  for (const auto& [k, r] : l.results) ok += r.status == Status::ok;
  // Beside a recording on standard output, the line goes to stderr.
  std::fprintf(report_stream(out), "%s: %zu configurations (%zu ok), best %.2f us, T_ref %.2f us, T_SOL %.2f us -> %s\n", t.id().c_str(),
              l.results.size(), ok, l.best_us(), l.baseline.t_ref_us, l.baseline.t_sol_us, out.c_str());
  return 0;
}

}  // namespace soltune::cli
