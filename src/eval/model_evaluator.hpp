#pragma once
// The model backend: for machines without a GPU. Compiles every candidate with the real NVRTC for
// the target arch, reads the real ptxas resources, and predicts the time from occupancy
// (cuda_occupancy.h), waves over the SMs and a roofline of a known GPU. Its results are labelled
// `predicted` everywhere and never mixed with measurements.
#include "codegen/compiler.hpp"
#include "core/task.hpp"

namespace soltune {

struct Prediction {
  double t_us = 0;
  double bandwidth = 0;  // bytes/s the model expects the kernel to reach
  int blocks_per_sm = 0;
  std::string why;       // which term bounds the time
};

// The model's formula, exposed for tests and docs/MODEL.md:
//   resident threads = min(grid, occupancy x SMs) x block;  bytes in flight = resident threads x
//   bytes_in_flight_per_thread x (resident threads / what the SMs hold);  x = bytes in flight /
//   (achievable peak x latency);  bandwidth = achievable peak x x / (1 + x);
//   t = max(bytes / bandwidth x tail-wave factor x (1 + imbalance / waves), FLOPs / peak) + launch,
//   the peak of the unit the variant computes on (its `model: compute:`, FP32 unless it says).
Prediction predict_time(double flops, double bytes, double inflight_per_thread, const Resources& r,
                        const Geometry& g, const DeviceInfo& d, ComputeUnit unit = ComputeUnit::fp32);
// The same for one configuration of a task: bytes in flight from the variant's hint (else the bytes
// per thread), evaluated with the configuration's bindings.
Prediction predict_config(const Task& t, const Bindings& b, const Resources& r, const Geometry& g, const DeviceInfo& d);

class ModelEvaluator final : public Evaluator {
 public:
  ModelEvaluator(DeviceInfo d, const Compiler& c, std::string arch);
  const DeviceInfo& device() const override { return dev_; }
  std::string backend_name() const override { return "model"; }
  TimeKind kind() const override { return TimeKind::predicted; }
  TaskBaseline baseline(const Task& t) override;
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) override;
  // The model over knobs and sizes (eval/model_predictor.hpp: no compile).
  std::unique_ptr<Predictor> predictor(const Task& t) override;

 private:
  DeviceInfo dev_;
  const Compiler& compiler_;
  std::string arch_;
};

}  // namespace soltune
