#pragma once
// The tuner: refines the elite locally. Hill climbing takes an unseen one-knob neighbour of the
// best configuration (then of the next best, when the best's neighbourhood is spent); annealing
// steps one or two knobs from an elite member drawn with Boltzmann weights on its time, at a
// temperature that falls as the task's evaluations grow.
#include "agents/agent.hpp"

namespace soltune {

class Tuner final : public Agent {
 public:
  enum Op : size_t { climb = 0, anneal = 1 };
  std::string name() const override { return "tuner"; }
  std::vector<std::string> operators() const override { return {"climb", "anneal"}; }
  std::optional<Config> propose(size_t op, const Space& s, const Population& p, Rng& rng) override;

  static constexpr double kStartTemperature = 0.10;  // relative slowdown accepted with weight 1/e, at first
  static constexpr double kHalfLife = 60;            // evaluations after which the temperature halves
};

}  // namespace soltune
