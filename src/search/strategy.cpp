#include "search/strategy.hpp"

#include <algorithm>

namespace soltune {

EvolutionarySearch::EvolutionarySearch(const Space& s, SearchOptions o) : space_(s), opt_(o) {}

const Config& EvolutionarySearch::tournament(Rng& rng) const {
  // Two-way tournament: the faster of two random elite members.
  const auto& a = elite_[rng.below(elite_.size())];
  const auto& b = elite_[rng.below(elite_.size())];
  return a.time.median_us <= b.time.median_us ? a.config : b.config;
}

std::optional<Config> EvolutionarySearch::child(Rng& rng) {
  Config c = tournament(rng);
  if (elite_.size() > 1 && rng.chance(opt_.crossover_rate)) c = space_.crossover(c, tournament(rng), rng);
  c = space_.mutate(c, rng, opt_.mutation_rate);
  return space_.repair(c, rng);
}

std::vector<Proposal> EvolutionarySearch::ask(size_t n, const AskState& state, Rng& rng) {
  std::vector<Proposal> out;
  FreshInAsk fresh(space_, state);
  // Bounded attempts: in a nearly exhausted space most draws are repeats.
  for (int attempts = 0; out.size() < n && attempts < 200 * static_cast<int>(n); ++attempts) {
    const bool explore = elite_.empty() || observed_ + out.size() < static_cast<size_t>(opt_.initial);
    auto c = explore ? space_.sample(rng) : child(rng);
    if (!c) break;
    if (fresh.take(*c)) out.push_back({std::move(*c), explore ? "random" : "evolution"});
  }
  // Fall back to systematic enumeration so a small space is finished, not abandoned.
  for (const auto& c : space_.all_legal()) {
    if (out.size() >= n) break;
    if (fresh.take(c)) out.push_back({c, "enumeration"});
  }
  return out;
}

std::string EvolutionarySearch::checkpoint() const {
  std::string s = "observed=" + std::to_string(observed_) + ";elite=";
  for (size_t i = 0; i < elite_.size(); ++i) s += (i ? "|" : "") + elite_[i].key;
  return s;
}

void EvolutionarySearch::tell(const std::vector<EvalResult>& results) {
  observed_ += results.size();
  for (const auto& r : results)
    if (r.status == Status::ok) elite_.push_back(r);
  std::stable_sort(elite_.begin(), elite_.end(),
                   [](const EvalResult& a, const EvalResult& b) { return a.time.median_us < b.time.median_us; });
  if (elite_.size() > static_cast<size_t>(opt_.population)) elite_.resize(static_cast<size_t>(opt_.population));
}

}  // namespace soltune
