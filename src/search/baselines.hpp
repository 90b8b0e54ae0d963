#pragma once
// The searches soltune is measured against (bench-search): uniform random sampling without
// replacement, and exhaustive enumeration in the space's canonical order.
#include <set>
#include <string>
#include <vector>

#include "search/strategy.hpp"

namespace soltune {

class RandomSearch final : public Strategy {
 public:
  explicit RandomSearch(const Space& s) : space_(s) {}
  std::string name() const override { return "random"; }
  std::vector<Config> propose(size_t n, Rng& rng) override;
  void observe(const std::vector<EvalResult>& results) override;
  std::vector<std::string> last_proposers() const override { return std::vector<std::string>(last_, "random"); }
  std::string checkpoint() const override { return "seen=" + std::to_string(seen_.size()); }
  void mark_seen(const std::string& key) override { seen_.insert(key); }

 private:
  const Space& space_;
  std::set<std::string> seen_;
  std::vector<Config> pool_;  // the legal configurations not yet proposed, once sampling stalls
  size_t last_ = 0;
};

class ExhaustiveSearch final : public Strategy {
 public:
  explicit ExhaustiveSearch(const Space& s);
  std::string name() const override { return "exhaustive"; }
  std::vector<Config> propose(size_t n, Rng& rng) override;
  void observe(const std::vector<EvalResult>&) override {}
  std::vector<std::string> last_proposers() const override { return std::vector<std::string>(last_, "exhaustive"); }
  std::string checkpoint() const override { return "next=" + std::to_string(next_); }
  void mark_seen(const std::string& key) override { seen_.insert(key); }

 private:
  const Space& space_;  // its legal configurations, in canonical order, are the order of proposals
  std::set<std::string> seen_;
  size_t next_ = 0, last_ = 0;
};

}  // namespace soltune
