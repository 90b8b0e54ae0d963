#pragma once
// The explorer: covers the space. Space-filling samples (the candidate farthest from everything
// evaluated, of several random ones), bold mutation of an elite member (half its knobs redrawn),
// and crossover between the most distant pair it can find in the elite.
#include "agents/agent.hpp"

namespace soltune {

class Explorer final : public Agent {
 public:
  enum Op : size_t { sample = 0, mutate = 1, crossover = 2 };
  std::string name() const override { return "explorer"; }
  std::vector<std::string> operators() const override { return {"sample", "mutate", "crossover"}; }
  std::optional<Config> propose(size_t op, const Space& s, const Population& p, Rng& rng) override;

  static constexpr int kCandidates = 12;       // random draws a space-filling sample picks from
  static constexpr size_t kMemory = 384;       // latest evaluated configurations it keeps away from
  static constexpr double kBoldRate = 0.5;     // share of knobs a bold mutation redraws
};

}  // namespace soltune
