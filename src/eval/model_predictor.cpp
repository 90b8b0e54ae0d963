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

StaticReporter compiled_reports(const Task& t, const DeviceInfo& d, const std::string& arch, const Compiler& c) {
  return [t, d, arch, &c](const std::vector<Config>& configs) {
    auto batch = prepare_candidates(t, d, arch, configs);
    const auto compiled = c.compile_all(batch.requests);
    std::vector<StaticReport> out;
    for (auto& cand : batch.candidates) {
      StaticReport r;
      if (cand.request >= 0 && take_compile_result(cand, compiled[static_cast<size_t>(cand.request)]) &&
          launch_limits(cand.result.res, cand.result.geo, d).empty()) {
        r.runs = true;
        r.res = cand.result.res;
        r.geo = cand.result.geo;
        r.bindings = std::move(cand.bindings);
      }
      out.push_back(std::move(r));
    }
    return out;
  };
}

bool can_model(const Task& t) { return t.variant && !t.variant->launch.grid.empty() && !t.variant->launch.block.empty(); }

}  // namespace soltune
