#pragma once
// soltune export and results measured with earlier texts of a template. A result belongs to the text
// it was tuned with (its source hash); after an edit the knowledge base has none for today's text.
// Where the earlier text and today's compile the result's configuration to the same machine code
// (codegen/machine_code.hpp), the measurement still describes today's kernel and may be exported.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/problem.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {

// The fastest result per (dtype, shape key); predictions count only with predicted_too.
std::map<std::pair<std::string, std::string>, ResultRecord> fastest_per_shape(const std::vector<ResultRecord>& rs,
                                                                            bool predicted_too);

struct EarlierResults {
  std::vector<ResultRecord> same_code;  // usable as today's: the same machine code
  size_t checked = 0;                   // candidates compiled both ways
  std::string note;                     // why none could be checked, or ""
};

// Splits results of earlier texts: those whose configuration today's text of their variant has
// also been evaluated with, on a GPU of the same name (`.second`: today's verdict on that kernel stands, and is
// the one measured beside today's other configurations), and the others (`.first`).
std::pair<std::vector<ResultRecord>, std::vector<ResultRecord>> split_measured_today(const KnowledgeBase& kb,
                                                                                    const ProblemSpec& spec,
                                                                                    std::vector<ResultRecord> earlier);

// Of `candidates` (measured results of earlier texts of `spec`'s variants, each faster than what
// today's text has at its dtype and shape, or alone there), those whose configuration compiles to
// the same machine code with the earlier text (from the knowledge base's sources) and with today's,
// for the result's GPU. At most one per (dtype, shape): the fastest that passes.
EarlierResults earlier_results_with_same_code(const KnowledgeBase& kb, const ProblemSpec& spec,
                                              std::vector<ResultRecord> candidates);

}  // namespace soltune
