#include "search/baselines.hpp"

namespace soltune {

std::vector<Config> RandomSearch::propose(size_t n, Rng& rng) {
  std::vector<Config> out;
  // Rejection sampling while the space is mostly unseen; a uniform draw from what is left after.
  for (int misses = 0; out.size() < n && pool_.empty() && misses < 64;) {
    auto c = space_.sample(rng);
    if (!c) break;
    if (seen_.insert(space_.key(*c)).second) out.push_back(std::move(*c));
    else ++misses;
  }
  if (out.size() < n && pool_.empty()) {
    for (const auto& c : space_.all_legal())
      if (!seen_.count(space_.key(c))) pool_.push_back(c);
  }
  while (out.size() < n && !pool_.empty()) {
    const auto i = rng.below(pool_.size());
    std::swap(pool_[i], pool_.back());
    auto c = std::move(pool_.back());
    pool_.pop_back();
    if (seen_.insert(space_.key(c)).second) out.push_back(std::move(c));
  }
  last_ = out.size();
  return out;
}

void RandomSearch::observe(const std::vector<EvalResult>& results) {
  for (const auto& r : results) seen_.insert(r.key);
}

ExhaustiveSearch::ExhaustiveSearch(const Space& s) : space_(s) {}

std::vector<Config> ExhaustiveSearch::propose(size_t n, Rng&) {
  std::vector<Config> out;
  const auto& all = space_.all_legal();
  while (out.size() < n && next_ < all.size()) {
    const auto& c = all[next_++];
    if (seen_.insert(space_.key(c)).second) out.push_back(c);
  }
  last_ = out.size();
  return out;
}

}  // namespace soltune
