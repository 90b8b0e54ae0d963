#pragma once
// The pool of agents working one task (soltune's search). After the archivist's seeds (proposed by
// the funnel, search/tune_task.hpp), space-filling samples from the explorer until `initial`
// results are in; after that a bandit (search/bandit.hpp) over every proposing agent's operators
// picks who proposes next, rewarding the operator whose proposal entered the elite (a new best
// counts most). The validator admits results into the elite. Illegal proposals are repaired (fewest knobs changed) or dropped before
// they reach the evaluator; seen ones are never proposed again.
//
// The screen: for every proposal the chosen operator draws `screen` candidates, and the surrogate
// (search/surrogate.hpp: the evaluator's predictor, the analytic model over each candidate's static
// report, corrected by what the task measured) keeps the one it expects fastest; a candidate the
// static report says cannot run is dropped unmeasured. A batch goes out most promising first, with
// a near twin of an earlier candidate moved behind a close second from elsewhere (kDiversity).
//
// With `only` set, a single agent proposes alone (bench-search's per-agent strategies).
#include <map>
#include <memory>

#include "agents/validator.hpp"
#include "core/run_config.hpp"
#include "search/bandit.hpp"
#include "search/population.hpp"
#include "search/surrogate.hpp"
#include "search/strategy.hpp"

namespace soltune {

class Agent;

class AgentPool final : public Strategy {
 public:
  AgentPool(const Space& s, SearchOptions o, const std::string& only = "");
  ~AgentPool() override;
  std::string name() const override { return only_.empty() ? "soltune" : only_; }
  void start(const SearchStart& s) override;
  std::vector<Proposal> ask(size_t n, const AskState& state, Rng& rng) override;
  void tell(const std::vector<EvalResult>& results) override;
  std::string checkpoint() const override;

  const Population& population() const { return pop_; }
  const Bandit& bandit() const { return bandit_; }
  const Validator& validator() const { return validator_; }
  // One line per arm: proposals, rewards, and which arm found the current best.
  std::string report() const override;

  // Rewards: a proposal that became the best, one that entered the elite.
  static constexpr double kRewardBest = 1.0, kRewardElite = 0.25;
  // The screen's batch order: log-time a candidate may give up per knob range of distance from the
  // candidates ahead of it in the batch (0: strictly by score).
  static constexpr double kDiversity = 0.15;

 private:
  std::optional<Config> from_arm(size_t arm, Rng& rng);
  std::optional<Config> admissible(std::optional<Config> c, Rng& rng);
  // One round of the screen: up to n proposals, each the surrogate's pick of its operator's draws.
  void screen_round(size_t n, Rng& rng, std::vector<int>& misses, std::vector<bool>& excluded);
  void take(Config c, const std::string& who, size_t arm);
  // Proposals for the task so far, by anyone, this ask's included: the warm-up's count.
  int64_t proposed_so_far() const { return asked_at_ + static_cast<int64_t>(out_.size()); }

  const Space& space_;
  SearchOptions opt_;
  std::string only_;
  std::vector<std::unique_ptr<Agent>> agents_;
  std::vector<std::pair<size_t, size_t>> arms_;  // (agent, operator) per bandit arm
  Bandit bandit_;
  Population pop_;
  Validator validator_;
  Surrogate surrogate_;
  std::string predictor_;                  // what the screen's prior rests on ("" without one)
  int64_t screened_ = 0, dropped_ = 0;     // candidates the screen judged, and dropped as unable to run
  std::vector<Proposal> out_;              // the batch being proposed
  int64_t asked_at_ = 0;                   // proposals for the task before this ask
  std::map<std::string, size_t> pending_;  // key -> arm, for proposals whose results are not in
  std::string best_by_;                    // the proposer of the current best
  int64_t proposed_ = 0;                   // this pool's own
};

}  // namespace soltune
