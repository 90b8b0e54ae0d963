#include "search/surrogate.hpp"

#include <algorithm>
#include <cmath>

namespace soltune {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

size_t index_of(const std::vector<int64_t>& values, int64_t v) {
  return static_cast<size_t>(std::find(values.begin(), values.end(), v) - values.begin());
}

// Solves A x = b for a symmetric positive definite A (Cholesky), in place.
std::vector<double> solve_spd(std::vector<double> a, std::vector<double> b, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    d = std::sqrt(std::max(d, 1e-12));
    a[j * n + j] = d;
    for (size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L y = b
    for (size_t k = 0; k < i; ++k) b[i] -= a[i * n + k] * b[k];
    b[i] /= a[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {  // L^T x = y
    for (size_t k = i + 1; k < n; ++k) b[i] -= a[k * n + i] * b[k];
    b[i] /= a[i * n + i];
  }
  return b;
}
}  // namespace

Surrogate::Surrogate(const Space& s) : space_(s) {
  for (const auto& k : s.knobs()) {
    offset_.push_back(n_features_);
    n_features_ += k.values.size();
  }
  beta_.assign(n_features_, 0.0);
}

std::vector<double> Surrogate::position(const Config& c) const {
  std::vector<double> p;
  for (size_t i = 0; i < space_.knobs().size(); ++i) p.push_back(space_.place(i, c.values[i]));
  return p;
}

std::vector<size_t> Surrogate::features(const Config& c) const {
  std::vector<size_t> f;
  for (size_t i = 0; i < space_.knobs().size(); ++i)
    f.push_back(offset_[i] + std::min(index_of(space_.knobs()[i].values, c.values[i]), space_.knobs()[i].values.size() - 1));
  return f;
}

void Surrogate::prime(const std::vector<Config>& cs) {
  if (!predictor_) return;
  std::vector<Config> ask;
  std::vector<std::string> keys;
  for (const auto& c : cs) {
    auto k = space_.key(c);
    if (prior_.count(k) || std::find(keys.begin(), keys.end(), k) != keys.end()) continue;
    keys.push_back(std::move(k));
    ask.push_back(c);
  }
  if (ask.empty()) return;
  const auto p = predictor_->predict(ask);
  for (size_t i = 0; i < keys.size(); ++i) prior_[keys[i]] = i < p.size() && p[i] > 0 ? p[i] : kInf;
}

double Surrogate::predicted_us(const Config& c) {
  if (!predictor_) return 0;
  const auto k = space_.key(c);
  if (!prior_.count(k)) prime({c});
  return prior_[k];
}

double Surrogate::score(const Config& c) {
  double base = 0;
  if (predictor_) {
    const double p = predicted_us(c);
    if (!std::isfinite(p)) return kInf;
    base = std::log(p);
  }
  if (y_.empty()) return base;
  double s = base + mean_;
  for (auto f : features(c)) s += beta_[f];
  const auto x = position(c);
  double num = 0, den = kPrior;
  for (size_t i = 0; i < pos_.size(); ++i) {
    double d = 0;
    for (size_t k = 0; k < x.size(); ++k) d += std::abs(x[k] - pos_[i][k]);
    const double w = std::exp(-(d / kWidth) * (d / kWidth));
    num += w * left_[i];
    den += w;
  }
  return s + num / den;
}

void Surrogate::observe(const std::vector<EvalResult>& results) {
  bool any = false;
  for (const auto& r : results) {
    const double p = predictor_ ? predicted_us(r.config) : 1.0;
    if (!std::isfinite(p) || p <= 0) continue;  // the static report already said so: nothing to learn
    double y;
    if (r.time.median_us > 0 && (r.status == Status::ok || r.status == Status::slow))
      y = std::log(r.time.median_us / p);  // for slow: the estimate from its first repetitions
    else if (r.status == Status::illegal || r.status == Status::compile_error)
      continue;
    else
      y = (predictor_ ? 0.0 : (y_.empty() ? 0.0 : *std::max_element(y_.begin(), y_.end()))) + kFailure;
    pos_.push_back(position(r.config));
    feat_.push_back(features(r.config));
    y_.push_back(y);
    any = true;
  }
  if (any) fit();
}

void Surrogate::fit() {
  const size_t n = y_.size(), f = n_features_;
  mean_ = 0;
  for (double y : y_) mean_ += y;
  mean_ /= static_cast<double>(n);
  // Ridge regression of (y - mean) on one-hot knob values: (X^T X + lambda I) beta = X^T (y - mean).
  std::vector<double> a(f * f, 0.0), b(f, 0.0);
  for (size_t j = 0; j < f; ++j) a[j * f + j] = kRidge;
  for (size_t i = 0; i < n; ++i) {
    for (auto p : feat_[i]) {
      b[p] += y_[i] - mean_;
      for (auto q : feat_[i]) a[p * f + q] += 1;
    }
  }
  beta_ = solve_spd(std::move(a), std::move(b), f);
  left_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    double s = y_[i] - mean_;
    for (auto p : feat_[i]) s -= beta_[p];
    left_[i] = s;
  }
}

}  // namespace soltune
