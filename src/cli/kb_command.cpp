// soltune kb: look into a knowledge base (list, best, show), carry it between machines
// (export-json, import-json), and clean the NVRTC compile cache (gc).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>

#include "cli/options.hpp"
#include "cli/tune_command.hpp"
#include "codegen/compiler.hpp"
#include "kb/exchange.hpp"
#include "kb/knowledge_base.hpp"

namespace po = boost::program_options;

namespace soltune::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

const char* kUsage = R"(usage: soltune kb <subcommand> [options]

subcommands:
  list            --kb PATH [--json]          runs, problems and GPUs of a knowledge base
  best            --kb PATH --problem NAME [--gpu FRAGMENT] [--json]
                                              the fastest ok result per GPU, variant, dtype and shape
  show RUN        --kb PATH [--json]          a run: its settings, status counts, best per task, results
  export-json     --kb PATH -o FILE           the whole knowledge base as one JSON document ('-': stdout)
  import-json     --kb PATH FILE              merge an export into a knowledge base, created if missing,
                                              without duplicates ('-': stdin) [--json]
  gc              [--cache-dir DIR] [--older-than DAYS] [--dry-run]
                                              remove NVRTC compile-cache entries unused for DAYS (30)

`soltune kb SUBCOMMAND --help` for a subcommand's options.
)";

void print_json(const json& j) {
  const std::string s = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  std::fwrite(s.data(), 1, s.size(), stdout);
}

