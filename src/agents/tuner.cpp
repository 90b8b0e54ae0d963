#include "agents/tuner.hpp"

#include <algorithm>
#include <cmath>

namespace soltune {

namespace {

std::optional<Config> climb_from(const Space& s, const Population& p, Rng& rng) {
  for (const auto& e : p.elite) {
    std::vector<Config> fresh;
    for (auto& n : s.neighbours(e.config))
      if (!p.seen(s.key(n))) fresh.push_back(std::move(n));
    if (!fresh.empty()) return fresh[rng.below(fresh.size())];
  }
  return std::nullopt;  // every elite neighbourhood is spent: a local optimum
}

// One step of one or two knobs to the next value up or down (wrapping never: steps stay local).
Config step(const Space& s, Config c, Rng& rng) {
  const int knobs = rng.chance(0.5) ? 1 : 2;
  for (int k = 0; k < knobs; ++k) {
    const auto i = rng.below(s.knobs().size());
    const auto& v = s.ordered(i);
    if (v.size() < 2) continue;
    const auto at = static_cast<int64_t>(std::lower_bound(v.begin(), v.end(), c.values[i]) - v.begin());
    int64_t j = at + (rng.chance(0.5) ? 1 : -1);
    if (j < 0) j = 1;
    if (j >= static_cast<int64_t>(v.size())) j = static_cast<int64_t>(v.size()) - 2;
    c.values[i] = v[static_cast<size_t>(j)];
  }
  return c;
}

}  // namespace

std::optional<Config> Tuner::propose(size_t op, const Space& s, const Population& p, Rng& rng) {
  if (p.elite.empty()) return s.sample(rng);  // alone, the tuner starts from a random point
  if (op == climb) return climb_from(s, p, rng);
  const double temperature =
      kStartTemperature * std::pow(0.5, static_cast<double>(p.observed) / kHalfLife) + 1e-4;
  const double best = p.elite.front().time.median_us;
  std::vector<double> w;
  double total = 0;
  for (const auto& e : p.elite) total += w.emplace_back(std::exp(-(e.time.median_us / best - 1) / temperature));
  double pick = rng.uniform() * total;
  size_t i = 0;
  while (i + 1 < w.size() && pick >= w[i]) pick -= w[i++];
  return step(s, p.elite[i].config, rng);
}

}  // namespace soltune
