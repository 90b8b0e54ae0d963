#include "cli/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace soltune::cli {
namespace {

using Clock = std::chrono::steady_clock;

const char* label(const Evaluator& ev) { return ev.kind() == TimeKind::predicted ? " (predicted)" : ""; }

std::string format(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

std::string minutes(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

std::string cut(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width > 3 ? width - 3 : 0) + "...";
}

}  // namespace

std::string failure_reason(const EvalResult& r, size_t width) {
  std::istringstream in(r.log);
  std::string line, first;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (first.empty()) first = line;
    // NVRTC logs name the file and line before "error:"; the first such line is the cause.
    if (r.status != Status::compile_error) break;
    if (const auto e = line.find("error"); e != std::string::npos) {
      first = line;
      break;
    }
  }
  return first.empty() ? "no reason given" : cut(first, width);
}

std::string wrap(const std::string& text, size_t width, size_t indent) {
  // Words, each with whether it continues the one before without a space (the pieces of a word
  // longer than a line, e.g. a configuration key broken after its commas).
  std::vector<std::pair<std::string, bool>> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) {
    bool glued = false;
    while (w.size() > width - indent) {
      auto at = w.rfind(',', width - indent - 1);
      if (at == std::string::npos || at == 0) at = width - indent - 1;
      words.emplace_back(w.substr(0, at + 1), glued);
      w = w.substr(at + 1);
      glued = true;
    }
    words.emplace_back(w, glued);
  }
  const std::string lead = text.substr(0, text.find_first_not_of(' '));  // the first line keeps its indent
  std::string out, line = lead;
  bool first = true;
  for (const auto& [w, glued] : words) {
    const bool fresh = line.size() == (first ? lead.size() : indent);
    if (!fresh && line.size() + (glued ? 0 : 1) + w.size() > width) {
      out += line + "\n";
      line = std::string(indent, ' ');
      first = false;
    }
    const bool at_start = line.size() == (first ? lead.size() : indent);
    line += (at_start || glued ? "" : " ") + w;
  }
  if (line.size() > (first ? lead.size() : indent)) out += line + "\n";
  return out;
}

Progress::Progress(const Evaluator& ev, Mode mode) : ev_(ev), mode_(mode) {
  if (mode_ == Mode::live) block_ = std::make_unique<LiveBlock>(stdout);
}

Progress::Mode Progress::mode_for_stdout(bool quiet) {
  if (quiet) return Mode::quiet;
  return stdout_is_live_terminal() ? Mode::live : Mode::lines;
}

Progress::TaskLine& Progress::line_for(const Task& t) {
  const auto id = t.id();
  auto [it, fresh] = index_.emplace(id, tasks_.size());
  if (fresh) {
    tasks_.emplace_back();
    tasks_.back().id = id;
  }
  return tasks_[it->second];
}

void Progress::print_event(const std::string& text) {
  if (block_) {
    block_->event(text);
    redraw(true);
  } else {
    std::fputs(text.c_str(), stdout);
    if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
    std::fflush(stdout);
  }
}

void Progress::warning(const std::string& text) {
  if (block_) {
    print_event("warning: " + text);
  } else {
    std::fprintf(stderr, "soltune: warning: %s\n", text.c_str());
  }
}

void Progress::header(const RunConfig& cfg, const std::filesystem::path& kb, const Budget& budget) {
  budget_ = budget;
  const auto& d = ev_.device();
  const auto& c = d.ceilings();
  std::printf("soltune: %s on %s (%s), backend %s%s\n", cfg.problem.c_str(), d.name.c_str(), d.arch().c_str(),
              ev_.backend_name().c_str(),
              ev_.kind() == TimeKind::predicted ? ": every time below is a model prediction, not a measurement" : "");
  std::printf("ceilings (%s): %.0f GB/s", c.source.c_str(), c.mem_bw / 1e9);
  if (c.read_bw > 0) std::printf(" (read %.0f, T_SOL's bandwidth %.0f)", c.read_bw / 1e9, c.sol_bw() / 1e9);
  std::printf(", %.1f TFLOP/s FP32, %.0f TFLOP/s 16-bit tensor", c.fp32 / 1e12, c.tensor_16 / 1e12);
  if (d.measured)
    std::printf("; datasheet %.0f GB/s, %.1f TFLOP/s", d.datasheet.mem_bw / 1e9, d.datasheet.fp32 / 1e12);
  std::printf("\nknowledge base: %s\nbudget: %s; seed %llu\n", kb.string().c_str(), budget.describe().c_str(),
              static_cast<unsigned long long>(cfg.seed));
  std::fflush(stdout);
}

