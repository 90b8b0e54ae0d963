#pragma once
// The analytic model (docs/MODEL.md) as the search's Predictor: each configuration's static report
// (legality, launch geometry, and the ptxas resources where known) goes through predict_config.
// Every backend gives the knob-only report (knob_reports: no compile), so that the screen costs no
// compile and the replay backend's prior is the one a real run has. Nothing measured enters it.
#include <functional>
#include <map>
#include <string>

#include "core/task.hpp"

namespace soltune {

struct StaticReport {
  bool runs = false;  // compiled, and within the device limits
  Resources res;
  Geometry geo;
  Bindings bindings;  // the task's fixed symbols and the configuration's knobs
};
using StaticReporter = std::function<std::vector<StaticReport>(const std::vector<Config>&)>;

class ModelPredictor final : public Predictor {
 public:
  ModelPredictor(const Task& t, DeviceInfo d, StaticReporter report, std::string what);
  std::string describe() const override { return what_; }
  std::vector<double> predict(const std::vector<Config>& configs) override;

 private:
  Task task_;
  DeviceInfo dev_;
  StaticReporter report_;
  std::string what_;
};

// Static reports from the knobs and sizes alone: legality and launch geometry, registers unknown
// (occupancy then limited by threads and shared memory only). No compile: screening 4 candidates
// per proposal by compiling them made real runs compile-bound (docs/BENCHMARKS.md, session 3
// call 5), and on the recorded landscapes the knob-only prior ranks nearly as well.
StaticReporter knob_reports(const Task& t, const DeviceInfo& d);

// Whether the task's variant carries what the model needs (a launch geometry).
bool can_model(const Task& t);

}  // namespace soltune
