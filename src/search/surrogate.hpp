#pragma once
// The screen's judge: a configuration's expected log time before it is measured. The prior is the
// predictor's time (the analytic model over the static report, core/predictor.hpp); what this
// task's measurements taught corrects it. The residual log(measured / predicted) is fitted as a
// mean, plus one effect per knob value (ridge regression on one-hot knob values: "HINT=1 is 30%
// slower than the model thinks" is learned from a few results anywhere in the space), plus a
// Nadaraya-Watson average of what is left over the nearest measured configurations (interactions).
// Without a predictor the same fit runs on log times alone. Deterministic: no randomness.
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/measure.hpp"
#include "core/predictor.hpp"
#include "core/space.hpp"

namespace soltune {

class Surrogate {
 public:
  explicit Surrogate(const Space& s);
  void set_predictor(Predictor* p) { predictor_ = p; }
  bool has_model() const { return predictor_ != nullptr; }
  // Asks the predictor, in one call, about those configurations it was not asked about before (a
  // backend compiles them in parallel).
  void prime(const std::vector<Config>& cs);
  // The predictor's time (us), +infinity where the configuration cannot run, 0 without a predictor.
  double predicted_us(const Config& c);
  // Expected log time (lower is better); +infinity where the static report says it cannot run.
  double score(const Config& c);
  // Learns from results (refits once per call).
  void observe(const std::vector<EvalResult>& results);
  int64_t predictions() const { return static_cast<int64_t>(prior_.size()); }  // configurations screened
  int64_t observations() const { return static_cast<int64_t>(y_.size()); }

  static constexpr double kRidge = 2.0;      // shrinks each knob value's effect toward none
  static constexpr double kWidth = 0.35;     // kernel width, in knob-index distance (one knob's range = 1)
  static constexpr double kPrior = 1.0;      // pseudo-weight of "no interaction" in the kernel average
  static constexpr double kFailure = 1.386;  // log 4: a failure without a time counts as 4x the prediction

 private:
  std::vector<double> position(const Config& c) const;  // each knob value's place in numeric order, in [0, 1]
  std::vector<size_t> features(const Config& c) const;  // one-hot indices, one per knob
  void fit();

  const Space& space_;
  Predictor* predictor_ = nullptr;
  std::map<std::string, double> prior_;  // key -> predicted us
  size_t n_features_ = 0;
  std::vector<size_t> offset_;           // first feature of each knob
  // Observations: positions, one-hot features, and log-time residuals against the prior.
  std::vector<std::vector<double>> pos_;
  std::vector<std::vector<size_t>> feat_;
  std::vector<double> y_;
  double mean_ = 0;
  std::vector<double> beta_;    // per feature
  std::vector<double> left_;    // per observation: residual after mean and main effects
};

}  // namespace soltune
