#pragma once
// Which arm (an agent's operator) makes the next proposal: discounted UCB1 (Garivier & Moulines,
// 2011). Rewards arrive when a proposal's result improves the elite; old evidence fades, so effort
// moves to whichever arm improved the elite most recently. Deterministic: no randomness, ties go to
// the arm listed first, so a seed in gives the same proposals out.
#include <cstdint>
#include <string>
#include <vector>

namespace soltune {

class Bandit {
 public:
  // discount: weight kept per observed result (0.97: evidence halves after about 23 results).
  // exploration: the UCB bonus scale (rewards lie in [0, 1]).
  explicit Bandit(std::vector<std::string> arms, double discount = 0.97, double exploration = 0.3);

  size_t choose() const { return choose({}); }  // the arm to pull next
  // The same among the arms not excluded (excluded[a] true); an empty vector excludes none.
  size_t choose(const std::vector<bool>& excluded) const;
  void pulled(size_t arm);             // a proposal was made by the arm (counted at once)
  void reward(size_t arm, double r);   // its result: r in [0, 1]
  void decay(size_t results);          // fades every arm's evidence by discount^results

  const std::vector<std::string>& arms() const { return arms_; }
  double pulls(size_t arm) const { return n_[arm]; }
  double mean(size_t arm) const { return n_[arm] > 0 ? sum_[arm] / n_[arm] : 0; }
  int64_t total_pulls(size_t arm) const { return total_[arm]; }
  double total_reward(size_t arm) const { return won_[arm]; }
  // "explorer.sample n=3.2 mean=0.41 pulls=12 won=2.3; ..." for logs and checkpoints.
  std::string state() const;

 private:
  std::vector<std::string> arms_;
  double discount_, exploration_;
  std::vector<double> n_, sum_;    // discounted counts and rewards
  std::vector<int64_t> total_;     // undiscounted pulls, for the log
  std::vector<double> won_;        // undiscounted rewards, for the log
};

}  // namespace soltune
