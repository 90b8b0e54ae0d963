#include "run/resume.hpp"

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <sstream>

#include "core/error.hpp"
#include "core/space.hpp"

namespace soltune {
namespace {

std::string task_id(const std::string& problem, const std::string& variant, const std::string& dtype,
                    const std::string& shape) {
  return problem + "/" + variant + "/" + dtype + "/" + shape;
}

// "2026-11-29T10:33:43.123Z" -> seconds since the epoch.
double iso_seconds(const std::string& s) {
  std::tm tm{};
  std::istringstream in(s);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return 0;
  double frac = 0;
  if (const auto dot = s.find('.'); dot != std::string::npos) frac = std::stod("0" + s.substr(dot, s.find('Z') - dot));
  return static_cast<double>(timegm(&tm)) + frac;
}

}  // namespace

EvalResult to_eval_result(const ResultRecord& r) {
  EvalResult e;
  e.key = r.config_key;
  const auto parts = key_values(r.config_key);
  if (!parts) throw Error("knowledge base: malformed configuration key '" + r.config_key + "'");
  for (const auto& [name, v] : *parts) e.config.values.push_back(v);
  e.status = parse_status(r.status);
  e.kind = r.time_kind == "predicted" ? TimeKind::predicted : TimeKind::measured;
  e.log = r.log;
  e.res = r.res;
  e.geo = r.geo;
  e.time.median_us = r.time_us;
  e.time.min_us = r.min_us;
  e.time.q1_us = r.q1_us;
  e.time.q3_us = r.q3_us;
  e.time.max_us = r.max_us;
  e.time.reps = r.reps;
  e.acc = r.acc;
  e.compile_ms = r.compile_ms;
  e.cache_hit = r.cache_hit;
  e.occupancy_blocks = r.occupancy_blocks;
  e.proposer = r.proposer;
  return e;
}

RecordedRun load_recorded(const KnowledgeBase& kb, int64_t run_id) {
  RecordedRun rec;
  for (const auto& r : kb.results(run_id))
    rec.results[task_id(r.problem, r.variant, r.dtype, r.shape_key)][r.config_key] = to_eval_result(r);
  for (const auto& b : kb.baselines(run_id)) rec.baselines.emplace(task_id(b.problem, b.variant, b.dtype, b.shape_key), b.baseline);
  return rec;
}

double seconds_used(const KnowledgeBase& kb, const RunRecord& run) {
  const auto results = kb.results(run.id);
  if (results.empty()) return 0;
  return std::max(0.0, iso_seconds(results.back().created_at) - iso_seconds(run.started_at));
}

ResumePoint resume_run(KnowledgeBase& kb, const RunInfo& info, int64_t gpu_id, const Budget& budget) {
  const auto last = kb.last_unfinished_run(info.config_path);
  if (!last) throw Error("--resume: " + kb.path().string() + " holds no unfinished run of " + info.config_path);
  if (last->gpu_id != gpu_id || last->info.seed != info.seed || last->info.budget_text != info.budget_text ||
      last->info.backend != info.backend || last->info.toolchain != info.toolchain)
    throw Error("--resume: run " + std::to_string(last->id) + " was started on another GPU, backend or toolchain (" +
                last->info.toolchain + "), or with seed " + std::to_string(last->info.seed) + " and budget " +
                last->info.budget_text + ": resume it with the same settings");
  ResumePoint p{last->id, load_recorded(kb, last->id), kb.checkpoints(last->id), budget};
  if (p.budget.seconds > 0) p.budget.seconds = std::max(1.0, p.budget.seconds - seconds_used(kb, *last));
  kb.reopen_run(last->id);
  return p;
}

TaskBaseline ResumeEvaluator::baseline(const Task& t) {
  if (auto it = rec_.baselines.find(t.id()); it != rec_.baselines.end()) {
    auto b = it->second;
    b.replayed = true;
    return b;
  }
  return inner_.baseline(t);
}

void ResumeEvaluator::prefetch(const Task& t, const std::vector<Config>& configs) {
  const Space space(*t.variant, t.fixed(device()));
  const auto task = rec_.results.find(t.id());
  std::vector<Config> fresh;
  for (const auto& c : configs)
    if (task == rec_.results.end() || !task->second.count(space.key(c))) fresh.push_back(c);
  if (!fresh.empty()) inner_.prefetch(t, fresh);
}

std::vector<EvalResult> ResumeEvaluator::evaluate(const Task& t, const std::vector<Config>& configs) {
  const Space space(*t.variant, t.fixed(device()));
  const auto task = rec_.results.find(t.id());
  std::vector<EvalResult> out(configs.size());
  std::vector<Config> fresh;
  std::vector<size_t> where;
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto key = space.key(configs[i]);
    if (task != rec_.results.end())
      if (auto it = task->second.find(key); it != task->second.end()) {
        out[i] = it->second;
        out[i].config = configs[i];
        out[i].replayed = true;
        inner_.note_result(t, out[i]);
        ++replayed_;
        continue;
      }
    fresh.push_back(configs[i]);
    where.push_back(i);
  }
  if (!fresh.empty()) {
    auto results = inner_.evaluate(t, fresh);
    for (size_t j = 0; j < results.size(); ++j) out[where[j]] = std::move(results[j]);
  }
  return out;
}

}  // namespace soltune
