#pragma once
// The replay backend: answers every evaluation from recorded landscapes (core/landscape.hpp) instead
// of a GPU, so searches can be compared, and the whole system run, in CI. A configuration missing
// from its task's landscape was not legal when it was recorded: it comes back `illegal`.
#include <map>
#include <string>
#include <vector>

#include "core/landscape.hpp"

namespace soltune {

class ReplayEvaluator final : public Evaluator {
 public:
  // The landscapes must outlive the evaluator; all must come from one GPU, and be measured or all
  // predicted.
  explicit ReplayEvaluator(std::vector<const Landscape*> landscapes);
  const DeviceInfo& device() const override { return dev_; }
  std::string backend_name() const override { return "replay"; }
  TimeKind kind() const override { return kind_; }
  TaskBaseline baseline(const Task& t) override;
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) override;
  // The model over knobs and sizes, where the task's variant has its launch geometry (a config's
  // template, or bench-search's --templates).
  std::unique_ptr<Predictor> predictor(const Task& t) override;
  int64_t evaluations() const { return evaluations_; }

 private:
  const Landscape& find(const Task& t) const;

  std::map<std::string, const Landscape*> by_task_;
  DeviceInfo dev_;
  TimeKind kind_ = TimeKind::measured;
  int64_t evaluations_ = 0;
};

}  // namespace soltune
