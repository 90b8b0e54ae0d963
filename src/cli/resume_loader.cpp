#include "cli/resume_loader.hpp"

#include <ctime>
#include <iomanip>
#include <sstream>

namespace soltune::cli {
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

}  // namespace soltune::cli
