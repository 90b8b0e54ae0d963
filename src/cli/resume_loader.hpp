#pragma once
// Reads an interrupted run back from the knowledge base in the form the search replays it.
#include <chrono>

#include "agents/resume.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune::cli {

EvalResult to_eval_result(const ResultRecord& r);
// Results keyed by task id and configuration key; baselines: each task's first (the search's).
RecordedRun load_recorded(const KnowledgeBase& kb, int64_t run_id);
// Wall time the run had used: from its start to its last recorded result (0 when none).
double seconds_used(const KnowledgeBase& kb, const RunRecord& run);

}  // namespace soltune::cli
