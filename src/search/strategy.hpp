#pragma once
// Searchers behind an ask/tell interface (KTT's pluggable searchers, in spirit): the space owns
// legality and neighbourhoods, the strategy only chooses. A seed in, the same proposals out.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/measure.hpp"
#include "core/predictor.hpp"
#include "core/run_config.hpp"
#include "core/space.hpp"

namespace soltune {

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // Up to n legal configurations never proposed before; fewer when the space is exhausted.
  virtual std::vector<Config> propose(size_t n, Rng& rng) = 0;
  virtual void observe(const std::vector<EvalResult>& results) = 0;
  // What proposed each configuration of the last propose() call, in order.
  virtual std::vector<std::string> last_proposers() const = 0;
  // The strategy's state as text, for checkpoints: equal texts, equal futures (with the same RNG).
  virtual std::string checkpoint() const = 0;
  // A configuration known already (evaluated by an earlier run): never proposed.
  virtual void mark_seen(const std::string& key) = 0;
  // A configuration that did well elsewhere (other shapes, other GPUs): proposed first where legal.
  virtual void add_seed(const Config&) {}
  // A known design the template lists (core/problem.hpp, Preset): proposed after the seeds.
  virtual void add_preset(const Config& c) { add_seed(c); }
  // The strategy's own account at the end of a task, for the log ("" when it has none).
  virtual std::string report() const { return ""; }
  // What the task is measured against, before the first proposal (T_SOL for the validator).
  virtual void set_baseline(double t_ref_us, double t_sol_us) { (void)t_ref_us, (void)t_sol_us; }
  // What ranks configurations before they are measured (core/predictor.hpp), or null; it outlives
  // the strategy's use of it. A strategy that screens its proposals uses it; others ignore it.
  virtual void set_predictor(Predictor* p) { (void)p; }
};

// Random sampling first (`initial` configurations), then a genetic step per batch: tournament
// selection from the elite, uniform crossover, per-knob mutation, repair of illegal children.
class EvolutionarySearch final : public Strategy {
 public:
  EvolutionarySearch(const Space& s, SearchOptions o);
  std::string name() const override { return "evolutionary"; }
  std::vector<Config> propose(size_t n, Rng& rng) override;
  void observe(const std::vector<EvalResult>& results) override;
  std::vector<std::string> last_proposers() const override { return proposers_; }
  std::string checkpoint() const override;
  void mark_seen(const std::string& key) override { seen_.insert(key); }
  // Seeds are proposed first, in order, where legal here and not seen; they replace random samples.
  void add_seed(const Config& c) override { seeds_.push_back(c); }
  const std::vector<EvalResult>& elite() const { return elite_; }

 private:
  const Config& tournament(Rng& rng) const;
  std::optional<Config> child(Rng& rng);

  const Space& space_;
  SearchOptions opt_;
  std::set<std::string> seen_;
  std::vector<Config> seeds_;
  std::vector<std::string> proposers_;
  size_t next_seed_ = 0;
  std::vector<EvalResult> elite_;  // fastest ok results, at most opt_.population
  size_t observed_ = 0;
};

}  // namespace soltune
