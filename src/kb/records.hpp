#pragma once
// The rows of a knowledge base as plain values: what a run writes and what queries return.
#include <cstdint>
#include <string>

#include "core/device.hpp"
#include "core/measure.hpp"
#include "core/task.hpp"

namespace soltune {

// What started a run, for reproducing it later.
struct RunInfo {
  std::string config_path, problem;
  uint64_t seed = 0;
  std::string backend;  // "cuda" or "model"
  std::string budget_text;
  std::string soltune_version;
  std::string command_line;
  std::string toolchain;  // "nvrtc 13.0, driver 13.0, runtime 13.0": results apply under this one only
  std::string settings;   // core's run_settings, a "name=value" line each ("" in runs of older files)
  int64_t pid = 0;        // the process that ran it, on `host` (0 in runs of older files)
  std::string host;
};

struct RunRecord {
  int64_t id = 0, gpu_id = 0;
  RunInfo info;
  std::string status;  // running, finished, interrupted, stopped, failed
  std::string started_at, finished_at;  // ISO-8601 UTC; finished_at "" while running
  std::string notes;                    // what the run left out and why, one line each
};

struct GpuRecord {
  int64_t id = 0;
  DeviceInfo device;
  TimeKind kind = TimeKind::measured;
  std::string first_seen_at, last_seen_at;
};

struct BaselineRecord {
  int64_t id = 0, run_id = 0;
  std::string problem, variant, dtype, shape_key;
  TaskBaseline baseline;
  std::string created_at;
};

// One evaluated candidate.
struct ResultRecord {
  int64_t id = 0, run_id = 0, gpu_id = 0;
  std::string gpu_name, problem, variant, dtype, shape_key;
  std::string config_key;  // canonical, "BLOCK=256,VEC=4"
  std::string status;      // status_name(Status)
  std::string time_kind;   // "measured" or "predicted"
  std::string source_hash;
  double time_us = 0;      // median (or the prediction)
  double min_us = 0, q1_us = 0, q3_us = 0, max_us = 0;
  int reps = 0;
  double t_ref_us = 0, t_sol_us = 0, sol_score = 0, sol_execbench = 0;
  bool sol_valid = false, below_sol = false;
  Resources res;
  Geometry geo;
  Accuracy acc;
  std::string accuracy;  // acc.summary() as recorded; "" when no check ran (e.g. a prediction)
  double compile_ms = 0;
  bool cache_hit = false;
  int occupancy_blocks = 0;
  std::string log, created_at;  // created_at: ISO-8601 UTC
  std::string proposer;         // seed, random, evolution, enumeration ("" before schema v4)
  double wall_ms = 0;           // the evaluation's time on the GPU side: checks, timing, transfers
  GpuPhases phases;             // its share by phase (zeros for predictions, and before schema v13)
  bool retimed = false;         // a task's end re-timing, beside T_ref (a second row of that configuration)
};

// Whether a is faster than b in the order the knowledge base's queries pick the best by (query.cpp's
// kFastestFirst): measurements before predictions, then re-timed results by their time over their
// re-timed T_ref, then the search's times.
inline bool faster(const ResultRecord& a, const ResultRecord& b) {
  const bool am = a.time_kind == "measured", bm = b.time_kind == "measured";
  if (am != bm) return am;
  if (a.retimed != b.retimed) return a.retimed;
  const auto key = [](const ResultRecord& r) { return r.retimed && r.t_ref_us > 0 ? r.time_us / r.t_ref_us : r.time_us; };
  return key(a) < key(b);
}

}  // namespace soltune
