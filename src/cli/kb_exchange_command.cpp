// soltune kb export-json, import-json: carry a knowledge base between machines as JSON.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <utility>

#include "cli/kb_common.hpp"
#include "core/output_file.hpp"
#include "kb/exchange.hpp"

namespace soltune::cli::kb_commands {

int export_json_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune kb export-json options");
  std::string path, out;
  desc.add_options()("kb", po::value(&path), "knowledge base file (required)")(
      "output,o", po::value(&out), "JSON file to write ('-': standard output) (required)");
  const auto p = parse(desc, args, "export-json", "--kb PATH -o FILE");
  if (!p) return 0;
  if (path.empty() || out.empty() || !p->positional.empty())
    throw UsageError("kb export-json needs --kb and -o\n" + to_string(desc));
  const auto kb = open_existing(path, "export-json");
  // Standard output ('-', /dev/stdout, /dev/fd/1) is written where the shell left it, and the report
  // then goes to standard error.
  const std::string text = kb::export_json(kb);
  write_output_file(out, text);
  if (!is_stream_output(out))
    std::fprintf(report_stream(out), "exported %s to %s (%zu bytes)\n", path.c_str(), out.c_str(), text.size());
  return 0;
}

int import_json_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune kb import-json FILE options");
  std::string path;
  desc.add_options()("kb", po::value(&path), "knowledge base to merge into, created if missing (required)")(
      "json", "JSON output (what was added)");
  const auto p = parse(desc, args, "import-json", "FILE --kb PATH [--json]");
  if (!p) return 0;
  if (path.empty() || p->positional.size() != 1)
    throw UsageError("kb import-json needs --kb and one FILE\n" + to_string(desc));
  const std::string& file = p->positional[0];
  kb::ImportStats s;
  if (file == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    s = kb::import_json(text, "<stdin>", path);
  } else {
    s = kb::import_json_file(file, path);
  }
  const std::pair<const char*, const kb::ImportStats::Table*> tables[] = {
      {"gpus", &s.gpus}, {"runs", &s.runs}, {"sources", &s.sources}, {"baselines", &s.baselines}, {"results", &s.results}, {"audits", &s.audits}};
  if (p->vm.count("json")) {
    json j;
    j["file"] = file;
    j["kb"] = path;
    j["created"] = s.created;
    for (const auto& [name, t] : tables)
      j[name] = {{"in_file", t->in_file}, {"added", t->added}, {"present", t->present}, {"updated", t->updated}};
    print_json(j);
    return 0;
  }
  std::printf("imported %s into %s%s:\n", file == "-" ? "standard input" : file.c_str(), path.c_str(),
              s.created ? " (created)" : "");
  std::vector<std::vector<std::string>> t = {{"TABLE", "IN FILE", "ADDED", "ALREADY THERE", "UPDATED"}};
  for (const auto& [name, x] : tables)
    t.push_back({name, std::to_string(x->in_file), std::to_string(x->added), std::to_string(x->present),
                 std::to_string(x->updated)});
  print_table(t);
  return 0;
}

}  // namespace soltune::cli::kb_commands
