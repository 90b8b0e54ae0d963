#pragma once
// The problem's fallback as a knowledge base measured it: what export ships as the kernel of last
// resort, and what audit checks beside the tuned kernels.
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {

// The fastest ok result of the fallback's configuration for dtype t under today's text of its
// variant, one per class of shapes its compiled-in sizes make (core/fallback.hpp: matmul's trans_b 0
// and 1), at any shape of the class; a prediction only with predicted_too. Empty: no fallback, or
// never run.
std::vector<ResultRecord> fallback_picks(const KnowledgeBase& kb, const ProblemSpec& spec, DType t,
                                          const std::string& gpu_filter, bool predicted_too);

}  // namespace soltune
