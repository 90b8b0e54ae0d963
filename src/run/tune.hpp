#pragma once
// A tuning run over a knowledge base: the façade `soltune tune` drives. Opening it opens the
// knowledge base and begins a run there (or reopens the one a resume continues); run() dispatches
// the config's tasks over the evaluator, records everything as it completes, and returns how the
// run ended as a value. What a user sees while it runs goes to the display observer.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/dispatcher.hpp"
#include "kb/knowledge_base.hpp"
#include "run/resume.hpp"

namespace soltune {

struct TuneRequest {
  RunConfig cfg;                  // with the command line's overrides applied
  std::filesystem::path kb;       // the knowledge base file
  RunInfo info;                   // what the run records of itself
  bool resume = false;            // continue the config's last unfinished run
  std::optional<std::set<std::string>> only_tasks;  // task ids to run (replay: those with a landscape)
  std::string resume_hint;        // the command that continues the run, for the message of a stop
};

// What a run records of itself: the config (its canonical path), seed, budget and settings, this
// soltune, the backend and toolchain it measures with, the command line, and this process and host.
RunInfo describe_run(const RunConfig& cfg, const std::string& backend, const std::string& toolchain,
                     const std::string& command_line);

// A task whose every candidate failed to compile: its template is broken, not slow.
struct BrokenTask {
  std::string task_id;
  std::filesystem::path source;
  std::string first_log;
};

struct TuneOutcome {
  enum class End { finished, interrupted, failed };
  End end = End::finished;
  std::vector<TaskReport> reports;
  size_t checkpoints_recorded = 0;  // a resumed run: checkpoints it had recorded
  int checkpoints_matched = 0;      // ... and how many the replayed search met exactly
  std::optional<BrokenTask> broken;
};

class TuneRun {
 public:
  // A knowledge base file that is not one stops here, before anything is tuned; so does a resume
  // whose settings differ from the run it would continue.
  TuneRun(TuneRequest req, Evaluator& ev);
  ~TuneRun();
  int64_t id() const { return run_; }
  const std::filesystem::path& kb_path() const { return req_.kb; }
  const Budget& budget() const { return budget_; }  // what is left of it for a resumed run
  size_t resumed_tasks() const { return resumed_ ? resumed_->recorded.results.size() : 0; }
  // The config path the resumed run recorded ("" for a new run): another where the config moved.
  std::string resumed_config() const { return resumed_ ? resumed_->config_path : std::string(); }
  // The config's variants that cannot run on this device, each with why (also noted in the run).
  const std::vector<std::string>& left_out() const { return left_out_; }
  // An error of the machine (a full disk, a lost GPU) marks the run stopped and throws an Error that
  // says what was kept and how to continue.
  TuneOutcome run(TaskObserver& display, const std::atomic<bool>* stop);

 private:
  TuneRequest req_;
  Evaluator& ev_;
  KnowledgeBase kb_;
  int64_t gpu_ = 0, run_ = 0;
  Budget budget_;
  std::unique_ptr<ResumePoint> resumed_;
  std::vector<std::string> left_out_;
};

}  // namespace soltune
