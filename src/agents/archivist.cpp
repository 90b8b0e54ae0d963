#include "agents/archivist.hpp"

namespace soltune {

void Archivist::prime(Population& p) {
  if (primed_) return;
  primed_ = true;
  p.seen.insert(known_.begin(), known_.end());
}

std::optional<std::pair<Config, std::string>> Archivist::next_seed(const Space& s, const Population& p) {
  while (next_ < seeds_.size()) {
    const auto& seed = seeds_[next_++];
    if (s.legal(seed.first) && !p.seen.count(s.key(seed.first))) return seed;
  }
  return std::nullopt;
}

}  // namespace soltune
