// The summaries `soltune kb list` shows: per run, per problem, per GPU.
#include <sqlite3.h>

#include <tuple>
#include <utility>

#include "kb/exchange.hpp"
#include "kb/sqlite.hpp"

namespace soltune::kb {

std::vector<RunSummary> run_summaries(const KnowledgeBase& kb) {
  std::map<int64_t, std::pair<std::string, std::string>> gpu;
  for (const auto& g : kb.gpus()) gpu[g.id] = {g.device.name, std::string(time_kind_name(g.kind))};
  std::vector<RunSummary> out;
  std::map<int64_t, size_t> at;
  for (auto& r : kb.runs()) {
    RunSummary s;
    s.run = std::move(r);
    if (const auto it = gpu.find(s.run.gpu_id); it != gpu.end()) std::tie(s.gpu_name, s.gpu_kind) = it->second;
    at[s.run.id] = out.size();
    out.push_back(std::move(s));
  }
  sqlite::Db db(kb.path(), SQLITE_OPEN_READONLY);
  auto st = db.prepare("SELECT run_id, status, count(*) AS n FROM results WHERE NOT retimed GROUP BY run_id, status");
  while (st.step()) {
    const auto it = at.find(st.i64("run_id"));
    if (it == at.end()) continue;
    auto& s = out[it->second];
    s.results += st.i64("n");
    s.by_status[st.text("status")] += st.i64("n");
  }
  return out;
}

std::vector<ProblemSummary> problem_summaries(const KnowledgeBase& kb) {
  sqlite::Db db(kb.path(), SQLITE_OPEN_READONLY);
  sqlite::ReadSnapshot snapshot(db);
  std::map<std::string, ProblemSummary> by;
  {
    auto st = db.prepare("SELECT problem, count(*) AS n, max(started_at) AS last FROM runs GROUP BY problem");
    while (st.step()) {
      auto& p = by[st.text("problem")];
      p.runs = st.i64("n");
      p.last_run_at = st.text("last");
    }
  }
  {
    auto st = db.prepare(
        "SELECT problem, count(*) AS n, total(status = 'ok') AS ok FROM results WHERE NOT retimed GROUP BY problem");
    while (st.step()) {
      auto& p = by[st.text("problem")];
      p.results = st.i64("n");
      p.ok = static_cast<int64_t>(st.real("ok"));
    }
  }
  {
    auto st = db.prepare(
        "SELECT DISTINCT r.problem AS problem, g.name AS name FROM runs r JOIN gpus g ON g.id = r.gpu_id "
        "ORDER BY 1, 2");
    while (st.step()) by[st.text("problem")].gpus.push_back(st.text("name"));
  }
  std::vector<ProblemSummary> out;
  for (auto& [name, p] : by) {
    p.problem = name;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<GpuSummary> gpu_summaries(const KnowledgeBase& kb) {
  std::vector<GpuSummary> out;
  std::map<int64_t, size_t> at;
  for (auto& g : kb.gpus()) {
    at[g.id] = out.size();
    out.push_back({std::move(g), 0, 0});
  }
  sqlite::Db db(kb.path(), SQLITE_OPEN_READONLY);
  sqlite::ReadSnapshot snapshot(db);
  for (const char* table : {"runs", "results"}) {
    auto st = db.prepare(std::string("SELECT gpu_id, count(*) AS n FROM ") + table + " GROUP BY gpu_id");
    while (st.step())
      if (const auto it = at.find(st.i64("gpu_id")); it != at.end())
        (std::string(table) == "runs" ? out[it->second].runs : out[it->second].results) = st.i64("n");
  }
  return out;
}

}  // namespace soltune::kb
