#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <set>

#include "cli/export_json.hpp"
#include "core/output_file.hpp"
#include "cli/options.hpp"
#include "cli/tune_command.hpp"
#include "codegen/compiler.hpp"
#include "codegen/content_hash.hpp"
#include "codegen/header_export.hpp"
#include "codegen/python_package.hpp"
#include "run/export_plan.hpp"
#include "core/cuda_tools.hpp"
#include "core/fallback.hpp"
#include "kb/knowledge_base.hpp"

namespace po = boost::program_options;

namespace soltune::cli {
namespace {

// The export's plan (run/export_plan.hpp), its warnings said on stderr; a refusal's too, before it.
ExportPlan plan(const KnowledgeBase& kb, const std::string& problem, const ExportOptions& o) {
  const auto say = [](const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) std::fprintf(stderr, "export: %s\n", w.c_str());
  };
  try {
    auto p = plan_export(kb, problem, o);
    say(p.warnings);
    return p;
  } catch (const ExportRefused& e) {
    say(e.warnings);
    if (e.usage) throw UsageError(e.what());
    throw Error(e.what());
  }
}

void report_written(const std::string& out, const ExportPlan& c) {
  const auto fallbacks = std::count_if(c.specs.begin(), c.specs.end(), [](const Specialization& s) { return s.fallback; });
  std::FILE* report = report_stream(out);
  std::fprintf(report, "wrote %s: %zu specialization(s) and %td fallback(s) of %s for %s\n", out.c_str(),
               c.specs.size() - static_cast<size_t>(fallbacks), fallbacks, c.spec.name.c_str(), c.gpu.c_str());
  for (const auto& s : c.specs)
    std::fprintf(report, "  %s %s %s: %s\n", std::string(dtype_name(s.dtype)).c_str(), s.fallback ? "fallback, measured at" : "at",
                s.shape.key().c_str(), s.comment.empty() ? "" : s.comment.front().c_str());
}

// --format python: the package OUT/NAME/ (codegen/python_package.hpp), its kernels built now by
// nvcc (core/cuda_tools.hpp) or at its first import.
int export_python(const KnowledgeBase& kb, const std::vector<std::string>& problems, const ExportOptions& o,
                  const std::string& out, const std::string& name, bool build_now) {
  static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
  if (!std::regex_match(name, identifier)) throw UsageError("--name: a Python package name (letters, digits, _), got '" + name + "'");
  std::vector<ExportPlan> chosen;
  for (const auto& p : problems) {
    if (std::any_of(chosen.begin(), chosen.end(), [&](const ExportPlan& c) { return c.spec.name == p; }))
      throw UsageError("--problem " + p + " given twice");
    chosen.push_back(plan(kb, p, o));
    if (chosen.back().gpu != chosen.front().gpu)
      throw UsageError("the problems' kernels were tuned on different GPUs (" + chosen.front().gpu + ", " + chosen.back().gpu +
                       "): choose one with --gpu");
  }
  // The architecture: the tuned GPU's (sm_90a where a kernel needs its architecture-specific features).
  const auto& device = chosen.front().device;
  std::string arch = "sm_" + std::to_string(device.cc_major * 10 + device.cc_minor);
  for (const auto& c : chosen)
    for (const auto& s : c.specs)
      if (!s.variant->arch.empty()) arch = s.variant->arch;
  const auto found = find_cuda_tool("nvcc");
  const std::string nvcc = found ? found->string() : "nvcc";
  std::vector<PythonProblem> pp;
  for (const auto& c : chosen)
    pp.push_back({&c.spec, c.specs, export_header(c.spec, c.specs, "soltune export --problem " + c.spec.name + " (" + c.gpu + ")")});
  const auto dir = std::filesystem::absolute(std::filesystem::path(out) / name);
  std::filesystem::create_directories(dir);
  const auto build = python_build_command(nvcc, arch);
  for (const auto& f : python_package(pp, chosen.front().gpu, build)) write_output_file(dir / f.path, f.text);
  std::FILE* report = report_stream(dir / "__init__.py");
  for (const auto& c : chosen) report_written((dir / (c.spec.name + ".cuh")).string(), c);
  std::filesystem::remove(dir / "_kernels.so");  // a stale build of other kernels
  if (!build_now) {
    std::fprintf(report, "wrote the package %s: its kernels build at its first import (%s)\n", dir.c_str(), nvcc.c_str());
    return 0;
  }
  if (!found)
    throw Error("building the package's kernels needs nvcc, found neither on PATH nor under $CUDA_HOME, $CUDA_PATH or "
                "/usr/local/cuda (install the CUDA toolkit, or pass --build lazy to build at the first import)");
  std::string cmd = "cd '" + dir.string() + "' &&";
  for (const auto& w : build) cmd += " '" + w + "'";
  const auto log = dir / "_build.log";
  if (std::system((cmd + " > '" + log.string() + "' 2>&1").c_str()) != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    throw Error("nvcc failed to build the package's kernels (" + log.string() + "):\n" + text.str());
  }
  std::filesystem::remove(log);
  std::fprintf(report, "wrote the package %s, its kernels built by %s for %s: `import %s` with %s on the path\n", dir.c_str(),
               nvcc.c_str(), arch.c_str(), name.c_str(), std::filesystem::absolute(out).c_str());
  return 0;
}

}  // namespace

