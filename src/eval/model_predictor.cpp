#include "eval/model_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/candidates.hpp"
#include "eval/model_evaluator.hpp"

namespace soltune {

ModelPredictor::ModelPredictor(const Task& t, DeviceInfo d) : task_(t), dev_(std::move(d)) {}

std::string ModelPredictor::describe() const {
  const char* regs = task_.variant->registers.empty() ? "registers unknown" : "registers as the template estimates them";
  return std::string("the model over knobs and sizes (") + regs + "), " + dev_.name;
}

std::vector<double> ModelPredictor::predict(const std::vector<Config>& configs) {
  const Space space(*task_.variant, task_.fixed(dev_));
  const Resources unknown;  // no compile: registers and static shared memory unknown
  const Expr& registers = task_.variant->registers;
  std::vector<double> out;
  for (const auto& c : configs) {
    double t = std::numeric_limits<double>::infinity();  // cannot run: illegal, or past a device limit
    if (space.legal(c)) {
      const auto bindings = space.bind(c);
      try {
        const auto geo = eval_geometry(task_.variant->launch, bindings);
        // The template's own estimate of registers, where it gives one, sets the occupancy; only a
        // compile can say a configuration cannot launch, so the estimate never rules one out.
        Resources estimated = unknown;
        if (!registers.empty()) estimated.registers = static_cast<int>(std::clamp(std::ceil(registers.eval(bindings)), 1.0, 255.0));
        if (launch_limits(unknown, geo, dev_).empty()) t = predict_config(task_, bindings, estimated, geo, dev_).t_us;
      } catch (const Error&) {
      }
    }
    out.push_back(t);
  }
  return out;
}

bool can_model(const Task& t) { return t.variant && t.variant->launch.has_geometry(); }

}  // namespace soltune
