#include "agents/explorer.hpp"

#include <algorithm>
#include <cmath>

namespace soltune {

double config_distance(const Space& s, const Config& a, const Config& b) {
  double d = 0;
  for (size_t i = 0; i < s.knobs().size(); ++i) d += std::abs(s.place(i, a.values[i]) - s.place(i, b.values[i]));
  return d;
}

namespace {

std::optional<Config> space_filling(const Space& s, const Population& p, Rng& rng) {
  const size_t from = p.evaluated.size() > Explorer::kMemory ? p.evaluated.size() - Explorer::kMemory : 0;
  std::optional<Config> best;
  double best_d = -1;
  for (int k = 0; k < Explorer::kCandidates; ++k) {
    auto c = s.sample(rng);
    if (!c) return std::nullopt;
    if (p.seen(s.key(*c))) continue;
    double d = 1e300;  // the distance to the nearest configuration evaluated
    for (size_t i = from; i < p.evaluated.size(); ++i) d = std::min(d, config_distance(s, *c, p.evaluated[i]));
    if (d > best_d) {
      best_d = d;
      best = std::move(c);
    }
  }
  return best ? best : s.sample(rng);
}

}  // namespace

std::optional<Config> Explorer::propose(size_t op, const Space& s, const Population& p, Rng& rng) {
  if (op == sample || p.elite.empty()) return space_filling(s, p, rng);
  const auto& a = p.elite[rng.below(p.elite.size())].config;
  if (op == mutate) return s.mutate(a, rng, kBoldRate);
  // Crossover: a random elite member with the member farthest from it.
  const Config* far = &a;
  double far_d = -1;
  for (const auto& e : p.elite)
    if (double d = config_distance(s, a, e.config); d > far_d) {
      far_d = d;
      far = &e.config;
    }
  return s.crossover(a, *far, rng);
}

}  // namespace soltune
