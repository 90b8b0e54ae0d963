#pragma once
// An agent proposes configurations for one task from the task's shared population, through one of
// its operators. The pool (pool.hpp) decides which agent and operator propose next; the space
// repairs or rejects what they return, so an operator may return an illegal or seen configuration.
#include <optional>
#include <string>
#include <vector>

#include "core/space.hpp"
#include "search/population.hpp"

namespace soltune {

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string name() const = 0;
  virtual std::vector<std::string> operators() const = 0;
  // A proposal from operator `op`, or nullopt when it has nothing to offer now (an empty elite).
  virtual std::optional<Config> propose(size_t op, const Space& s, const Population& p, Rng& rng) = 0;
};

// Distance between two configurations: the sum over knobs of the difference of their value indices,
// each scaled to [0, 1]. What "distant" and "space-filling" mean to the operators.
double config_distance(const Space& s, const Config& a, const Config& b);

}  // namespace soltune
