#include "agents/pool.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

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
      pop_(static_cast<size_t>(std::max(1, o.population))), surrogate_(s) {
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
  if (!c || pop_.seen(space_.key(*c))) return std::nullopt;
  return c;
}

void AgentPool::start(const SearchStart& s) {
  validator_.set_t_sol(s.t_sol_us);
  surrogate_.set_predictor(s.predictor);
  predictor_ = s.predictor ? s.predictor->describe() : "";
}

void AgentPool::take(Config c, const std::string& who, size_t arm) {
  const auto key = space_.key(c);
  pop_.held.insert(key);
  pending_[key] = arm;
  out_.push_back({std::move(c), who});
  ++proposed_;
}

void AgentPool::screen_round(size_t n, Rng& rng, std::vector<int>& misses, std::vector<bool>& excluded) {
  struct Slot {
    size_t arm;
    std::string who;
    std::vector<Config> drawn;
  };
  std::vector<Slot> slots;
  std::set<std::string> drawn;  // this round's candidates, so that two slots never draw the same
  // Before the first result the prior is all the screen has, and it costs no compile: a warm-up
  // round judges initial_candidates in all, spread over its proposals (at least `screen` each), so
  // that its first picks are the prior's best of as many whatever the batch (screen 1 turns the
  // screen off throughout).
  const bool warm_round = only_.empty() && proposed_so_far() < opt_.initial && opt_.screen > 1;
  const int per_slot = warm_round ? static_cast<int>((static_cast<size_t>(opt_.initial_candidates) + n - 1) / n) : 0;
  const size_t screen = static_cast<size_t>(std::max({1, opt_.screen, per_slot}));
  int warm_misses = 0;  // space-filling draws that found nothing unseen (a nearly spent space)
  for (size_t tries = 0; slots.size() < n && tries < 64 * n; ++tries) {
    // Space-filling samples until `initial` proposals are out: the bandit starts from evidence.
    const bool warmup =
        only_.empty() && (pop_.elite.empty() || proposed_so_far() + static_cast<int64_t>(slots.size()) < opt_.initial);
    Slot s{kNoArm, "explorer.sample", {}};
    if (!warmup) {
      if (std::none_of(excluded.begin(), excluded.end(), [](bool e) { return !e; })) break;
      s.arm = bandit_.choose(excluded);
      bandit_.pulled(s.arm);  // a draw that yields nothing counts as a pull without reward
      s.who = bandit_.arms()[s.arm];
    }
    // Drawn candidates count as seen while the round lasts, so that the operators draw others (a
    // climb, the next unseen neighbour); those the screen passes over are unseen again after it.
    for (size_t k = 0; k < screen; ++k)
      if (auto c = admissible(from_arm(warmup ? Explorer::sample : s.arm, rng), rng)) {
        auto key = space_.key(*c);
        pop_.held.insert(key);
        if (drawn.insert(std::move(key)).second) s.drawn.push_back(std::move(*c));
      }
    if (!s.drawn.empty()) slots.push_back(std::move(s));
    else if (!warmup && ++misses[s.arm] >= kMissesPerArm) excluded[s.arm] = true;
    else if (warmup && ++warm_misses >= kMissesPerArm) break;  // ask() enumerates what is left
  }
  std::vector<Config> all;
  for (const auto& s : slots) all.insert(all.end(), s.drawn.begin(), s.drawn.end());
  surrogate_.prime(all);  // one call: a compiling backend builds the whole round in parallel
  struct Pick {
    double score;
    size_t slot, index;
  };
  std::vector<Pick> picks;
  for (size_t i = 0; i < slots.size(); ++i) {
    std::optional<Pick> best;
    for (size_t j = 0; j < slots[i].drawn.size(); ++j) {
      const double sc = surrogate_.score(slots[i].drawn[j]);
      ++screened_;
      if (!std::isfinite(sc)) {
        // The static report says it cannot run (a compile error, a device limit): never measured.
        pop_.held.insert(space_.key(slots[i].drawn[j]));
        ++dropped_;
        continue;
      }
      if (!best || sc < best->score) best = Pick{sc, i, j};
    }
    if (best) picks.push_back(*best);
  }
  // The most promising first: a batch is measured in order, and an early best lets the rest stop
  // early. Greedily, each next one is the best score less kDiversity per unit of distance (knob
  // ranges) from those ahead of it: the model is often off by 5-15%, so a close second from
  // another region is worth measuring before a near twin of the first.
  std::set<std::string> kept;
  for (const auto& p : picks) kept.insert(space_.key(slots[p.slot].drawn[p.index]));
  for (const auto& s : slots)
    for (const auto& c : s.drawn)
      if (const auto key = space_.key(c); !kept.count(key) && std::isfinite(surrogate_.score(c))) pop_.held.erase(key);
  if (screen == 1) {  // no screen: the operators' own order, as they proposed
    for (const auto& p : picks) take(std::move(slots[p.slot].drawn[p.index]), slots[p.slot].who, slots[p.slot].arm);
    return;
  }
  std::stable_sort(picks.begin(), picks.end(), [](const Pick& a, const Pick& b) { return a.score < b.score; });
  auto config = [&](const Pick& p) -> const Config& { return slots[p.slot].drawn[p.index]; };
  std::vector<Pick> ordered;
  std::vector<double> nearest(picks.size(), std::numeric_limits<double>::infinity());
  std::vector<bool> used(picks.size(), false);
  while (ordered.size() < picks.size()) {
    size_t at = picks.size();
    double best = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < picks.size(); ++i) {
      if (used[i]) continue;
      const double v = picks[i].score - (ordered.empty() ? 0.0 : kDiversity * nearest[i]);
      if (at == picks.size() || v < best) best = v, at = i;
    }
    used[at] = true;
    ordered.push_back(picks[at]);
    for (size_t i = 0; i < picks.size(); ++i)
      if (!used[i]) nearest[i] = std::min(nearest[i], config_distance(space_, config(picks[i]), config(picks[at])));
  }
  picks = std::move(ordered);
  for (const auto& p : picks) take(std::move(slots[p.slot].drawn[p.index]), slots[p.slot].who, slots[p.slot].arm);
}

