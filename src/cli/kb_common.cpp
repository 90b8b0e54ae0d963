#include "cli/kb_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <variant>

#include "kb/result_columns.hpp"

namespace soltune::cli::kb_commands {

void print_json(const json& j) {
  const std::string s = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  std::fwrite(s.data(), 1, s.size(), stdout);
}

void print_table(const std::vector<std::vector<std::string>>& rows, const char* indent) {
  std::vector<size_t> w;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line = indent;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(w[i] - r[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

std::string fmt(double v, int prec) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

std::string plural(int64_t n, const std::string& word) {
  if (n == 1) return "1 " + word;
  if (word.size() > 1 && word.back() == 'y') return std::to_string(n) + " " + word.substr(0, word.size() - 1) + "ies";
  return std::to_string(n) + " " + word + "s";
}

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

KnowledgeBase open_existing(const std::string& path, const std::string& sub) {
  if (path.empty()) throw UsageError("kb " + sub + " needs --kb PATH");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error("knowledge base '" + path + "' does not exist");
  return KnowledgeBase::open_read_only(path);
}

json result_json(const ResultRecord& r, bool with_log) {
  json j;
  for (const auto& c : kb::result_columns()) {
    if (!with_log && std::string_view(c.name) == "log") continue;
    std::visit([&](const auto& v) { j[c.json] = v; }, c.value(r));  // NaN prints as null
  }
  return j;
}

std::optional<ParsedArgs> parse(po::options_description& desc, const std::vector<std::string>& args,
                                const std::string& sub, const std::string& synopsis) {
  desc.add_options()("help,h", "this text");
  return parse_command(desc, args, "kb " + sub, synopsis);
}

std::optional<ReadArgs> parse_read(const std::vector<std::string>& args, const std::string& sub,
                                   const std::string& positional, size_t count, const std::string& wrong_count) {
  const std::string pos = positional.empty() ? "" : positional + " ";
  po::options_description desc("soltune kb " + sub + " " + pos + "options");
  ReadArgs a;
  desc.add_options()("kb", po::value(&a.path), "knowledge base file (required)")("json", "JSON output");
  const auto p = parse(desc, args, sub, pos + "--kb PATH [--json]");
  if (!p) return std::nullopt;
  if (p->positional.size() != count) throw UsageError(wrong_count + "\n" + to_string(desc));
  a.json = p->vm.count("json") > 0;
  a.positional = p->positional;
  return a;
}

}  // namespace soltune::cli::kb_commands
