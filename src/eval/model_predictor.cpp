#include "eval/model_predictor.hpp"

#include <limits>

#include "eval/candidates.hpp"
#include "eval/model_evaluator.hpp"

namespace soltune {

ModelPredictor::ModelPredictor(const Task& t, DeviceInfo d, StaticReporter report, std::string what)
    : task_(t), dev_(std::move(d)), report_(std::move(report)), what_(std::move(what)) {}

std::vector<double> ModelPredictor::predict(const std::vector<Config>& configs) {
  const auto reports = report_(configs);
  std::vector<double> out;
  for (const auto& r : reports)
    out.push_back(r.runs ? predict_config(task_, r.bindings, r.res, r.geo, dev_).t_us
                         : std::numeric_limits<double>::infinity());
  return out;
}

StaticReporter knob_reports(const Task& t, const DeviceInfo& d) {
  return [t, d](const std::vector<Config>& configs) {
    const Space space(*t.variant, t.fixed(d));
    std::vector<StaticReport> out;
    for (const auto& c : configs) {
      StaticReport r;
      if (space.legal(c)) {
        r.bindings = space.bind(c);
        try {
          r.geo = eval_geometry(t.variant->launch, r.bindings);
          r.runs = launch_limits(r.res, r.geo, d).empty();
        } catch (const Error&) {
          r.runs = false;
        }
      }
      out.push_back(std::move(r));
    }
    return out;
  };
}

bool can_model(const Task& t) { return t.variant && !t.variant->launch.grid.empty() && !t.variant->launch.block.empty(); }

}  // namespace soltune