std::vector<Proposal> AgentPool::ask(size_t n, const AskState& state, Rng& rng) {
  out_.clear();
  asked_at_ = state.proposed;
  pop_.known = &state.seen;
  std::vector<int> misses(arms_.size(), 0);
  std::vector<bool> excluded(arms_.size(), false);
  // A round may come back short (candidates that cannot run are dropped): a few more rounds.
  for (int round = 0; round < 4 && out_.size() < n; ++round) {
    const size_t before = out_.size();
    screen_round(n - out_.size(), rng, misses, excluded);
    if (out_.size() == before) break;
  }
  if (out_.size() < n) {
    // The operators are spent (a small or nearly finished space): enumerate what is left.
    for (const auto& c : space_.all_legal()) {
      if (out_.size() >= n) break;
      if (!pop_.seen(space_.key(c))) take(c, "pool.enumerate", kNoArm);
    }
  }
  pop_.known = nullptr;
  return std::move(out_);
}

void AgentPool::tell(const std::vector<EvalResult>& results) {
  bandit_.decay(results.size());
  surrogate_.observe(results);
  for (const auto& r : results) {
    ++pop_.observed;
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
  std::string s = "observed=" + std::to_string(pop_.observed) + ";held=" + std::to_string(pop_.held.size()) + ";elite=";
  for (size_t i = 0; i < pop_.elite.size(); ++i) s += (i ? "|" : "") + pop_.elite[i].key;
  return s + ";screened=" + std::to_string(screened_) + ";bandit=" + bandit_.state();
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
  const std::string screen =
      opt_.screen > 1 || !predictor_.empty()
          ? "; screen: " + std::to_string(screened_) + " candidates judged for " + std::to_string(proposed_) +
                " proposals, " + std::to_string(dropped_) + " dropped unmeasured (cannot run), prior: " +
                (predictor_.empty() ? std::string("none (measurements only)") : predictor_)
          : "";
  return "best found by " + (best_by_.empty() ? std::string("none") : best_by_) + screen + "; validator admitted " +
         std::to_string(validator_.admitted()) + ", rejected " + std::to_string(validator_.rejected()) +
         "; bandit: " + (arms.empty() ? std::string("not started (warm-up only)") : arms);
}

}  // namespace soltune
