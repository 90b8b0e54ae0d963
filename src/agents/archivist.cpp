#include "agents/archivist.hpp"

namespace soltune {

void Archivist::prime(Population& p) {
  if (primed_) return;
  primed_ = true;
  p.seen.insert(known_.begin(), known_.end());
}

std::optional<Config> Archivist::next_seed(const Space& s, const Population& p) {
  while (next_ < seeds_.size()) {
    const auto& c = seeds_[next_++];
    if (s.legal(c) && !p.seen.count(s.key(c))) return c;
  }
  return std::nullopt;
}

}  // namespace soltune
