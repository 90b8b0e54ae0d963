#pragma once
// The analytic model (docs/MODEL.md) as the search's Predictor: each configuration's static report
// (did it compile, its ptxas resources, its launch geometry) goes through predict_config. Where the
// report comes from is the backend's business: the model and cuda backends compile (NVRTC, the
// disk cache the evaluation itself hits later), the replay backend reads what ptxas reported when
// the landscape was recorded. Nothing measured enters a prediction.
#include <functional>
#include <map>
#include <string>

#include "codegen/compiler.hpp"
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

// Static reports by compiling each configuration for `arch` (legality and geometry first, then
// NVRTC; a compile error or a device limit: runs = false).
StaticReporter compiled_reports(const Task& t, const DeviceInfo& d, const std::string& arch, const Compiler& c);

// Whether the task's variant carries what the model needs (a launch geometry).
bool can_model(const Task& t);

}  // namespace soltune
