#pragma once
// The problem's fallback as a knowledge base measured it: what export ships as the kernel of last
// resort, and what audit checks beside the tuned kernels.
#include <optional>
#include <string>

#include "core/problem.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune::cli {

// The fastest ok result of the fallback's configuration for dtype t under today's text of its
// variant (any shape; a prediction only with predicted_too), or nullopt (no fallback, or never run).
std::optional<ResultRecord> fallback_pick(const KnowledgeBase& kb, const ProblemSpec& spec, DType t,
                                          const std::string& gpu_filter, bool predicted_too);

}  // namespace soltune::cli
