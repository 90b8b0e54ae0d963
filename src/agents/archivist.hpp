#pragma once
// The archivist: what is known before and during a task. It holds the keys the knowledge base has
// for the task already (evaluated by earlier runs, failures included: never proposed again) and the
// seeds (the best configurations of the same template at the nearest shapes and on other GPUs),
// which it proposes first. Its writes reach the knowledge base through the run's TaskObserver
// (src/cli binds it to the file), as each result completes.
#include <optional>
#include <string>
#include <vector>

#include "core/space.hpp"
#include "search/population.hpp"

namespace soltune {

class Archivist {
 public:
  void know(const std::string& key) { known_.push_back(key); }
  // `label`: what the summary credits when the seed wins (archivist.seed, archivist.preset).
  void add_seed(const Config& c, std::string label) { seeds_.emplace_back(c, std::move(label)); }
  // Marks what is known as seen in the population (once, before the first proposal).
  void prime(Population& p);
  // The next seed legal here and not seen, with its label, or nullopt when they are spent.
  std::optional<std::pair<Config, std::string>> next_seed(const Space& s, const Population& p);
  size_t seeds_left() const { return seeds_.size() - next_; }
  size_t next() const { return next_; }

 private:
  std::vector<std::string> known_;
  std::vector<std::pair<Config, std::string>> seeds_;
  size_t next_ = 0;
  bool primed_ = false;
};

}  // namespace soltune
