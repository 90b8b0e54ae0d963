#pragma once
// Searchers behind an ask/tell interface (KTT's pluggable searchers, in spirit): the space owns
// legality and neighbourhoods, the funnel what was seen and the seeds, the strategy only chooses.
// A seed in, the same proposals out.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/measure.hpp"
#include "core/predictor.hpp"
#include "core/run_config.hpp"
#include "core/space.hpp"

namespace soltune {

// One proposal: a configuration and what proposed it, as the results and the summary credit it
// ("explorer.sample", "evolution", "archivist.seed", "archivist.sibling": another shape's best).
struct Proposal {
  Config config;
  std::string by;
};

// What the funnel (search/tune_task.hpp) hands a strategy at each ask.
struct AskState {
  // Keys never to propose: proposed already, evaluated, or known from earlier runs. The funnel owns
  // it and adds what it takes; a proposal in it, or illegal, is dropped.
  const std::set<std::string>& seen;
  int64_t proposed = 0;  // configurations proposed for the task so far, seeds included
};

// The configurations one ask may still propose: not seen by the funnel, and not proposed earlier in
// the same ask (the funnel learns of those only when the ask returns).
class FreshInAsk {
 public:
  FreshInAsk(const Space& space, const AskState& state) : space_(space), state_(state) {}
  bool fresh(const Config& c) const {
    const auto k = space_.key(c);
    return !state_.seen.count(k) && !taken_.count(k);
  }
  // True, and remembered, where c is fresh.
  bool take(const Config& c) {
    auto k = space_.key(c);
    return !state_.seen.count(k) && taken_.insert(std::move(k)).second;
  }

 private:
  const Space& space_;
  const AskState& state_;
  std::set<std::string> taken_;
};

// What a task's search is measured against and ranked by, before its first ask.
struct SearchStart {
  double t_ref_us = 0, t_sol_us = 0;
  Predictor* predictor = nullptr;  // ranks configurations before they are measured, or null; outlives the search
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // Once, before the first ask.
  virtual void start(const SearchStart&) {}
  // Up to n legal configurations not in state.seen, distinct, in the order to measure them; fewer
  // when the space is spent.
  virtual std::vector<Proposal> ask(size_t n, const AskState& state, Rng& rng) = 0;
  // The results of earlier proposals (and of the funnel's seeds), in the order measured.
  virtual void tell(const std::vector<EvalResult>& results) = 0;
  // The strategy's state as text, for checkpoints: equal texts, equal futures (with the same RNG).
  virtual std::string checkpoint() const = 0;
  // The strategy's own account at the end of a task, for the log ("" when it has none).
  virtual std::string report() const { return ""; }
};

// Random sampling first (`initial` configurations), then a genetic step per batch: tournament
// selection from the elite, uniform crossover, per-knob mutation, repair of illegal children.
class EvolutionarySearch final : public Strategy {
 public:
  EvolutionarySearch(const Space& s, SearchOptions o);
  std::string name() const override { return "evolutionary"; }
  std::vector<Proposal> ask(size_t n, const AskState& state, Rng& rng) override;
  void tell(const std::vector<EvalResult>& results) override;
  std::string checkpoint() const override;
  const std::vector<EvalResult>& elite() const { return elite_; }

 private:
  const Config& tournament(Rng& rng) const;
  std::optional<Config> child(Rng& rng);

  const Space& space_;
  SearchOptions opt_;
  std::vector<EvalResult> elite_;  // fastest ok results, at most opt_.population
  size_t observed_ = 0;
};

}  // namespace soltune
