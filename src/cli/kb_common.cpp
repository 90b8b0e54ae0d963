#include "cli/kb_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

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
  j["id"] = r.id;
  j["run_id"] = r.run_id;
  j["gpu_id"] = r.gpu_id;
  j["gpu"] = r.gpu_name;
  j["problem"] = r.problem;
  j["variant"] = r.variant;
  j["dtype"] = r.dtype;
  j["shape"] = r.shape_key;
  j["config_key"] = r.config_key;
  j["status"] = r.status;
  j["kind"] = r.time_kind;
  j["time_us"] = r.time_us;  // NaN prints as null
  j["min_us"] = r.min_us;
  j["q1_us"] = r.q1_us;
  j["q3_us"] = r.q3_us;
  j["max_us"] = r.max_us;
  j["reps"] = r.reps;
  j["t_ref_us"] = r.t_ref_us;
  j["t_sol_us"] = r.t_sol_us;
  j["sol_score"] = r.sol_score;
  j["sol_execbench"] = r.sol_execbench;
  j["sol_valid"] = r.sol_valid;
  j["below_sol"] = r.below_sol;
  j["accuracy"] = r.accuracy;
  j["registers"] = r.res.registers;
  j["spill_stores"] = r.res.spill_stores;
  j["spill_loads"] = r.res.spill_loads;
  j["occupancy_blocks"] = r.occupancy_blocks;
  j["compile_ms"] = r.compile_ms;
  j["cache_hit"] = r.cache_hit;
  j["source_hash"] = r.source_hash;
  j["created_at"] = r.created_at;
  if (with_log) j["log"] = r.log;
  return j;
}

std::optional<ParsedArgs> parse(po::options_description& desc, const std::vector<std::string>& args,
                                const std::string& sub, const std::string& synopsis) {
  desc.add_options()("help,h", "this text");
  return parse_command(desc, args, "kb " + sub, synopsis);
}

}  // namespace soltune::cli::kb_commands
