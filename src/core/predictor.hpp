#pragma once
// What is known about a configuration before the GPU times it. A real run compiles every candidate
// anyway, and the ptxas report (registers, spills, shared memory) plus the launch geometry and the
// variant's model hints let an analytic model predict its time (docs/MODEL.md). The search uses
// such predictions only to rank candidates (the screen, docs/SEARCH.md); they are never results.
// src/eval implements it for each backend; search and agents see only this interface.
#include <string>
#include <vector>

#include "core/space.hpp"

namespace soltune {

class Predictor {
 public:
  virtual ~Predictor() = default;
  // What the prediction rests on, for the run's account ("model over ptxas reports, NVIDIA H200").
  virtual std::string describe() const = 0;
  // Predicted time in microseconds for each configuration, in order: +infinity where the static
  // report says it cannot run (a compile error, a device limit). Deterministic: the same
  // configurations, the same predictions. May compile (a backend's compiles are cached).
  virtual std::vector<double> predict(const std::vector<Config>& configs) = 0;
};

}  // namespace soltune
