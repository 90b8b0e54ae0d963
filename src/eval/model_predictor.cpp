#include "eval/model_predictor.hpp"

#include <limits>

#include "eval/candidates.hpp"
#include "eval/model_evaluator.hpp"

namespace soltune {

ModelPredictor::ModelPredictor(const Task& t, DeviceInfo d) : task_(t), dev_(std::move(d)) {}

std::string ModelPredictor::describe() const { return "the model over knobs and sizes (registers unknown), " + dev_.name; }

std::vector<double> ModelPredictor::predict(const std::vector<Config>& configs) {
  const Space space(*task_.variant, task_.fixed(dev_));
  const Resources unknown;  // no compile: registers and static shared memory unknown
  std::vector<double> out;
  for (const auto& c : configs) {
    double t = std::numeric_limits<double>::infinity();  // cannot run: illegal, or past a device limit
    if (space.legal(c)) {
      const auto bindings = space.bind(c);
      try {
        const auto geo = eval_geometry(task_.variant->launch, bindings);
        if (launch_limits(unknown, geo, dev_).empty()) t = predict_config(task_, bindings, unknown, geo, dev_).t_us;
      } catch (const Error&) {
      }
    }
    out.push_back(t);
  }
  return out;
}

bool can_model(const Task& t) { return t.variant && t.variant->launch.has_geometry(); }

}  // namespace soltune
