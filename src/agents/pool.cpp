#include "agents/pool.hpp"

#include <algorithm>
#include <cstdio>

#include "agents/explorer.hpp"
#include "agents/tuner.hpp"

namespace soltune {

namespace {

constexpr size_t kNoArm = static_cast<size_t>(-1);
constexpr int kMissesPerArm = 4;  // failed draws before an arm sits out the rest of a batch

std::vector<std::unique_ptr<Agent>> make_agents(const std::string& only) {
  std::vector<std::unique_ptr<Agent>> a;
  if (only.empty() || only == "explorer") a.push_back(std::make_unique<Explorer>());
  if (only.empty() || only == "tuner") a.push_back(std::make_unique<Tuner>());
  if (a.empty()) throw Error("no proposing agent is called '" + only + "' (explorer, tuner)");
  return a;
}

std::vector<std::string> arm_names(const std::vector<std::unique_ptr<Agent>>& agents) {
  std::vector<std::string> names;
  for (const auto& a : agents)
    for (const auto& op : a->operators()) names.push_back(a->name() + "." + op);
  return names;
}

}  // namespace

AgentPool::AgentPool(const Space& s, SearchOptions o, const std::string& only)
    : space_(s), opt_(o), only_(only), agents_(make_agents(only)), bandit_(arm_names(agents_)),
      pop_(static_cast<size_t>(std::max(1, o.population))) {
  for (size_t a = 0; a < agents_.size(); ++a)
    for (size_t op = 0; op < agents_[a]->operators().size(); ++op) arms_.emplace_back(a, op);
}

AgentPool::~AgentPool() = default;

std::optional<Config> AgentPool::from_arm(size_t arm, Rng& rng) {
  const auto [agent, op] = arms_[arm];
  return agents_[agent]->propose(op, space_, pop_, rng);
}

// Legal (repaired if needed, fewest knobs changed) and never seen, or nothing.
std::optional<Config> AgentPool::admissible(std::optional<Config> c, Rng& rng) {
  if (!c) return std::nullopt;
  if (!space_.legal(*c)) c = space_.repair(*c, rng);
  if (!c || pop_.seen.count(space_.key(*c))) return std::nullopt;
  return c;
}

std::vector<Config> AgentPool::propose(size_t n, Rng& rng) {
  archivist_.prime(pop_);
  std::vector<Config> out;
  proposers_.clear();
  auto take = [&](Config c, const std::string& who, size_t arm) {
    const auto key = space_.key(c);
    pop_.seen.insert(key);
    pending_[key] = arm;
    out.push_back(std::move(c));
    proposers_.push_back(who);
    ++proposed_;
  };
  while (out.size() < n)
    if (auto c = archivist_.next_seed(space_, pop_)) take(std::move(*c), "archivist.seed", kNoArm);
    else break;
  std::vector<int> misses(arms_.size(), 0);
  std::vector<bool> excluded(arms_.size(), false);
  for (size_t tries = 0; out.size() < n && tries < 64 * n; ++tries) {
    // Space-filling samples until `initial` proposals are out: the bandit starts from evidence.
    const bool warmup = only_.empty() && (pop_.elite.empty() || proposed_ < opt_.initial);
    if (warmup) {
      if (auto c = admissible(from_arm(Explorer::sample, rng), rng)) take(std::move(*c), "explorer.sample", kNoArm);
      continue;
    }
    if (std::none_of(excluded.begin(), excluded.end(), [](bool e) { return !e; })) break;
    const size_t arm = bandit_.choose(excluded);
    bandit_.pulled(arm);  // a draw that yields nothing counts as a pull without reward
    if (auto c = admissible(from_arm(arm, rng), rng)) take(std::move(*c), bandit_.arms()[arm], arm);
    else if (++misses[arm] >= kMissesPerArm) excluded[arm] = true;
  }
  if (out.size() < n) {
    // The operators are spent (a small or nearly finished space): enumerate what is left.
    for (const auto& c : space_.all_legal()) {
      if (out.size() >= n) break;
      if (!pop_.seen.count(space_.key(c))) take(c, "pool.enumerate", kNoArm);
    }
  }
  return out;
}

void AgentPool::observe(const std::vector<EvalResult>& results) {
  bandit_.decay(results.size());
  for (const auto& r : results) {
    ++pop_.observed;
    pop_.seen.insert(r.key);
    pop_.evaluated.push_back(r.config);
    const int rank = validator_.judge(r).admit ? pop_.admit(r) : -1;
    if (rank == 0) best_by_ = r.proposer;
    const auto it = pending_.find(r.key);
    if (it == pending_.end()) continue;
    if (it->second != kNoArm) bandit_.reward(it->second, rank == 0 ? kRewardBest : rank > 0 ? kRewardElite : 0.0);
    pending_.erase(it);
  }
}

std::string AgentPool::checkpoint() const {
  std::string s = "observed=" + std::to_string(pop_.observed) + ";seen=" + std::to_string(pop_.seen.size()) +
                  ";next_seed=" + std::to_string(archivist_.next()) + ";elite=";
  for (size_t i = 0; i < pop_.elite.size(); ++i) s += (i ? "|" : "") + pop_.elite[i].key;
  return s + ";bandit=" + bandit_.state();
}

std::string AgentPool::report() const {
  std::string arms;
  for (size_t a = 0; a < bandit_.arms().size(); ++a)
    if (bandit_.total_pulls(a) > 0) {
      char b[96];
      std::snprintf(b, sizeof b, "%s%s %lld pulls, won %.2f", arms.empty() ? "" : "; ", bandit_.arms()[a].c_str(),
                    static_cast<long long>(bandit_.total_pulls(a)), bandit_.total_reward(a));
      arms += b;
    }
  return "best found by " + (best_by_.empty() ? std::string("none") : best_by_) + "; validator admitted " +
         std::to_string(validator_.admitted()) + ", rejected " + std::to_string(validator_.rejected()) +
         "; bandit: " + (arms.empty() ? std::string("not started (warm-up only)") : arms);
}

}  // namespace soltune
