#pragma once
// Resuming a run: the search is re-run with the same seed and budget, and every configuration the
// interrupted run already evaluated is answered from its recorded result instead of the GPU. The
// strategies see exactly what they saw before, so they propose exactly what they proposed before:
// their populations and statistics are rebuilt, nothing finished is evaluated twice, and the budget
// ends where an uninterrupted run would have ended.
#include <map>
#include <string>

#include "core/run_config.hpp"
#include "core/task.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {

struct RecordedRun {
  std::map<std::string, std::map<std::string, EvalResult>> results;  // task id -> key -> result
  std::map<std::string, TaskBaseline> baselines;                      // task id -> the search's baseline
};

class ResumeEvaluator final : public Evaluator {
 public:
  ResumeEvaluator(Evaluator& inner, RecordedRun recorded) : inner_(inner), rec_(std::move(recorded)) {}
  const DeviceInfo& device() const override { return inner_.device(); }
  std::string backend_name() const override { return inner_.backend_name(); }
  TimeKind kind() const override { return inner_.kind(); }
  TaskBaseline baseline(const Task& t) override { return baseline_within(t, 0); }
  TaskBaseline baseline_within(const Task& t, double limit_s) override;
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) override;
  void prefetch(const Task& t, const std::vector<Config>& configs) override;  // what is not recorded
  std::optional<Retimed> retime(const Task& t, const std::vector<Config>& configs, int rounds) override {
    return inner_.retime(t, configs, rounds);
  }
  std::optional<GpuUse> gpu_use() const override { return inner_.gpu_use(); }
  std::unique_ptr<Predictor> predictor(const Task& t) override { return inner_.predictor(t); }
  int64_t replayed() const { return replayed_; }

 private:
  Evaluator& inner_;
  RecordedRun rec_;
  int64_t replayed_ = 0;
};

// Results keyed by task id and configuration key; baselines: each task's first (the search's).
RecordedRun load_recorded(const KnowledgeBase& kb, int64_t run_id);
// Wall time the run had used: from its start to its last recorded result (0 when none).
double seconds_used(const KnowledgeBase& kb, const RunRecord& run);

// Where a resumed run continues: the last unfinished run of the same config, which must have been
// started with the same GPU, seed, budget, backend and toolchain (an Error says which differs),
// what it recorded, and the seconds left of its budget. The run is marked running again.
struct ResumePoint {
  int64_t run = 0;
  RecordedRun recorded;
  std::map<std::string, std::pair<int64_t, std::string>> checkpoints;  // task id -> evaluated, state
  Budget budget;
  std::string config_path;  // the run's config as recorded: another path where the config moved
};
// Refused, naming why: a run still going (its soltune process alive on this host), or any setting
// that differs (GPU, backend, toolchain, each of run_settings), with both values.
ResumePoint resume_run(KnowledgeBase& kb, const RunInfo& info, int64_t gpu_id, const Budget& budget);

// RunInfo::settings for a config: run_settings as "name=value" lines.
std::string settings_text(const RunConfig& c);
// This machine's host name, as runs record it.
std::string this_host();

}  // namespace soltune
