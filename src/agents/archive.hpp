#pragma once
// The archive port: what the dispatcher asks of the run's memory and tells it. Before a task it
// asks which configurations are known already (never proposed again) and which did well elsewhere
// (seeds, proposed first); while the task runs it reports every baseline, result and checkpoint
// (TaskObserver). src/run binds it to the knowledge base; the defaults know nothing and keep nothing.
#include <set>
#include <string>
#include <vector>

#include "search/tune_task.hpp"

namespace soltune {

class Archive : public TaskObserver {
 public:
  // Canonical keys already evaluated for the task.
  virtual std::set<std::string> known(const Task&) { return {}; }
  // Configuration keys that did well elsewhere, best first (keys that do not fit are skipped).
  virtual std::vector<std::string> seeds(const Task&) { return {}; }
};

}  // namespace soltune
