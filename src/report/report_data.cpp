#include "report/report_data.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <tuple>

#include "core/audit.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "core/task.hpp"

namespace soltune::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool matches_gpu(const std::string& name, const std::string& fragment) {
  return fragment.empty() || lower(name).find(lower(fragment)) != std::string::npos;
}

// A task's FLOPs and bytes from its problem's templates; zeros, and a note, where they cannot be read.
struct Sizes {
  std::map<std::string, std::optional<ProblemSpec>> problems;
  std::vector<std::string>& notes;

  void fill(TaskView& t, const std::filesystem::path& templates) {
    auto it = problems.find(t.problem);
    if (it == problems.end()) {
      std::optional<ProblemSpec> p;
      try {
        p = load_problem(templates, t.problem);
      } catch (const Error& e) {
        notes.push_back("the roofline leaves out " + t.problem + ": its templates do not load (" + e.what() + ")");
      }
      it = problems.emplace(t.problem, std::move(p)).first;
    }
    if (!it->second) return;
    try {
      const ProblemSpec& p = *it->second;
      const Task task{&p, &p.variant(t.variant), parse_dtype(t.dtype), parse_shape(p, t.shape)};
      t.flops = task.flops();
      t.bytes = task.bytes();
    } catch (const Error& e) {
      notes.push_back("the roofline leaves out " + t.id() + ": " + e.what());
    }
  }
};

void add(TaskView& t, const ResultRecord& r) {
  // A task's end re-timing is no evaluation of its own: it only decides the best, as kb best does.
  if (r.retimed) {
    if (r.status == "ok" && !r.below_sol && (!t.best || faster(r, *t.best))) t.best = r;
    return;
  }
  Evaluation e;
  e.index = ++t.evaluations;
  e.status = r.status;
  e.proposer = r.proposer;
  e.config = r.config_key;
  const bool ok = r.status == "ok";
  e.time_us = ok ? r.time_us : kNaN;
  e.sol = ok ? r.sol_score : kNaN;
  e.rejected = !ok || r.below_sol;
  ++t.by_status[r.status];
  const std::string proposer = r.proposer.empty() ? "unrecorded" : r.proposer;
  ++t.by_proposer[proposer];
  if (std::isfinite(r.compile_ms)) t.compile_ms += r.compile_ms;
  t.cache_hits += r.cache_hit ? 1 : 0;
  if (std::isfinite(r.wall_ms)) t.gpu_ms += r.wall_ms;
  for (const auto& [name, m] : kGpuPhaseFields)
    if (std::isfinite(r.phases.*m)) t.phases.*m += r.phases.*m;
  if (!ok && !t.example_log.count(r.status)) t.example_log[r.status] = r.log.empty() ? r.accuracy : r.log;
  if (ok && !r.below_sol && (t.best_sol.empty() || r.sol_score > t.best_sol.back().second)) {
    t.best_sol.emplace_back(e.index, r.sol_score);
    ++t.wins[proposer];
  }
  if (ok && !r.below_sol && (!t.best || faster(r, *t.best))) t.best = r;
  t.points.push_back(std::move(e));
}

}  // namespace

std::vector<size_t> thin(size_t n, size_t max, const std::vector<size_t>& keep) {
  std::vector<size_t> out;
  const size_t step = n <= max || max == 0 ? 1 : (n + max - 1) / max;
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    while (k < keep.size() && keep[k] < i) ++k;
    if (i % step == 0 || (k < keep.size() && keep[k] == i)) out.push_back(i);
  }
  return out;
}

ReportData collect(const KnowledgeBase& kb, const std::filesystem::path& kb_path, const ReportOptions& o) {
  ReportData d;
  d.kb_path = kb_path.string();
  const auto gpus = kb.gpus();
  if (gpus.empty()) throw Error(kb_path.string() + ": the knowledge base holds no results (nothing to report)");
  std::map<int64_t, const GpuRecord*> by_id;
  for (const auto& g : gpus) by_id[g.id] = &g;
  // Tasks keyed by GPU and identity, each result in recording order (runs by id, then results).
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, TaskView> tasks;
  std::map<int64_t, bool> gpu_used;
  bool any = false;
  for (const auto& run : kb.runs()) {
    if (!o.problem.empty() && run.info.problem != o.problem) continue;
    const auto g = by_id.find(run.gpu_id);
    if (g == by_id.end() || !matches_gpu(g->second->device.name, o.gpu)) continue;
    for (const auto& r : kb.results(run.id)) {
      any = true;
      gpu_used[run.gpu_id] = true;
      auto& t = tasks[{g->second->device.name, r.problem, r.variant, r.dtype, r.shape_key}];
      if (t.problem.empty()) {
        t.gpu = g->second->device.name;
        t.problem = r.problem;
        t.variant = r.variant;
        t.dtype = r.dtype;
        t.shape = r.shape_key;
      }
      add(t, r);
      if (r.time_kind == "predicted") d.any_predicted = true;
    }
  }
  if (!any) {
    std::string what = o.problem.empty() ? "no result" : "no result of problem '" + o.problem + "'";
    if (!o.gpu.empty()) what += " on a GPU named like '" + o.gpu + "'";
    std::string have;
    for (const auto& g : gpus) have += (have.empty() ? "" : ", ") + g.device.name;
    throw Error(kb_path.string() + ": " + what + " (its GPUs: " + have + ")");
  }
  for (const auto& g : gpus) {
    if (!gpu_used.count(g.id)) continue;
    d.gpus.push_back(GpuView{g.device.name, g.kind == TimeKind::predicted, g.device.ceilings(), g.device.datasheet});
  }
  Sizes sizes{{}, d.notes};
  for (auto& [key, t] : tasks) {
    if (t.best) {
      t.t_ref_us = t.best->t_ref_us;
      t.t_sol_us = t.best->t_sol_us;
      const auto audits = kb.audits(*t.best);
      t.audited_clean = !audits.empty() && std::all_of(audits.begin(), audits.end(), [](const ToolAudit& a) {
        return a.verdict == AuditVerdict::passed;
      });
    } else {
      t.t_ref_us = t.t_sol_us = kNaN;
    }
    sizes.fill(t, o.templates);
    // Every improvement and every failure stays drawn; the rest is sampled evenly.
    std::vector<size_t> keep;
    for (size_t i = 0; i < t.points.size(); ++i) {
      const auto& p = t.points[i];
      const bool improved = std::any_of(t.best_sol.begin(), t.best_sol.end(), [&](const auto& b) { return b.first == p.index; });
      if (improved || p.rejected) keep.push_back(i);
    }
    if (keep.size() > o.max_points / 2) keep.resize(o.max_points / 2);  // a run of failures thins too
    std::vector<Evaluation> drawn;
    for (size_t i : thin(t.points.size(), o.max_points / 2, keep)) drawn.push_back(t.points[i]);
    t.points = std::move(drawn);
    d.tasks.push_back(std::move(t));
  }
  return d;
}

}  // namespace soltune::report
