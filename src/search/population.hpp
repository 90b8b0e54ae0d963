#pragma once
// The shared population of one task: every agent proposes from it, and only results the validator
// admits enter its elite. Plain data plus the few operations that keep it consistent.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/measure.hpp"

namespace soltune {

struct Population {
  explicit Population(size_t cap = 16) : capacity(cap) {}

  size_t capacity;
  const std::set<std::string>* known = nullptr;  // the funnel's seen keys, during an ask
  std::set<std::string> held;          // the agents' own: drawn this round, or judged unable to run
  std::vector<EvalResult> elite;       // admitted results, fastest first, at most `capacity`
  std::vector<Config> evaluated;       // every configuration evaluated, in order (space filling)
  int64_t observed = 0;                // results observed
  int64_t improvements = 0;            // times the best time improved

  // Proposed, evaluated, known or held: never proposed (again).
  bool seen(const std::string& key) const { return held.count(key) || (known && known->count(key)); }
  std::optional<double> best_us() const {
    if (elite.empty()) return std::nullopt;
    return elite.front().time.median_us;
  }
  // Inserts an admitted result. Returns its rank in the elite, or -1 when it was not fast enough.
  int admit(const EvalResult& r);
};

}  // namespace soltune
