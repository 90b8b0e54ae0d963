#pragma once
// The searches soltune is measured against (bench-search): uniform random sampling without
// replacement, and exhaustive enumeration in the space's canonical order.
#include <string>
#include <vector>

#include "search/strategy.hpp"

namespace soltune {

class RandomSearch final : public Strategy {
 public:
  explicit RandomSearch(const Space& s) : space_(s) {}
  std::string name() const override { return "random"; }
  std::vector<Proposal> ask(size_t n, const AskState& state, Rng& rng) override;
  void tell(const std::vector<EvalResult>&) override {}
  std::string checkpoint() const override { return "left=" + std::to_string(pool_.size()); }

 private:
  const Space& space_;
  std::vector<Config> pool_;  // the legal configurations not yet seen, once sampling stalls
  bool pooled_ = false;
};

class ExhaustiveSearch final : public Strategy {
 public:
  explicit ExhaustiveSearch(const Space& s);
  std::string name() const override { return "exhaustive"; }
  std::vector<Proposal> ask(size_t n, const AskState& state, Rng& rng) override;
  void tell(const std::vector<EvalResult>&) override {}
  std::string checkpoint() const override { return "next=" + std::to_string(next_); }

 private:
  const Space& space_;  // its legal configurations, in canonical order, are the order of proposals
  size_t next_ = 0;
};

}  // namespace soltune
