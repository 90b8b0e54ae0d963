#include "run/kb_archive.hpp"

#include <algorithm>

#include "codegen/content_hash.hpp"
#include "core/error.hpp"
#include "core/space.hpp"

namespace soltune {

KbArchive::KbArchive(KnowledgeBase& kb, int64_t run, int64_t gpu_id, const RunInfo& info, const DeviceInfo& device,
                     const ResumePoint* resumed, TaskObserver& display)
    : kb_(kb), run_(run), gpu_id_(gpu_id), info_(info), device_(device), resumed_(resumed), display_(display) {
  if (resumed_) recorded_checkpoints_ = resumed_->checkpoints;
}

std::set<std::string> KbArchive::known(const Task& t) {
  // Configurations of earlier runs are not proposed again; this run's own recorded ones are
  // replayed instead, so that the search retraces its steps.
  auto keys = kb_.evaluated_keys(gpu_id_, t, content_hash(t.variant->source), info_.toolchain, info_.backend);
  if (resumed_)
    if (auto it = resumed_->recorded.results.find(t.id()); it != resumed_->recorded.results.end())
      for (const auto& [key, r] : it->second) keys.erase(key);
  return keys;
}

std::vector<std::string> KbArchive::seeds(const Task& t) {
  // The best configurations of earlier runs at other shapes or on other GPUs, and at this shape as
  // timed another way (an older soltune, a config's timing:). After them, an edited template: the
  // first seed of an earlier text with each knob value that no result of an earlier text has (the
  // values the edit added, or ones never reached).
  const auto hash = content_hash(t.variant->source);
  const auto found = kb_.seeds(t, device_.name, hash, run_, kSeedsPerTask, info_.backend);
  std::vector<std::string> keys;
  for (const auto& r : found) keys.push_back(r.config_key);
  const auto older = std::find_if(found.begin(), found.end(), [&](const auto& r) { return r.source_hash != hash; });
  if (older != found.end()) {
    const Space space(*t.variant, t.fixed(device_));
    try {
      for (const auto& c : space.with_new_values(space.parse_key(older->config_key), kb_.knob_values_elsewhere(t, hash)))
        keys.push_back(space.key(c));
    } catch (const Error&) {
      // A key of knobs this text no longer has: nothing to vary.
    }
  }
  return keys;
}

void KbArchive::on_baseline(const Task& t, const TaskBaseline& b) {
  if (!b.replayed) kb_.record_baseline(run_, t, b);  // a resumed run's are in the knowledge base already
  display_.on_baseline(t, b);
}

void KbArchive::on_result(const Task& t, const EvalResult& r, const SolScore& s) {
  if (!r.replayed) kb_.record(run_, t, content_hash(t.variant->source), r, s);
  if (r.status == Status::compile_error) {
    auto& [count, log] = compile_errors_[t.id()];
    if (count++ == 0) log = r.log;
  }
  display_.on_result(t, r, s);
}

// Checkpoints are written as the run goes; a resumed run compares its rebuilt state with the one
// recorded at the same point, which proves the replay exact (or says where it was not).
void KbArchive::on_checkpoint(const Task& t, int64_t evaluated, const std::string& state) {
  if (auto it = recorded_checkpoints_.find(t.id()); it != recorded_checkpoints_.end() && it->second.first == evaluated) {
    if (it->second.second == state)
      ++checkpoints_matched_;
    else
      display_.on_warning(t, t.id() + ": the resumed search differs from its checkpoint after " + std::to_string(evaluated) +
                                 " evaluations (templates or soltune changed since?)");
  }
  kb_.save_checkpoint(run_, t.id(), evaluated, state);
  display_.on_checkpoint(t, evaluated, state);
}

void KbArchive::on_retime(const Task& t, const TaskBaseline& b, const EvalResult& best, const SolScore& s) {
  kb_.record_baseline(run_, t, b);  // the re-timed T_ref, noted as such
  // The best as re-timed beside it: a row of its own (the search's row keeps the search's time),
  // which best() prefers, since only it compares with T_ref and with the other re-timed ones.
  kb_.record(run_, t, content_hash(t.variant->source), best, s);
  display_.on_retime(t, b, best, s);
}

void KbArchive::on_demoted(const Task& t, const EvalResult& r) {
  kb_.demote(run_, t, r.key, r.status, r.log.substr(0, r.log.find("; ")));
  display_.on_demoted(t, r);
}

}  // namespace soltune
