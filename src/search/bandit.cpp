#include "search/bandit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace soltune {

Bandit::Bandit(std::vector<std::string> arms, double discount, double exploration)
    : arms_(std::move(arms)), discount_(discount), exploration_(exploration), n_(arms_.size(), 0),
      sum_(arms_.size(), 0), total_(arms_.size(), 0), won_(arms_.size(), 0) {}

size_t Bandit::choose(const std::vector<bool>& excluded) const {
  double all = 0;
  for (double n : n_) all += n;
  size_t best = 0;
  double best_score = -1;
  for (size_t a = 0; a < arms_.size(); ++a) {
    if (!excluded.empty() && excluded[a]) continue;
    if (n_[a] < 1e-9) return a;  // never tried (or faded to nothing): try it
    const double score = mean(a) + exploration_ * std::sqrt(std::log(std::max(all, 1.0)) / n_[a]);
    if (score > best_score + 1e-12) {
      best_score = score;
      best = a;
    }
  }
  return best;
}

void Bandit::pulled(size_t arm) {
  n_[arm] += 1;
  ++total_[arm];
}

void Bandit::reward(size_t arm, double r) {
  sum_[arm] += r;
  won_[arm] += r;
}

void Bandit::decay(size_t results) {
  const double f = std::pow(discount_, static_cast<double>(results));
  for (size_t a = 0; a < arms_.size(); ++a) {
    n_[a] *= f;
    sum_[a] *= f;
  }
}

std::string Bandit::state() const {
  std::string s;
  char buf[160];
  for (size_t a = 0; a < arms_.size(); ++a) {
    std::snprintf(buf, sizeof buf, "%s%s n=%.2f mean=%.3f pulls=%lld won=%.2f", a ? "; " : "", arms_[a].c_str(), n_[a],
                  mean(a), static_cast<long long>(total_[a]), won_[a]);
    s += buf;
  }
  return s;
}

}  // namespace soltune
