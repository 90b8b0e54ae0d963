#pragma once
// The archive port bound to a knowledge base: what a run knows before each task (the keys earlier
// runs evaluated, the seeds they suggest) and where its events go (every baseline, result,
// checkpoint and demotion recorded as it completes). Each event is passed on to the display after
// it is recorded.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agents/archive.hpp"
#include "kb/knowledge_base.hpp"
#include "run/resume.hpp"

namespace soltune {

// Configurations from elsewhere proposed first in each task.
inline constexpr size_t kSeedsPerTask = 4;

class KbArchive final : public Archive {
 public:
  // `recorded`: what a resumed run recorded before (replayed, not written again), with its checkpoints.
  KbArchive(KnowledgeBase& kb, int64_t run, int64_t gpu_id, const RunInfo& info, const DeviceInfo& device,
            const ResumePoint* resumed, TaskObserver& display);

  std::set<std::string> known(const Task& t) override;
  std::vector<std::string> seeds(const Task& t) override;

  void on_baseline(const Task& t, const TaskBaseline& b) override;
  void on_result(const Task& t, const EvalResult& r, const SolScore& s) override;
  void on_checkpoint(const Task& t, int64_t evaluated, const std::string& state) override;
  void on_seeds(const Task& t, size_t n, size_t presets) override { display_.on_seeds(t, n, presets); }
  void on_retime(const Task& t, const TaskBaseline& b, const EvalResult& best, const SolScore& s) override;
  void on_demoted(const Task& t, const EvalResult& r) override;
  void on_warning(const Task& t, const std::string& text) override { display_.on_warning(t, text); }

  size_t checkpoints_recorded() const { return recorded_checkpoints_.size(); }
  int checkpoints_matched() const { return checkpoints_matched_; }
  // Per task id: how many candidates failed to compile, and the first one's compile log.
  const std::map<std::string, std::pair<int64_t, std::string>>& compile_errors() const { return compile_errors_; }

 private:
  KnowledgeBase& kb_;
  int64_t run_, gpu_id_;
  const RunInfo& info_;
  const DeviceInfo& device_;
  const ResumePoint* resumed_;
  TaskObserver& display_;
  std::map<std::string, std::pair<int64_t, std::string>> recorded_checkpoints_;
  int checkpoints_matched_ = 0;
  std::map<std::string, std::pair<int64_t, std::string>> compile_errors_;
};

}  // namespace soltune
