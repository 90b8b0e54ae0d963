#include "search/tune_task.hpp"

#include <algorithm>
#include <cstdio>
#include <future>
#include <sstream>

namespace soltune {

SolScore score(const EvalResult& r, const TaskBaseline& b) {
  if (r.status != Status::ok) return SolScore{};
  return sol_score(r.time.median_us, b.t_ref_us, b.t_sol_us);
}

namespace {

// The line of a compile log that says what went wrong: its first "error", else its first line.
std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string first;
  for (std::string line; std::getline(in, line);) {
    if (first.empty() && !line.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// Re-times the baseline and the fastest distinct configurations interleaved, so that the reported
// ratio T_ref / T holds even if the machine's speed drifted during the search.
void retime_best(const Task& t, Evaluator& ev, const std::vector<EvalResult>& ok, const RetimePolicy& p,
                 TaskOutcome& out, TaskObserver& obs) {
  std::vector<Config> top;
  for (size_t i = 0; i < ok.size() && top.size() < static_cast<size_t>(p.top); ++i) top.push_back(ok[i].config);
  const auto r = ev.retime(t, top, p.rounds);
  if (!r) return;
  out.baseline.t_ref_us = median(r->baseline_us);
  // A configuration a checked repetition found wrong while re-timed is wrong, whatever the search
  // saw: it is recorded so and cannot be the best.
  std::optional<size_t> best;
  for (size_t i = 0; i < top.size(); ++i) {
    if (i < r->failed.size() && !r->failed[i].empty()) {
      EvalResult w = ok[i];
      w.status = Status::wrong_answer;
      w.log = r->failed[i] + "; " + w.log;
      obs.on_demoted(t, w);
      continue;
    }
    if (!best || median(r->config_us[i]) < median(r->config_us[*best])) best = i;
  }
  if (!best) {
    // Every re-timed one was wrong: the next fastest of the search stands, at its search time.
    if (ok.size() > top.size()) {
      out.best = ok[top.size()];
      out.best_sol = score(*out.best, out.baseline);
    } else {
      out.best.reset();
      out.best_sol = SolScore{};
    }
    return;
  }
  out.best = ok[*best];
  // Its time is the re-timing's: the median and spread of its rounds (reps: the rounds), each round
  // timed beside T_ref's.
  out.best->time = summarize(r->config_us[*best]);
  out.best->retimed = true;
  char note[200];
  std::snprintf(note, sizeof note, "; re-timed interleaved with %zu best configuration(s) over %d rounds", top.size(),
                p.rounds);
  out.baseline.note += note;
  out.best_sol = score(*out.best, out.baseline);
  out.retimed = true;
  obs.on_retime(t, out.baseline, *out.best, out.best_sol);
}

// Removes and returns the first n elements (fewer where v is shorter), in order.
template <class T> std::vector<T> take_front(std::vector<T>& v, size_t n) {
  const auto end = v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size()));
  std::vector<T> out(std::make_move_iterator(v.begin()), std::make_move_iterator(end));
  v.erase(v.begin(), end);
  return out;
}

}  // namespace

std::string stop_reason(const StopOptions& c, const TaskOutcome& o, int64_t since_better, double seconds) {
  std::vector<std::pair<bool, std::string>> set;  // (holds, why) per condition that is set
  if (c.target_sol > 0)
    set.emplace_back(o.best_sol.valid && o.best_sol.score >= c.target_sol, "target SOL score " + number(c.target_sol) + " reached");
  if (c.stagnation > 0)
    set.emplace_back(since_better >= c.stagnation, "no better time in " + std::to_string(since_better) + " evaluations");
  if (c.evals > 0) set.emplace_back(o.evaluated >= c.evals, std::to_string(o.evaluated) + " evaluations (the task's limit)");
  if (c.seconds > 0) set.emplace_back(seconds >= c.seconds, number(c.seconds) + " s (the task's limit)");
  std::string why;
  for (const auto& [holds, text] : set) {
    if (c.all && !holds) return "";
    if (!holds) continue;
    if (!c.all) return text;
    why += (why.empty() ? "" : " and ") + text;
  }
  return why;
}

TaskRun::TaskRun(const Task& t, Evaluator& ev, const Space& space, Strategy& s, int batch, Rng& rng, TaskObserver& obs,
                 const TaskBaseline& baseline, StopOptions stop, SearchPrior prior)
    : task_(t), ev_(ev), space_(space), s_(s), seen_(std::move(prior.known)), seeds_(std::move(prior.seeds)),
      batch_(std::max(1, batch)), rng_(rng), obs_(obs), stop_(stop), start_(std::chrono::steady_clock::now()) {
  out_.baseline = baseline;
  predictor_ = ev_.predictor(task_);
  s_.start({baseline.t_ref_us, baseline.t_sol_us, predictor_.get()});
}

std::vector<Proposal> TaskRun::propose(int64_t want) {
  if (want <= 0) return {};
  const auto n = static_cast<size_t>(want);
  std::vector<Proposal> out;
  auto take = [&](Proposal p) {
    if (!space_.legal(p.config) || !seen_.insert(space_.key(p.config)).second) return;
    out.push_back(std::move(p));
    ++proposed_;
  };
  while (out.size() < n && next_seed_ < seeds_.size()) take(seeds_[next_seed_++]);
  if (out.size() < n)
    for (auto& p : s_.ask(n - out.size(), AskState{seen_, proposed_}, rng_)) take(std::move(p));
  std::vector<Config> configs;
  for (const auto& p : out) configs.push_back(p.config);
  ev_.prefetch(task_, configs);
  return out;
}

void TaskRun::prime(int64_t n) {
  if (primed_ || finished_) return;
  next_ = propose(std::min<int64_t>(n, batch_));
  primed_ = true;
}

bool TaskRun::step(int64_t allowance, int64_t lookahead) {
  if (finished_ || allowance <= 0) return false;
  if (!primed_ || next_.empty()) {
    next_ = propose(std::min<int64_t>(allowance, batch_));
    primed_ = true;
  }
  std::vector<Proposal> batch = take_front(next_, static_cast<size_t>(allowance));
  if (batch.empty()) {
    out_.exhausted = true;
    return false;
  }
  // What is proposed ahead is proposed while this batch is measured, so a strategy that screens its
  // candidates never keeps the GPU waiting; it learns from this batch only after both are done, so
  // what it proposes does not depend on timing. The compiles start as soon as it is known, on that
  // thread: started after this batch was measured, they left a lone task's GPU waiting on them
  // (busy 29-54% in single-task H200 runs).
  const int64_t need = lookahead - static_cast<int64_t>(next_.size());
  auto ahead = std::async(std::launch::async, [this, need] { return propose(need); });
  auto results = evaluate(std::move(batch));
  auto more = ahead.get();
  next_.insert(next_.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  s_.tell(results);
  obs_.on_checkpoint(task_, out_.evaluated,
                     "seen=" + std::to_string(seen_.size()) + ";seed=" + std::to_string(next_seed_) + ";" +
                         s_.checkpoint() + ";rng=" + rng_.state());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  out_.stopped_by = stop_.any_set() ? stop_reason(stop_, out_, since_better_, secs) : "";
  if (!out_.stopped_by.empty()) return false;
  if (lookahead > 0 && next_.empty()) {
    out_.exhausted = true;
    return false;
  }
  return true;
}

std::vector<EvalResult> TaskRun::evaluate(std::vector<Proposal> batch) {
  const auto& baseline = out_.baseline;
  std::vector<Config> configs;
  for (auto& p : batch) configs.push_back(std::move(p.config));
  auto results = ev_.evaluate(task_, configs);
  out_.unmeasured += static_cast<int64_t>(batch.size()) - static_cast<int64_t>(std::min(results.size(), batch.size()));
  for (size_t i = 0; i < results.size() && i < batch.size(); ++i) results[i].proposer = batch[i].by;
  for (auto& r : results) {
    ++out_.evaluated;
    auto sol = score(r, baseline);
    if (sol.below_sol) {
      // Faster than the hardware allows: measure and check again before believing anything.
      auto again = ev_.evaluate(task_, {r.config});
      const auto first = r.time.median_us;
      const auto proposer = r.proposer;
      if (!again.empty()) r = std::move(again.front());
      r.proposer = proposer;
      sol = score(r, baseline);
      r.log = "first timed at " + std::to_string(first) + " us, under T_SOL " + std::to_string(baseline.t_sol_us) +
              " us: re-measured and re-validated" + (sol.below_sol ? ", still under T_SOL: not counted; " : "; ") + r.log;
    }
    if (r.status == Status::compile_error && out_.compile_errors++ == 0) out_.first_compile_error = first_error_line(r.log);
    if (r.status == Status::ok && !sol.below_sol) ok_.push_back(r);
    if (r.status != Status::ok) ++out_.failed;
    // A time under T_SOL is a red flag, never a win: it is recorded but cannot become the best.
    else if (!sol.below_sol && (!out_.best || r.time.median_us < out_.best->time.median_us)) {
      out_.best = r;
      out_.best_sol = sol;
      since_better_ = -1;
      best_history_.emplace_back(out_.evaluated, r.time.median_us);
    }
    ++since_better_;
    obs_.on_result(task_, r, sol);
  }
  return results;
}

double TaskRun::recent_gain(int64_t window) const {
  if (best_history_.empty()) return 0;
  const int64_t since = out_.evaluated - window;
  double then = 0;  // the best time as it stood `window` evaluations ago (0: there was none)
  for (const auto& [at, us] : best_history_)
    if (at <= since) then = us;
  if (then == 0) return 1;  // a first valid time inside the window is progress
  return std::clamp(then / best_history_.back().second - 1, 0.0, 1.0);
}

const TaskOutcome& TaskRun::finish(const RetimePolicy& retime, bool interrupted) {
  if (finished_) return out_;
  finished_ = true;
  std::stable_sort(ok_.begin(), ok_.end(),
                   [](const EvalResult& a, const EvalResult& b) { return a.time.median_us < b.time.median_us; });
  out_.search_report = s_.report();
  if (!ok_.empty() && retime.top > 0 && retime.rounds > 0 && !interrupted) retime_best(task_, ev_, ok_, retime, out_, obs_);
  return out_;
}

TaskOutcome tune_task(const Task& t, Evaluator& ev, const Space& space, Strategy& s, const TaskBudget& budget, int batch,
                      Rng& rng, TaskObserver& obs, const TaskBaseline& baseline, const RetimePolicy& retime,
                      SearchPrior prior) {
  TaskRun run(t, ev, space, s, batch, rng, obs, baseline, budget.conditions, std::move(prior));
  auto time_left = [&] {
    if (budget.stop && budget.stop->load()) return false;
    return !budget.deadline || std::chrono::steady_clock::now() < *budget.deadline;
  };
  constexpr int64_t kUnlimited = INT64_MAX / 4;
  while (time_left()) {
    const int64_t left = budget.evals > 0 ? budget.evals - run.outcome().evaluated : kUnlimited;
    const int64_t now = std::min<int64_t>(batch, left);
    if (!run.step(now, std::min<int64_t>(batch, left - now))) break;
  }
  return run.finish(retime, budget.stop && budget.stop->load());
}

}  // namespace soltune