void Progress::baseline(const Task& t, const TaskBaseline& b) {
  bytes_[t.id()] = b.bytes;
  line_for(t);
  // What the baseline is, and the backend's note, once each while they stay the same.
  std::string text;
  // A library's name where it timed T_ref (the note says which plan), else the baseline kernels'.
  const auto& lib = t.problem->baseline_library;
  const std::string what = lib && b.source == lib->label ? lib->label : t.problem->baseline_description;
  if (what != last_baseline_description_) {
    last_baseline_description_ = what;
    text += "baseline (T_ref): " + what + "\n";
  }
  char buf[256];
  // A problem whose FLOPs count against a tensor ceiling says so: a SIMT kernel's SOL is then far below 1.
  const auto unit = t.problem->compute_unit(t.dtype);
  const std::string at = unit == ComputeUnit::fp32 ? "" : " (FLOPs at the " + std::string(compute_unit_name(unit)) + " rate)";
  std::snprintf(buf, sizeof buf, "task %s: T_ref %.1f us, T_SOL %.1f us%s%s", t.id().c_str(), b.t_ref_us, b.t_sol_us,
                at.c_str(), label(ev_));
  text += buf;
  if (!b.note.empty() && b.note != last_baseline_note_) {  // below the task it belongs to
    last_baseline_note_ = b.note;
    text += "\n  " + b.note;
  }
  print_event(text);
}

void Progress::result(const Task& t, const EvalResult& r, const SolScore& s) {
  ++done_;
  const auto now = Clock::now();
  auto& line = line_for(t);
  line.seconds += std::chrono::duration<double>(now - last_result_at_).count();
  last_result_at_ = now;
  line.last = now;
  ++line.evals;
  // GPU-side overheads of this run only: results replayed on resume were measured before (the replay
  // backend reports no GPU time of its own).
  if (r.kind == TimeKind::measured && !r.replayed && r.wall_ms > 0 && (r.status == Status::ok || r.status == Status::slow)) {
    wall_ms_.push_back(r.wall_ms);
    // The kernels' own event times where the worker sent them (the probe's included), else the
    // admitted repetitions' median times their count.
    const double kernels = r.phases.kernels > 0 ? r.phases.kernels : r.time.median_us * r.time.reps / 1000.0;
    overhead_ms_.push_back(r.wall_ms - kernels);
    if (r.phases.kernels > 0) phases_.emplace_back(r.wall_ms, r.phases);
  }
  // This run's compiles (results replayed on resume were compiled before).
  if (!r.replayed) {
    ++results_recorded_;
    if (r.cache_hit) ++cache_hits_;
    else if (r.compile_ms > 0) compile_ms_.push_back(r.compile_ms);
    if (r.res.spill_stores > 0 || r.res.spill_loads > 0) {
      auto& [count, fastest] = spilled_[t.id()];
      ++count;
      if (r.status == Status::ok && (fastest == 0 || r.time.median_us < fastest)) fastest = r.time.median_us;
    }
  }
  const bool ok = r.status == Status::ok && !s.below_sol;
  const bool better = ok && (line.best_us == 0 || r.time.median_us < line.best_us);
  if (better) {
    line.best_us = r.time.median_us;
    line.best_sol = s.score;
  }
  if (r.status != Status::ok && r.status != Status::slow) ++line.failed;
  if (r.kind == TimeKind::predicted && r.status == Status::ok && !r.replayed) predicted_us_[t.id()].push_back(r.time.median_us);
  if (mode_ == Mode::quiet) return;

  const std::string status = std::string(status_name(r.status)) + (r.replayed ? "*" : "");
  std::string what;
  if (r.status == Status::ok) {
    what = format("%.1f us", r.time.median_us) + format(" %.0f GB/s", bytes_[t.id()] / (r.time.median_us * 1e-6) / 1e9) +
           format(" SOL %.3f", s.score);
    if (s.below_sol) what += " BELOW T_SOL: re-validate, not counted";
  } else if (r.status != Status::slow) {
    what = failure_reason(r);
  }
  if (r.log.find("(moved during the measurement)") != std::string::npos) what += " WARNING: SM clock moved";
  last_result_ = t.id() + " " + status + (what.empty() ? "" : " " + what);

  if (mode_ == Mode::lines) {
    std::string total = budget_.evals > 0 ? "/" + std::to_string(budget_.evals) : "";
    const std::string said = what.empty() ? "" : (r.status == Status::ok ? " " : ": ") + what;
    std::printf("[%4lld%s] %s %s%s%s | %s\n", static_cast<long long>(done_), total.c_str(), t.id().c_str(), status.c_str(),
                said.c_str(),
                line.best_us > 0 ? format(" | best %.1f us", line.best_us).c_str() : "", r.key.c_str());
    std::fflush(stdout);
    return;
  }
  // Live: what a user should see goes above the block; the rest only updates it.
  if (better)
    print_event("new best  " + t.id() + format(": %.1f us", r.time.median_us) + format(", SOL %.3f", s.score) + "  " + r.key);
  else if (r.status == Status::wrong_answer || r.status == Status::fault || r.status == Status::timeout ||
           r.status == Status::launch_error || s.below_sol)
    print_event(status + "  " + t.id() + ": " + (what.empty() ? "" : what + "  ") + r.key);
  else
    redraw(false);
}