// Rows of cells printed as left-aligned columns.
void print_table(const std::vector<std::vector<std::string>>& rows, const char* indent = "  ") {
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

std::string fmt(double v, int prec = 2) {
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

// Reading commands never create a knowledge base: a missing file is an error naming it.
KnowledgeBase open_existing(const std::string& path, const std::string& sub) {
  if (path.empty()) throw UsageError("kb " + sub + " needs --kb PATH");
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error("knowledge base '" + path + "' does not exist");
  return KnowledgeBase::open(path);
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

struct Parsed {
  po::variables_map vm;
  std::vector<std::string> positional;
};

// Parses a subcommand's options; --help prints them and returns nullopt.
std::optional<Parsed> parse(po::options_description& desc, const std::vector<std::string>& args,
                            const std::string& sub, const std::string& synopsis) {
  desc.add_options()("help,h", "this text");
  Parsed p;
  p.vm = parse_options(desc, args, p.positional, "kb " + sub);
  if (p.vm.count("help")) {
    std::printf("usage: soltune kb %s %s\n%s", sub.c_str(), synopsis.c_str(), to_string(desc).c_str());
    return std::nullopt;
  }
  return p;
}

// --- list ---

int list_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune kb list options");
  std::string path;
  desc.add_options()("kb", po::value(&path), "knowledge base file (required)")("json", "JSON output");
  const auto p = parse(desc, args, "list", "--kb PATH [--json]");
  if (!p) return 0;
  if (!p->positional.empty()) throw UsageError("kb list takes no arguments\n" + to_string(desc));
  const auto kb = open_existing(path, "list");
  const auto runs = kb::run_summaries(kb);
  const auto problems = kb::problem_summaries(kb);
  const auto gpus = kb::gpu_summaries(kb);

  if (p->vm.count("json")) {
    json j;
    j["kb"] = path;
    j["runs"] = json::array();
    for (const auto& s : runs) {
      json r;
      r["id"] = s.run.id;
      r["problem"] = s.run.info.problem;
      r["status"] = s.run.status;
      r["backend"] = s.run.info.backend;
      r["gpu_id"] = s.run.gpu_id;
      r["gpu"] = s.gpu_name;
      r["gpu_kind"] = s.gpu_kind;
      r["config_path"] = s.run.info.config_path;
      r["seed"] = s.run.info.seed;
      r["started_at"] = s.run.started_at;
      r["finished_at"] = or_null(s.run.finished_at);
      r["results"] = s.results;
      r["by_status"] = json::object();
      for (const auto& [st, n] : s.by_status) r["by_status"][st] = n;
      j["runs"].push_back(std::move(r));
    }
    j["problems"] = json::array();
    for (const auto& s : problems)
      j["problems"].push_back({{"problem", s.problem},
                               {"runs", s.runs},
                               {"results", s.results},
                               {"ok", s.ok},
                               {"gpus", s.gpus},
                               {"last_run_at", or_null(s.last_run_at)}});
    j["gpus"] = json::array();
    for (const auto& s : gpus) {
      const auto& d = s.gpu.device;
      j["gpus"].push_back({{"id", s.gpu.id},
                           {"name", d.name},
                           {"uuid", d.uuid},
                           {"kind", time_kind_name(s.gpu.kind)},
                           {"arch", d.arch()},
                           {"sms", d.sms},
                           {"driver_version", d.driver_version},
                           {"runtime_version", d.runtime_version},
                           {"nvrtc_version", d.nvrtc_version},
                           {"runs", s.runs},
                           {"results", s.results},
                           {"first_seen_at", s.gpu.first_seen_at},
                           {"last_seen_at", s.gpu.last_seen_at}});
    }
    print_json(j);
    return 0;
  }

  std::printf("knowledge base %s: %s, %s, %s\n", path.c_str(), plural(static_cast<int64_t>(runs.size()), "run").c_str(),
              plural(static_cast<int64_t>(problems.size()), "problem").c_str(),
              plural(static_cast<int64_t>(gpus.size()), "GPU").c_str());
  if (!runs.empty()) {
    std::printf("\nruns:\n");
    std::vector<std::vector<std::string>> t = {
        {"ID", "PROBLEM", "STATUS", "BACKEND", "GPU", "STARTED", "FINISHED", "RESULTS", "OK"}};
    for (const auto& s : runs) {
      const auto ok = s.by_status.find("ok");
      t.push_back({std::to_string(s.run.id), s.run.info.problem, s.run.status, s.run.info.backend,
                   s.gpu_name + (s.gpu_kind == "predicted" ? " (model)" : ""), s.run.started_at,
                   s.run.finished_at.empty() ? "-" : s.run.finished_at, std::to_string(s.results),
                   std::to_string(ok == s.by_status.end() ? 0 : ok->second)});
    }
    print_table(t);
  }
  if (!problems.empty()) {
    std::printf("\nproblems:\n");
    std::vector<std::vector<std::string>> t = {{"PROBLEM", "RUNS", "RESULTS", "OK", "LAST RUN", "GPUS"}};
    for (const auto& s : problems) {
      std::string names;
      for (const auto& g : s.gpus) names += (names.empty() ? "" : ", ") + g;
      t.push_back({s.problem, std::to_string(s.runs), std::to_string(s.results), std::to_string(s.ok),
                   s.last_run_at.empty() ? "-" : s.last_run_at, names});
    }
    print_table(t);
  }
  if (!gpus.empty()) {
    std::printf("\nGPUs:\n");
    std::vector<std::vector<std::string>> t = {{"ID", "NAME", "KIND", "ARCH", "UUID", "RUNS", "RESULTS", "LAST SEEN"}};
    for (const auto& s : gpus) {
      const auto& d = s.gpu.device;
      t.push_back({std::to_string(s.gpu.id), d.name, std::string(time_kind_name(s.gpu.kind)), d.arch(),
                   d.uuid.empty() ? "-" : d.uuid, std::to_string(s.runs), std::to_string(s.results),
                   s.gpu.last_seen_at});
    }
    print_table(t);
  }
  return 0;
}

// --- best ---

int best_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune kb best options");
  std::string path, problem, gpu;
  desc.add_options()("kb", po::value(&path), "knowledge base file (required)")(
      "problem", po::value(&problem), "problem name (required)")(
      "gpu", po::value(&gpu)->default_value(""), "case-insensitive fragment of the GPU name (default: all)")(
      "json", "JSON output");
  const auto p = parse(desc, args, "best", "--kb PATH --problem NAME [--gpu FRAGMENT] [--json]");
  if (!p) return 0;
  if (path.empty() || problem.empty() || !p->positional.empty())
    throw UsageError("kb best needs --kb and --problem\n" + to_string(desc));
  const auto kb = open_existing(path, "best");
  const auto best = kb.best(problem, gpu);
  if (p->vm.count("json")) {
    json j;
    j["kb"] = path;
    j["problem"] = problem;
    j["gpu_filter"] = gpu;
    j["best"] = json::array();
    for (const auto& r : best) j["best"].push_back(result_json(r, false));
    print_json(j);
    return 0;
  }
  if (best.empty()) {
    std::string known;
    for (const auto& s : kb::problem_summaries(kb)) known += (known.empty() ? "" : ", ") + s.problem;
    std::printf("no ok result for problem '%s'%s in %s (problems there: %s)\n", problem.c_str(),
                gpu.empty() ? "" : (" on a GPU matching '" + gpu + "'").c_str(), path.c_str(),
                known.empty() ? "none" : known.c_str());
    return 0;
  }
  std::printf("best results for %s in %s:\n", problem.c_str(), path.c_str());
  std::vector<std::vector<std::string>> t = {
      {"GPU", "VARIANT", "DTYPE", "SHAPE", "TIME_US", "KIND", "SOL", "SOL-EB", "CONFIG"}};
  for (const auto& r : best)
    t.push_back({r.gpu_name, r.variant, r.dtype, r.shape_key, fmt(r.time_us), r.time_kind, fmt(r.sol_score, 3),
                 fmt(r.sol_execbench, 3), r.config_key});
  print_table(t);
  return 0;
}

// --- show ---

// Per task (variant, dtype, shape): the fastest ok result, a measurement over a prediction, the
// earlier of equals: the rule of KnowledgeBase::best, within one run.
std::vector<const ResultRecord*> best_per_task(const std::vector<ResultRecord>& results) {
  std::map<std::tuple<std::string, std::string, std::string>, const ResultRecord*> best;
  const auto better = [](const ResultRecord& a, const ResultRecord& b) {
    const bool am = a.time_kind == "measured", bm = b.time_kind == "measured";
    if (am != bm) return am;
    return a.time_us < b.time_us;
  };
  for (const auto& r : results) {
    if (r.status != "ok" || std::isnan(r.time_us)) continue;
    auto& slot = best[{r.variant, r.dtype, r.shape_key}];
    if (!slot || better(r, *slot)) slot = &r;
  }
  std::vector<const ResultRecord*> out;
  for (const auto& [k, r] : best) out.push_back(r);
  return out;
}

int show_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune kb show RUN options");
  std::string path;
  desc.add_options()("kb", po::value(&path), "knowledge base file (required)")("json", "JSON output");
  const auto p = parse(desc, args, "show", "RUN --kb PATH [--json]");
  if (!p) return 0;
  if (p->positional.size() != 1) throw UsageError("kb show takes one RUN id (see soltune kb list)\n" + to_string(desc));
  const std::string& arg = p->positional[0];
  int64_t id = 0;
  {
    size_t used = 0;
    try {
      id = std::stoll(arg, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != arg.size()) throw UsageError("kb show: RUN must be a run id (see soltune kb list), got '" + arg + "'");
  }
  const auto kb = open_existing(path, "show");
  std::optional<RunRecord> run;
  for (auto& r : kb.runs())
    if (r.id == id) run = std::move(r);
  if (!run) throw Error("no run " + std::to_string(id) + " in " + path);
  std::optional<GpuRecord> gpu;
  for (auto& g : kb.gpus())
    if (g.id == run->gpu_id) gpu = std::move(g);
  const auto results = kb.results(id);
  const auto baselines = kb.baselines(id);
  std::map<std::string, int64_t> counts;
  for (const auto& r : results) ++counts[r.status];
  const auto best = best_per_task(results);

  if (p->vm.count("json")) {
    json j;
    j["kb"] = path;
    json r;
    r["id"] = run->id;
    r["problem"] = run->info.problem;
    r["config_path"] = run->info.config_path;
    r["seed"] = run->info.seed;
    r["backend"] = run->info.backend;
    r["budget"] = run->info.budget_text;
    r["soltune_version"] = run->info.soltune_version;
    r["command_line"] = run->info.command_line;
    r["status"] = run->status;
    r["started_at"] = run->started_at;
    r["finished_at"] = or_null(run->finished_at);
    r["gpu"] = gpu ? json{{"id", gpu->id},
                          {"name", gpu->device.name},
                          {"uuid", gpu->device.uuid},
                          {"kind", time_kind_name(gpu->kind)},
                          {"arch", gpu->device.arch()}}
                   : json(nullptr);
    j["run"] = std::move(r);
    j["results_total"] = results.size();
    j["status_counts"] = json::object();
    for (const auto& [st, n] : counts) j["status_counts"][st] = n;
    j["baselines"] = json::array();
    for (const auto& b : baselines)
      j["baselines"].push_back({{"variant", b.variant},
                                {"dtype", b.dtype},
                                {"shape", b.shape_key},
                                {"kind", time_kind_name(b.baseline.kind)},
                                {"t_ref_us", b.baseline.t_ref_us},
                                {"t_sol_us", b.baseline.t_sol_us},
                                {"flops", b.baseline.flops},
                                {"bytes", b.baseline.bytes},
                                {"note", b.baseline.note},
                                {"created_at", b.created_at}});
    j["best"] = json::array();
    for (const auto* b : best) j["best"].push_back(result_json(*b, false));
    j["results"] = json::array();
    for (const auto& x : results) j["results"].push_back(result_json(x, true));
    print_json(j);
    return 0;
  }

  std::printf("run %lld: %s (%s)\n", static_cast<long long>(run->id), run->info.problem.c_str(),
              run->info.config_path.c_str());
  std::printf("  status   %s, started %s, finished %s\n", run->status.c_str(), run->started_at.c_str(),
              run->finished_at.empty() ? "-" : run->finished_at.c_str());
  if (gpu)
    std::printf("  GPU      %s (%s, %s)%s%s\n", gpu->device.name.c_str(), std::string(time_kind_name(gpu->kind)).c_str(),
                gpu->device.arch().c_str(), gpu->device.uuid.empty() ? "" : " ", gpu->device.uuid.c_str());
  std::printf("  backend  %s, seed %llu, budget %s, soltune %s\n", run->info.backend.c_str(),
              static_cast<unsigned long long>(run->info.seed), run->info.budget_text.c_str(),
              run->info.soltune_version.c_str());
  if (!run->info.command_line.empty()) std::printf("  command  %s\n", run->info.command_line.c_str());
  std::string by;
  for (const auto& [st, n] : counts) by += (by.empty() ? "" : ", ") + st + " " + std::to_string(n);
  std::printf("\n%s%s\n", plural(static_cast<int64_t>(results.size()), "result").c_str(),
              by.empty() ? "" : (" (" + by + ")").c_str());
  if (!baselines.empty()) {
    std::printf("\nbaselines:\n");
    std::vector<std::vector<std::string>> t = {{"VARIANT", "DTYPE", "SHAPE", "KIND", "T_REF_US", "T_SOL_US", "NOTE"}};
    for (const auto& b : baselines)
      t.push_back({b.variant, b.dtype, b.shape_key, std::string(time_kind_name(b.baseline.kind)),
                   fmt(b.baseline.t_ref_us), fmt(b.baseline.t_sol_us), b.baseline.note});
    print_table(t);
  }
  if (!best.empty()) {
    std::printf("\nbest per task:\n");
    std::vector<std::vector<std::string>> t = {{"VARIANT", "DTYPE", "SHAPE", "TIME_US", "KIND", "SOL", "CONFIG"}};
    for (const auto* b : best)
      t.push_back({b->variant, b->dtype, b->shape_key, fmt(b->time_us), b->time_kind, fmt(b->sol_score, 3),
                   b->config_key});
    print_table(t);
  }
  if (!results.empty()) {
    std::printf("\nresults in order:\n");
    std::vector<std::vector<std::string>> t = {{"ID", "VARIANT", "DTYPE", "SHAPE", "CONFIG", "STATUS", "TIME_US", "KIND"}};
    for (const auto& x : results)
      t.push_back({std::to_string(x.id), x.variant, x.dtype, x.shape_key, x.config_key, x.status, fmt(x.time_us),
                   x.time_kind});
    print_table(t);
  }
  return 0;
}

// --- export-json, import-json ---

int export_json_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune kb export-json options");
  std::string path, out;
  desc.add_options()("kb", po::value(&path), "knowledge base file (required)")(
      "output,o", po::value(&out), "JSON file to write, atomically ('-': standard output) (required)");
  const auto p = parse(desc, args, "export-json", "--kb PATH -o FILE");
  if (!p) return 0;
  if (path.empty() || out.empty() || !p->positional.empty())
    throw UsageError("kb export-json needs --kb and -o\n" + to_string(desc));
  const auto kb = open_existing(path, "export-json");
  if (out == "-") {
    const std::string text = kb::export_json(kb);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  kb::export_json_file(kb, out);
  std::error_code ec;
  const auto bytes = fs::file_size(out, ec);
  std::printf("exported %s to %s (%llu bytes)\n", path.c_str(), out.c_str(),
              static_cast<unsigned long long>(ec ? 0 : bytes));
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
      {"gpus", &s.gpus}, {"runs", &s.runs}, {"sources", &s.sources}, {"baselines", &s.baselines}, {"results", &s.results}};
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

// --- gc ---

bool is_hex32(std::string_view s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// An entry of codegen/nvrtc_cache: "<32 hex digits>.nvrtc".
bool entry_name(std::string_view n) {
  return n.size() == 38 && n.substr(32) == ".nvrtc" && is_hex32(n.substr(0, 32));
}

// A cache write in progress, or left by a crash: ".tmp.<32 hex>.<pid>.<thread>.<counter>".
bool temp_name(std::string_view n) {
  if (n.substr(0, 5) != ".tmp." || n.size() < 5 + 33 || !is_hex32(n.substr(5, 32)) || n[37] != '.') return false;
  std::string_view rest = n.substr(38);
  for (int i = 0; i < 3; ++i) {
    const size_t dot = rest.find('.');
    if (!is_digits(rest.substr(0, dot))) return false;
    if (i < 2 && dot == std::string_view::npos) return false;
    if (i == 2 && dot != std::string_view::npos) return false;
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  return true;
}

// Whether the file starts with the cache entry magic. Read without moving its access time (that
// is what says it was last used): O_NOATIME where permitted, else the old time is put back.
bool has_entry_magic(const fs::path& p, const struct stat& before) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  char head[8] = {};
  const ssize_t n = ::read(fd, head, sizeof head);
  const struct timespec times[2] = {before.st_atim, {0, UTIME_OMIT}};
  (void)::futimens(fd, times);
  ::close(fd);
  return n == 8 && std::memcmp(head, "SOLNVRTC", 8) == 0;
}

double seconds_of(const struct timespec& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9; }

int gc_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune kb gc options");
  std::string dir_arg;
  double days = 30;
  desc.add_options()("cache-dir", po::value(&dir_arg),
                     "NVRTC cache folder (default: $SOLTUNE_CACHE_DIR, else $XDG_CACHE_HOME/soltune/nvrtc, else "
                     "~/.cache/soltune/nvrtc)")(
      "older-than", po::value(&days)->default_value(30), "remove entries neither read nor written for more than DAYS")(
      "dry-run,n", "only say what would be removed");
  const auto p = parse(desc, args, "gc", "[--cache-dir DIR] [--older-than DAYS] [--dry-run]");
  if (!p) return 0;
  if (!p->positional.empty()) throw UsageError("kb gc takes no arguments\n" + to_string(desc));
  if (!std::isfinite(days) || days < 0) throw UsageError("kb gc: --older-than must be a number of days >= 0");
  const bool dry = p->vm.count("dry-run") > 0;
  fs::path dir = dir_arg;
  if (dir.empty()) {
    dir = default_compiler_options().cache_dir;
    if (dir.empty()) throw Error("the NVRTC cache is off (SOLTUNE_CACHE_DIR=off): pass --cache-dir DIR");
  }
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (!fs::exists(st)) {
    std::printf("no NVRTC cache at %s: nothing to remove\n", dir.c_str());
    return 0;
  }
  if (!fs::is_directory(st)) throw Error(dir.string() + ": not a folder");

  // A temp file is a write in flight for milliseconds: one an hour old was left by a crash.
  constexpr double kTempAge = 3600;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double max_age = days * 86400;
  int64_t removed = 0, temps = 0, kept = 0, foreign = 0, failed = 0;
  uint64_t freed = 0;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot list: " + ec.message());
  std::vector<fs::path> paths;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(dir.string() + ": cannot list: " + ec.message());
    paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    const std::string name = path.filename().string();
    const bool entry = entry_name(name), temp = !entry && temp_name(name);
    struct stat sb {};
    if (!entry && !temp) continue;                                  // not ours: never touched
    if (::lstat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) {  // a link or a folder: not ours either
      ++foreign;
      continue;
    }
    const double age = now - std::max(seconds_of(sb.st_atim), seconds_of(sb.st_mtim));
    if (age <= (temp ? kTempAge : max_age)) {
      kept += entry;
      continue;
    }
    if (entry && !has_entry_magic(path, sb)) {
      ++foreign;
      std::printf("skipped %s: named like a cache entry, but is not one\n", name.c_str());
      continue;
    }
    if (!dry && ::unlink(path.c_str()) != 0) {
      std::fprintf(stderr, "soltune: cannot remove %s: %s\n", path.c_str(), std::strerror(errno));
      ++failed;
      continue;
    }
    std::printf("%s %s%s: %lld bytes, last used %.1f days ago\n", dry ? "would remove" : "removed",
                temp ? "leftover temp file " : "", name.c_str(), static_cast<long long>(sb.st_size), age / 86400);
    (temp ? temps : removed) += 1;
    freed += static_cast<uint64_t>(sb.st_size);
  }
  std::printf("%s %s and %s from %s, %s %llu bytes (%.1f MiB); kept %s used within %g days\n",
              dry ? "would remove" : "removed", plural(removed, "cache entry").c_str(),
              plural(temps, "temp file").c_str(), dir.c_str(), dry ? "would free" : "freed",
              static_cast<unsigned long long>(freed), static_cast<double>(freed) / (1 << 20),
              plural(kept, "entry").c_str(), days);
  return failed ? 1 : 0;
}

}  // namespace

int kb_command(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string& sub = args[0];
  if (sub == "help" || sub == "--help" || sub == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "list") return list_command(rest);
  if (sub == "best") return best_command(rest);
  if (sub == "show") return show_command(rest);
  if (sub == "export-json") return export_json_command(rest);
  if (sub == "import-json") return import_json_command(rest);
  if (sub == "gc") return gc_command(rest);
  throw UsageError("kb: unknown subcommand '" + sub + "'\n\n" + kUsage);
}

}  // namespace soltune::cli
