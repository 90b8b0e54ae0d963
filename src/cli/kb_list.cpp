// soltune kb list, best: what a knowledge base holds, and the fastest results of a problem.
#include <cstdio>

#include "cli/kb_common.hpp"
#include "kb/exchange.hpp"

namespace soltune::cli::kb_commands {

int list_command(const std::vector<std::string>& args) {
  const auto p = parse_read(args, "list", "", 0, "kb list takes no arguments");
  if (!p) return 0;
  const auto kb = open_existing(p->path, "list");
  const auto runs = kb::run_summaries(kb);
  const auto problems = kb::problem_summaries(kb);
  const auto gpus = kb::gpu_summaries(kb);

  if (p->json) {
    json j;
    j["kb"] = p->path;
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
      r["notes"] = s.run.notes;
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

  std::printf("knowledge base %s: %s, %s, %s\n", p->path.c_str(), plural(static_cast<int64_t>(runs.size()), "run").c_str(),
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
    for (const auto& s : runs)
      if (!s.run.notes.empty()) std::printf("run %lld: %s\n", static_cast<long long>(s.run.id), s.run.notes.c_str());
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
  std::string known;
  bool has_problem = false;
  for (const auto& s : kb::problem_summaries(kb)) {
    known += (known.empty() ? "" : ", ") + s.problem;
    has_problem = has_problem || s.problem == problem;
  }
  // A problem the file does not hold is an error (a misspelt name must not read as "no results
  // yet"); one it holds with nothing ok on the GPUs asked for is an empty answer.
  if (!has_problem)
    throw Error(path + ": no results for problem '" + problem + "' (problems there: " + (known.empty() ? "none" : known) +
                ")");
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
    std::printf("no ok result for problem '%s'%s in %s\n", problem.c_str(),
                gpu.empty() ? "" : (" on a GPU matching '" + gpu + "'").c_str(), path.c_str());
    return 0;
  }
  std::printf("best results for %s in %s:\n", problem.c_str(), path.c_str());
  std::vector<std::vector<std::string>> t = {
      {"GPU", "VARIANT", "DTYPE", "SHAPE", "TIME_US", "KIND", "SOL", "SOL-EB", "CONFIG"}};
  for (const auto& r : best)
    t.push_back({r.gpu_name, r.variant, r.dtype, r.shape_key, fmt(r.time_us), kind_of(r), fmt(r.sol_score, 3),
                 fmt(r.sol_execbench, 3), r.config_key});
  print_table(t);
  return 0;
}

}  // namespace soltune::cli::kb_commands