std::string Progress::budget_left() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  std::string left;
  if (budget_.evals > 0) left = std::to_string(std::max<int64_t>(0, budget_.evals - done_)) + " evaluations";
  if (budget_.seconds > 0) left += (left.empty() ? "" : ", ") + minutes(std::max(0.0, budget_.seconds - elapsed));
  return left;
}

void Progress::redraw(bool force) {
  if (!block_) return;
  const auto now = Clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;  // at most ten frames a second
  last_draw_ = now;
  const size_t cols = static_cast<size_t>(std::max(40, block_->columns() - 1));
  // As many tasks as fit with room for the lines above: the ones worked on most recently, in order.
  const size_t room = static_cast<size_t>(std::max(3, block_->rows() / 2 - 3));
  std::vector<size_t> shown(tasks_.size());
  for (size_t i = 0; i < shown.size(); ++i) shown[i] = i;
  if (shown.size() > room) {
    std::stable_sort(shown.begin(), shown.end(), [&](size_t a, size_t b) { return tasks_[a].last > tasks_[b].last; });
    shown.resize(room - 1);
    std::sort(shown.begin(), shown.end());
  }
  size_t id_width = 4;
  for (size_t i : shown) id_width = std::max(id_width, tasks_[i].id.size());
  id_width = std::min(id_width, cols > 44 ? cols - 44 : 4);
  std::vector<std::string> lines;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s %6s %5s %11s %6s %7s", static_cast<int>(id_width), "task", "evals", "fail",
                "best us", "SOL", "time");
  lines.emplace_back(buf);
  int64_t hidden_evals = 0;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const auto& t = tasks_[i];
    if (!std::binary_search(shown.begin(), shown.end(), i)) {
      hidden_evals += t.evals;
      continue;
    }
    std::snprintf(buf, sizeof buf, "%-*s %6lld %5lld %11s %6s %7s", static_cast<int>(id_width),
                  cut(t.id, id_width).c_str(), static_cast<long long>(t.evals), static_cast<long long>(t.failed),
                  t.best_us > 0 ? format("%.1f", t.best_us).c_str() : "-",
                  t.best_us > 0 ? format("%.3f", t.best_sol).c_str() : "-", minutes(t.seconds).c_str());
    lines.emplace_back(buf);
  }
  if (shown.size() < tasks_.size())
    lines.push_back("... and " + std::to_string(tasks_.size() - shown.size()) + " more tasks (" +
                    std::to_string(hidden_evals) + " evaluations)");
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string total = budget_.evals > 0 ? "/" + std::to_string(budget_.evals) : "";
  lines.push_back(std::to_string(done_) + total + " evaluated, " + minutes(elapsed) + " elapsed, left: " + budget_left());
  if (!last_result_.empty()) lines.push_back("last: " + last_result_);
  block_->draw(lines);
}

void Progress::seeds(const Task& t, size_t n, size_t presets) {
  line_for(t);
  std::string text;
  if (n)
    text = "task " + t.id() + ": seeded with " + std::to_string(n) +
           " configuration(s) that did best at other shapes, on other GPUs, under an earlier template text or timed "
           "another way";
  if (presets)
    text += (text.empty() ? "" : "\n") + std::string("task ") + t.id() + ": " + std::to_string(presets) +
            " preset(s) of the template legal here, tried first";
  if (!text.empty()) print_event(text);
}

void Progress::retime(const Task& t, const TaskBaseline& b, const EvalResult& best, const SolScore& s) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "task %s re-timed interleaved: T_ref %.1f us, best %.1f us, SOL %.3f / %.3f",
                t.id().c_str(), b.t_ref_us, best.time.median_us, s.score, s.execbench);
  print_event(std::string(buf) + "\n  " + best.key);
}

}  // namespace soltune::cli
