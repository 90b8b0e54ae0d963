// soltune report: a knowledge base's runs and kernels as one self-contained HTML file.
#include "cli/report_command.hpp"

#include <cstdio>

#include "cli/options.hpp"
#include "core/output_file.hpp"
#include "kb/knowledge_base.hpp"
#include "report/report_html.hpp"

namespace soltune::cli {
namespace po = boost::program_options;

void write_report(const std::filesystem::path& kb_path, const report::ReportOptions& o, const std::string& out) {
  const auto kb = KnowledgeBase::open_read_only(kb_path);
  const auto data = report::collect(kb, kb_path, o);
  const auto html = report::render_html(data, utc_now());
  write_output_file(out, html);
  std::fprintf(report_stream(out), "report: %zu task(s) on %zu GPU(s)%s -> %s (%.1f MB)\n", data.tasks.size(),
               data.gpus.size(), data.any_predicted ? ", predicted times marked" : "", out.c_str(),
               static_cast<double>(html.size()) / 1e6);
}

int report_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune report options");
  std::string kb_path, problem, gpu, out, templates;
  desc.add_options()("help,h", "this text")("kb", po::value(&kb_path), "knowledge base file (required)")(
      "output,o", po::value(&out), "HTML file to write (required)")("problem", po::value(&problem), "one problem only")(
      "gpu", po::value(&gpu), "GPUs whose name contains this (case-insensitive) only")(
      "templates", po::value(&templates), "templates folder, for the roofline's FLOPs and bytes (default: ./templates, "
                                          "$SOLTUNE_TEMPLATES, or the installed ones)");
  const auto parsed = parse_command(desc, args, "report", "--kb PATH -o FILE [--problem NAME] [--gpu NAME]");
  if (!parsed) return 0;
  if (kb_path.empty() || out.empty() || !parsed->positional.empty())
    throw UsageError("report needs --kb and -o\n" + to_string(desc));
  if (!std::filesystem::exists(kb_path)) throw Error("knowledge base '" + kb_path + "' does not exist");
  report::ReportOptions o;
  o.problem = problem;
  o.gpu = gpu;
  o.templates = templates.empty() ? default_templates() : std::filesystem::path(templates);
  write_report(kb_path, o, out);
  return 0;
}

}  // namespace soltune::cli