int export_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune export options");
  std::vector<std::string> problems;
  std::string kb_path, out, gpu, templates, format, name, build;
  desc.add_options()("help,h", "this text")("kb", po::value(&kb_path), "knowledge base file (required)")(
      "problem", po::value(&problems), "problem name (required; several for --format python)")(
      "output,o", po::value(&out), "header to write, or the folder of a Python package (required)")(
      "gpu", po::value(&gpu)->default_value(""), "GPU name fragment (default: the only GPU in the knowledge base)")(
      "templates", po::value(&templates), "templates folder (default: ./templates, $SOLTUNE_TEMPLATES, or the installed ones)")(
      "allow-predicted", "export model predictions where nothing was measured")(
      "format", po::value(&format)->default_value("cuh"),
      "cuh (a self-contained header), json (for frameworks) or python (a package: OUT/NAME/)")(
      "name", po::value(&name)->default_value("soltune_kernels"), "--format python: the package's name")(
      "build", po::value(&build)->default_value("now"),
      "--format python: now (nvcc builds the kernels at export) or lazy (at the package's first import)")(
      "source-only", "leave out the timed cubins (the header's kernels then compile from its source)")(
      "allow-failed-audit", "export kernels that failed their compute-sanitizer audit (soltune audit), with a warning");
  const auto parsed = parse_command(desc, args, "export", "--kb PATH --problem NAME -o FILE [options]");
  if (!parsed) return 0;
  const auto& [vm, positional] = *parsed;
  if (kb_path.empty() || problems.empty() || out.empty() || !positional.empty())
    throw UsageError("export needs --kb, --problem and -o\n" + to_string(desc));
  if (format != "cuh" && format != "json" && format != "python")
    throw UsageError("--format: expected cuh, json or python, got '" + format + "'");
  if (format != "python" && problems.size() != 1)
    throw UsageError("--format " + format + " writes one problem: give --problem once (several go into --format python)");
  if (build != "now" && build != "lazy") throw UsageError("--build: expected now or lazy, got '" + build + "'");
  if (!std::filesystem::exists(kb_path)) throw Error("knowledge base '" + kb_path + "' does not exist");
  const auto kb = KnowledgeBase::open_read_only(kb_path);
  const ExportOptions o{kb_path, gpu, templates.empty() ? default_templates() : std::filesystem::path(templates),
                        vm.count("allow-predicted") > 0, vm.count("allow-failed-audit") > 0, vm.count("source-only") > 0};
  if (format == "python") return export_python(kb, problems, o, out, name, build == "now");
  const auto c = plan(kb, problems.front(), o);
  const auto text = format == "json" ? export_json(c.spec, c.specs, c.records, c.gpu)
                                     : export_header(c.spec, c.specs, "soltune export --problem " + c.spec.name + " (" + c.gpu + ")");
  write_output_file(out, text);
  report_written(out, c);
  return 0;
}

}  // namespace soltune::cli
