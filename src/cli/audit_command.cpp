#include "cli/audit_command.hpp"
#include "run/fallback_pick.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "cli/backends.hpp"
#include "run/export_earlier.hpp"
#include "run/export_plan.hpp"
#include "cli/options.hpp"
#include "codegen/content_hash.hpp"
#include "eval/cuda_devices.hpp"
#include "eval/gpu_lock.hpp"
#include "eval/sanitizer_audit.hpp"

namespace po = boost::program_options;

namespace soltune::cli {

namespace {

struct Counts {
  int passed = 0, failed = 0, not_audited = 0, skipped = 0;
};

void audit_problem(KnowledgeBase& kb, const std::string& problem, const std::filesystem::path& templates,
                   const std::string& gpu_filter, const DeviceInfo& dev, const AuditOptions& opt, const Compiler& compiler,
                   bool again, Counts& n) {
  const auto spec = load_problem(templates, problem);
  std::vector<std::string> hashes;
  for (const auto& v : spec.variants) hashes.push_back(content_hash(v.source));
  std::vector<ResultRecord> picks;
  std::set<std::string> dtypes;
  for (const auto& [group, r] : fastest_per_shape(kb.best(problem, gpu_filter, hashes), false)) {
    picks.push_back(r);
    dtypes.insert(r.dtype);
  }
  if (picks.empty()) {
    std::printf("%s: no measured result of today's templates to audit\n", problem.c_str());
    return;
  }
  // Each exported dtype's fallback too, where it is not one of the tuned picks already.
  for (const auto& d : dtypes)
    for (auto& fb : fallback_picks(kb, spec, parse_dtype(d), gpu_filter, false))
      if (std::none_of(picks.begin(), picks.end(), [&](const ResultRecord& r) { return r.id == fb.id; })) picks.push_back(fb);
  for (const auto& r : picks) {
    const std::string what = problem + " " + r.variant + " " + r.dtype + " " + r.shape_key + " " + r.config_key;
    if (r.gpu_name != dev.name) {
      std::printf("%s: tuned on %s, this machine has %s: not audited here\n", what.c_str(), r.gpu_name.c_str(),
                  dev.name.c_str());
      ++n.not_audited;
      continue;
    }
    const auto before = audits_of(kb, spec, r);
    if (!again && kernel_verdict(before) != AuditVerdict::not_audited) {
      std::printf("%s: audited before: %s\n", what.c_str(), audit_summary(before).c_str());
      ++n.skipped;
      continue;
    }
    const auto& v = spec.variant(r.variant);
    const Task t{&spec, &v, parse_dtype(r.dtype), parse_shape(spec, r.shape_key)};
    const auto config = Space(v, Bindings{}).parse_key(r.config_key);
    std::printf("%s: auditing under compute-sanitizer...\n", what.c_str());
    std::fflush(stdout);
    const auto tools = audit_kernel(compiler, opt, dev, t, config);
    kb.record_audit(r, content_hash(v.source), toolchain(dev), tools);
    const auto verdict = kernel_verdict(tools);
    std::printf("  %s: %s\n", std::string(audit_verdict_name(verdict)).c_str(), audit_summary(tools).c_str());
    for (const auto& a : tools)
      if (a.verdict != AuditVerdict::passed && !a.log.empty()) {
        std::string indented = a.log;
        for (size_t i = indented.find('\n'); i != std::string::npos; i = indented.find('\n', i + 1)) indented.insert(i + 1, "      ");
        std::printf("    %s: %s\n", a.tool.c_str(), indented.c_str());
      }
    (verdict == AuditVerdict::passed ? n.passed : verdict == AuditVerdict::failed ? n.failed : n.not_audited)++;
  }
}

}  // namespace

int audit_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune audit options");
  std::string kb_path, problem, gpu, templates, tools_text;
  int device = 0;
  double timeout = 900;
  desc.add_options()("help,h", "this text")("kb", po::value(&kb_path), "knowledge base file (required)")(
      "problem", po::value(&problem), "audit this problem only (default: every problem in the knowledge base)")(
      "gpu", po::value(&gpu)->default_value(""), "GPU name fragment (default: any)")(
      "templates", po::value(&templates), "templates folder (default: ./templates, $SOLTUNE_TEMPLATES, or the installed ones)")(
      "tools", po::value(&tools_text)->default_value("memcheck,racecheck,synccheck,initcheck"),
      "the compute-sanitizer tools to run, comma-separated")(
      "device", po::value(&device)->default_value(0), "CUDA device to audit on")(
      "timeout", po::value(&timeout)->default_value(900), "seconds per kernel and tool")(
      "again", "audit kernels that have a verdict already")(
      "no-wait", "fail at once when another run holds the GPU, instead of waiting for it");
  const auto parsed = parse_command(
      desc, args, "audit",
      "--kb PATH [options]\n"
      "Runs the kernels export would ship (the fastest per dtype and shape) once each under compute-sanitizer\n"
      "and records the verdicts; export refuses a kernel that failed.");
  if (!parsed) return 0;
  const auto& [vm, positional] = *parsed;
  if (kb_path.empty() || !positional.empty()) throw UsageError("audit needs --kb PATH\n" + to_string(desc));
  AuditOptions opt;
  opt.tools.clear();
  for (size_t at = 0; at <= tools_text.size();) {
    const auto end = std::min(tools_text.find(',', at), tools_text.size());
    const auto tool = tools_text.substr(at, end - at);
    const auto& known = sanitizer_tools();
    if (std::find(known.begin(), known.end(), tool) == known.end())
      throw UsageError("--tools: unknown tool '" + tool + "' (expected some of memcheck,racecheck,synccheck,initcheck)");
    opt.tools.push_back(tool);
    at = end + 1;
  }
  if (!(timeout > 0)) throw UsageError("--timeout: expected seconds above 0");
  opt.timeout_s = timeout;
  if (!std::filesystem::exists(kb_path)) throw Error("knowledge base '" + kb_path + "' does not exist");
  auto kb = KnowledgeBase::open(kb_path);
  std::set<std::string> problems;
  if (!problem.empty())
    problems.insert(problem);
  else
    for (const auto& r : kb.runs()) problems.insert(r.info.problem);
  const auto list = cuda_devices();
  if (list.devices.empty()) throw Error(list.why_none + ": nothing audited (an audit runs the kernels on the GPU)");
  if (device < 0 || device >= static_cast<int>(list.devices.size()))
    throw UsageError("--device " + std::to_string(device) + ": there are " + std::to_string(list.devices.size()) +
                     " CUDA device(s)");
  const auto& dev = list.devices[static_cast<size_t>(device)];
  if (const auto s = find_compute_sanitizer()) opt.sanitizer = *s;
  else
    std::fprintf(stderr, "soltune audit: not audited: compute-sanitizer not found (looked in $SOLTUNE_COMPUTE_SANITIZER, "
                 "PATH, $CUDA_HOME/bin and /usr/local/cuda/bin)\n");
  opt.worker = worker_options(device, dev, vm.count("no-wait") == 0);
  opt.worker.templates = templates.empty() ? default_templates() : std::filesystem::path(templates);
  // One audit on the GPU at a time, and none beside a tuning run's timings.
  const auto lock = GpuLock::acquire(opt.worker.lock_key, opt.worker.lock_label, opt.worker.wait_for_gpu);
  const Compiler compiler(compiler_options());
  Counts n;
  for (const auto& p : problems) audit_problem(kb, p, opt.worker.templates, gpu, dev, opt, compiler, vm.count("again") > 0, n);
  std::printf("audit: %d passed, %d failed, %d not audited, %d audited before\n", n.passed, n.failed, n.not_audited,
              n.skipped);
  return n.failed || n.not_audited ? 1 : 0;
}

}  // namespace soltune::cli
