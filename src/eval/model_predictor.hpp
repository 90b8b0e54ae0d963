#pragma once
// The analytic model (docs/MODEL.md) as the search's Predictor, from each configuration's knobs and
// sizes alone: legality and launch geometry, registers unknown (occupancy then limited by threads
// and shared memory only). Every backend gives this one, so that the screen costs no compile and
// the replay backend's prior is the one a real run has: screening 4 candidates per proposal by
// compiling them made real runs compile-bound (docs/FINDINGS.md), and on the
// recorded landscapes the knob-only prior ranks nearly as well. Nothing measured enters it.
#include <string>

#include "core/task.hpp"

namespace soltune {

class ModelPredictor final : public Predictor {
 public:
  ModelPredictor(const Task& t, DeviceInfo d);
  std::string describe() const override;
  std::vector<double> predict(const std::vector<Config>& configs) override;

 private:
  Task task_;
  DeviceInfo dev_;
};

// Whether the task's variant carries what the model needs (a launch geometry).
bool can_model(const Task& t);

}  // namespace soltune
