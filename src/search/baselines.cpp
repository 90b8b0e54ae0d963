#include "search/baselines.hpp"

namespace soltune {

std::vector<Proposal> RandomSearch::ask(size_t n, const AskState& state, Rng& rng) {
  std::vector<Proposal> out;
  FreshInAsk fresh(space_, state);
  // Rejection sampling while the space is mostly unseen; a uniform draw from what is left after.
  for (int misses = 0; out.size() < n && !pooled_ && misses < 64;) {
    auto c = space_.sample(rng);
    if (!c) break;
    if (fresh.take(*c)) out.push_back({std::move(*c), "random"});
    else ++misses;
  }
  if (out.size() < n && !pooled_) {
    pooled_ = true;
    for (const auto& c : space_.all_legal())
      if (fresh.fresh(c)) pool_.push_back(c);
  }
  while (out.size() < n && !pool_.empty()) {
    const auto i = rng.below(pool_.size());
    std::swap(pool_[i], pool_.back());
    auto c = std::move(pool_.back());
    pool_.pop_back();
    if (fresh.take(c)) out.push_back({std::move(c), "random"});
  }
  return out;
}

ExhaustiveSearch::ExhaustiveSearch(const Space& s) : space_(s) {}

std::vector<Proposal> ExhaustiveSearch::ask(size_t n, const AskState& state, Rng&) {
  std::vector<Proposal> out;
  const auto& all = space_.all_legal();
  while (out.size() < n && next_ < all.size()) {
    const auto& c = all[next_++];
    if (!state.seen.count(space_.key(c))) out.push_back({c, "exhaustive"});
  }
  return out;
}

}  // namespace soltune
