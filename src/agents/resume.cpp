#include "agents/resume.hpp"

#include "core/space.hpp"

namespace soltune {

TaskBaseline ResumeEvaluator::baseline(const Task& t) {
  if (auto it = rec_.baselines.find(t.id()); it != rec_.baselines.end()) {
    auto b = it->second;
    b.replayed = true;
    return b;
  }
  return inner_.baseline(t);
}

void ResumeEvaluator::prefetch(const Task& t, const std::vector<Config>& configs) {
  const Space space(*t.variant, t.fixed(device()));
  const auto task = rec_.results.find(t.id());
  std::vector<Config> fresh;
  for (const auto& c : configs)
    if (task == rec_.results.end() || !task->second.count(space.key(c))) fresh.push_back(c);
  if (!fresh.empty()) inner_.prefetch(t, fresh);
}

std::vector<EvalResult> ResumeEvaluator::evaluate(const Task& t, const std::vector<Config>& configs) {
  const Space space(*t.variant, t.fixed(device()));
  const auto task = rec_.results.find(t.id());
  std::vector<EvalResult> out(configs.size());
  std::vector<Config> fresh;
  std::vector<size_t> where;
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto key = space.key(configs[i]);
    if (task != rec_.results.end())
      if (auto it = task->second.find(key); it != task->second.end()) {
        out[i] = it->second;
        out[i].config = configs[i];
        out[i].replayed = true;
        inner_.note_result(t, out[i]);
        ++replayed_;
        continue;
      }
    fresh.push_back(configs[i]);
    where.push_back(i);
  }
  if (!fresh.empty()) {
    auto results = inner_.evaluate(t, fresh);
    for (size_t j = 0; j < results.size(); ++j) out[where[j]] = std::move(results[j]);
  }
  return out;
}

}  // namespace soltune
