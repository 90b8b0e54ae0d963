#include "run/resume.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/space.hpp"
#include "kb/result_columns.hpp"

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

RecordedRun load_recorded(const KnowledgeBase& kb, int64_t run_id) {
  RecordedRun rec;
  for (const auto& r : kb.results(run_id))
    if (!r.retimed)  // a task's end re-timing: not a step of its search to replay
      rec.results[task_id(r.problem, r.variant, r.dtype, r.shape_key)][r.config_key] = kb::to_eval_result(r);
  for (const auto& b : kb.baselines(run_id)) rec.baselines.emplace(task_id(b.problem, b.variant, b.dtype, b.shape_key), b.baseline);
  return rec;
}

double seconds_used(const KnowledgeBase& kb, const RunRecord& run) {
  const auto results = kb.results(run.id);
  if (results.empty()) return 0;
  return std::max(0.0, iso_seconds(results.back().created_at) - iso_seconds(run.started_at));
}

namespace {

// "name=value" lines -> pairs, in order.
std::vector<std::pair<std::string, std::string>> setting_lines(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) out.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  return out;
}

// Whether the process that started `run` is alive on this host and is soltune (a pid reused by
// another program does not count).
bool still_running(const RunRecord& run) {
  if (run.status != "running" || run.info.pid <= 0 || run.info.host != this_host()) return false;
  if (::kill(static_cast<pid_t>(run.info.pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream cmd("/proc/" + std::to_string(run.info.pid) + "/cmdline", std::ios::binary);
  std::string argv((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
  return !cmd.is_open() || argv.find("soltune") != std::string::npos;
}

}  // namespace

std::string settings_text(const RunConfig& c) {
  std::string s;
  for (const auto& [name, value] : run_settings(c)) s += name + "=" + value + "\n";
  return s;
}

std::string this_host() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

// An unfinished run of a config that moved (a checkout moved or copied elsewhere): the latest one of
// a config of the same file name whose settings are these, else an error naming those there are.
std::optional<RunRecord> moved_run(const KnowledgeBase& kb, const RunInfo& info) {
  const auto name = std::filesystem::path(info.config_path).filename();
  std::optional<RunRecord> same;
  std::vector<RunRecord> others;
  for (auto& r : kb.runs()) {
    const bool unfinished = r.status == "running" || r.status == "interrupted" || r.status == "stopped";
    if (!unfinished || std::filesystem::path(r.info.config_path).filename() != name) continue;
    if (!r.info.settings.empty() && r.info.settings == info.settings)
      same = std::move(r);
    else
      others.push_back(std::move(r));
  }
  if (same || others.empty()) return same;
  std::string found;
  for (const auto& r : others)
    found += "\n  run " + std::to_string(r.id) + " of " + r.info.config_path + " (" + r.status + ", started " + r.started_at + ")";
  throw Error("--resume: " + kb.path().string() + " holds no unfinished run of " + info.config_path +
              "; of a config of that name elsewhere, with other settings:" + found +
              "\nresume it from its own path, or start a new run without --resume");
}

ResumePoint resume_run(KnowledgeBase& kb, const RunInfo& info, int64_t gpu_id, const Budget& budget) {
  auto last = kb.last_unfinished_run(info.config_path);
  if (!last) last = moved_run(kb, info);
  if (!last) throw Error("--resume: " + kb.path().string() + " holds no unfinished run of " + info.config_path);
  const std::string run = "--resume: run " + std::to_string(last->id) + " of " + last->info.config_path;
  if (still_running(*last))
    throw Error(run + " is still going: soltune process " + std::to_string(last->info.pid) + " on " + last->info.host +
                " runs it. Wait for it to end, or stop it (Ctrl-C, or kill " + std::to_string(last->info.pid) +
                ") and resume then");
  // Every setting the search depends on must be the one the run started with: each that differs is
  // named with both values.
  std::vector<std::string> differ;
  auto compare = [&](const std::string& name, const std::string& then, const std::string& now) {
    if (then != now) differ.push_back(name + ": " + (then.empty() ? "(none)" : then) + " then, " + (now.empty() ? "(none)" : now) + " now");
  };
  if (last->gpu_id != gpu_id) {
    std::string then, now;
    for (const auto& g : kb.gpus()) {
      if (g.id == last->gpu_id) then = g.device.name + " " + g.device.uuid;
      if (g.id == gpu_id) now = g.device.name + " " + g.device.uuid;
    }
    compare("GPU", then, now);
  }
  compare("backend", last->info.backend, info.backend);
  compare("toolchain", last->info.toolchain, info.toolchain);
  if (last->info.settings.empty()) {  // a run of an older file recorded its seed and budget only
    compare("seed", std::to_string(last->info.seed), std::to_string(info.seed));
    compare("budget", last->info.budget_text, info.budget_text);
  } else {
    const auto then = setting_lines(last->info.settings), now = setting_lines(info.settings);
    std::map<std::string, std::string> now_by(now.begin(), now.end());
    for (const auto& [name, value] : then) compare(name, value, now_by.count(name) ? now_by.at(name) : "");
  }
  if (!differ.empty()) {
    std::string what;
    for (const auto& d : differ) what += "\n  " + d;
    throw Error(run + " was started with other settings:" + what +
                "\nresume it with the settings it started with, or start a new run without --resume");
  }
  ResumePoint p{last->id, load_recorded(kb, last->id), kb.checkpoints(last->id), budget, last->info.config_path};
  if (p.budget.seconds > 0) p.budget.seconds = std::max(1.0, p.budget.seconds - seconds_used(kb, *last));
  kb.reopen_run(last->id);
  return p;
}

TaskBaseline ResumeEvaluator::baseline_within(const Task& t, double limit_s) {
  if (auto it = rec_.baselines.find(t.id()); it != rec_.baselines.end()) {
    auto b = it->second;
    b.replayed = true;
    return b;
  }
  return inner_.baseline_within(t, limit_s);
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
