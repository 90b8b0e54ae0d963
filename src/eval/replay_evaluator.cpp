#include "eval/replay_evaluator.hpp"

#include "eval/model_predictor.hpp"

namespace soltune {

ReplayEvaluator::ReplayEvaluator(std::vector<const Landscape*> landscapes) {
  if (landscapes.empty()) throw Error("the replay backend needs at least one landscape");
  for (const auto* l : landscapes) {
    if (l->gpu != landscapes.front()->gpu)
      throw Error("landscapes from different GPUs cannot be replayed together: " + l->file.string() + " (" + l->gpu +
                  ") and " + landscapes.front()->file.string() + " (" + landscapes.front()->gpu + ")");
    if (l->kind != landscapes.front()->kind)
      throw Error("measured and predicted landscapes cannot be replayed together: " + l->file.string());
    if (!by_task_.emplace(l->task_id, l).second)
      throw Error("two landscapes record task " + l->task_id + ": " + l->file.string());
  }
  // The device legality was checked on: the known table's entry, with the recorded symbols.
  const auto& l = *landscapes.front();
  kind_ = l.kind;
  dev_ = find_known_gpu(l.gpu).value_or(DeviceInfo{});
  dev_.name = l.gpu;
  if (auto it = l.fixed.find("sms"); it != l.fixed.end()) dev_.sms = static_cast<int>(it->second);
  if (auto it = l.fixed.find("l2_bytes"); it != l.fixed.end()) dev_.l2_bytes = static_cast<int64_t>(it->second);
  if (auto it = l.fixed.find("smem_optin"); it != l.fixed.end()) dev_.smem_per_block_optin = static_cast<int>(it->second);
  if (auto it = l.fixed.find("cc"); it != l.fixed.end()) {
    dev_.cc_major = static_cast<int>(it->second) / 10;
    dev_.cc_minor = static_cast<int>(it->second) % 10;
  }
}

const Landscape& ReplayEvaluator::find(const Task& t) const {
  const auto it = by_task_.find(t.id());
  if (it == by_task_.end()) {
    std::string known;
    for (const auto& [id, l] : by_task_) known += (known.empty() ? "" : ", ") + id;
    throw Error("the replay backend has no landscape for task " + t.id() + " (it has: " + known + ")");
  }
  return *it->second;
}

TaskBaseline ReplayEvaluator::baseline(const Task& t) { return find(t).baseline; }

std::vector<EvalResult> ReplayEvaluator::evaluate(const Task& t, const std::vector<Config>& configs) {
  const auto& l = find(t);
  const Space keys(*t.variant, {});  // keys depend on knob names and values only
  std::vector<EvalResult> out;
  for (const auto& c : configs) {
    ++evaluations_;
    const auto key = keys.key(c);
    const auto it = l.results.find(key);
    EvalResult r;
    if (it != l.results.end()) r = it->second;
    else {
      r.key = key;
      r.status = Status::illegal;
      r.log = "not in the landscape " + l.file.filename().string() + " (not legal when it was recorded)";
    }
    r.config = c;
    r.kind = l.kind;
    // No GPU time or compile spent now: the recorded run's overheads are not this run's.
    r.wall_ms = 0;
    r.compile_ms = 0;
    r.cache_hit = false;
    out.push_back(std::move(r));
  }
  return out;
}

std::unique_ptr<Predictor> ReplayEvaluator::predictor(const Task& t) {
  if (!can_model(t)) return nullptr;  // an older file without its template's launch geometry: no model
  // The prior a real run has (knobs and sizes: no compile), never a status or time from the file.
  return std::make_unique<ModelPredictor>(t, dev_);
}

}  // namespace soltune
