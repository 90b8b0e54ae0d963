// soltune kb show RUN: a run's settings, status counts, baselines, best per task and results.
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "cli/kb_common.hpp"

namespace soltune::cli::kb_commands {
namespace {

// Per task (variant, dtype, shape): the fastest ok result, a measurement over a prediction, the
// earlier of equals: the rule of KnowledgeBase::best, within one run.
std::vector<const ResultRecord*> best_per_task(const std::vector<ResultRecord>& results) {
  std::map<std::tuple<std::string, std::string, std::string>, const ResultRecord*> best;
  for (const auto& r : results) {
    if (r.status != "ok" || std::isnan(r.time_us)) continue;
    auto& slot = best[{r.variant, r.dtype, r.shape_key}];
    if (!slot || faster(r, *slot)) slot = &r;
  }
  std::vector<const ResultRecord*> out;
  for (const auto& [k, r] : best) out.push_back(r);
  return out;
}

}  // namespace

int show_command(const std::vector<std::string>& args) {
  const auto p = parse_read(args, "show", "RUN", 1, "kb show takes one RUN id (see soltune kb list)");
  if (!p) return 0;
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
  const auto kb = open_existing(p->path, "show");
  std::optional<RunRecord> run;
  for (auto& r : kb.runs())
    if (r.id == id) run = std::move(r);
  if (!run) throw Error("no run " + std::to_string(id) + " in " + p->path);
  std::optional<GpuRecord> gpu;
  for (auto& g : kb.gpus())
    if (g.id == run->gpu_id) gpu = std::move(g);
  const auto results = kb.results(id);
  const auto baselines = kb.baselines(id);
  std::map<std::string, int64_t> counts;
  for (const auto& r : results)
    if (!r.retimed) ++counts[r.status];  // evaluations; a re-timing is a second row of one
  const auto best = best_per_task(results);

  if (p->json) {
    json j;
    j["kb"] = p->path;
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
  int64_t evaluated = 0;
  for (const auto& [st, n] : counts) {
    by += (by.empty() ? "" : ", ") + st + " " + std::to_string(n);
    evaluated += n;
  }
  const auto retimed = static_cast<int64_t>(results.size()) - evaluated;
  std::printf("\n%s%s%s\n", plural(evaluated, "result").c_str(), by.empty() ? "" : (" (" + by + ")").c_str(),
              retimed > 0 ? (", and " + plural(retimed, "best") + " re-timed beside T_ref at the end").c_str() : "");
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
      t.push_back({b->variant, b->dtype, b->shape_key, fmt(b->time_us), kind_of(*b), fmt(b->sol_score, 3), b->config_key});
    print_table(t);
  }
  if (!results.empty()) {
    std::printf("\nresults in order:\n");
    std::vector<std::vector<std::string>> t = {{"ID", "VARIANT", "DTYPE", "SHAPE", "CONFIG", "STATUS", "TIME_US", "KIND"}};
    for (const auto& x : results)
      t.push_back({std::to_string(x.id), x.variant, x.dtype, x.shape_key, x.config_key, x.status, fmt(x.time_us), kind_of(x)});
    print_table(t);
  }
  return 0;
}

}  // namespace soltune::cli::kb_commands
