#pragma once
// soltune audit: the kernels export would ship, each run once under compute-sanitizer on this
// machine's GPU (eval/sanitizer_audit.hpp), the verdicts recorded in the knowledge base. Export
// reads them back here.
#include <string>
#include <vector>

#include "core/audit.hpp"
#include "core/problem.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune::cli {

// The verdicts that hold for a result as export ships it: audits of its own template text or of
// today's (which export compiles), latest per tool.
std::vector<ToolAudit> audits_of(const KnowledgeBase& kb, const ProblemSpec& spec, const ResultRecord& r);
// "memcheck passed, racecheck failed (2 errors), synccheck passed, initcheck not audited"
std::string audit_summary(const std::vector<ToolAudit>& audits);

int audit_command(const std::vector<std::string>& args);

}  // namespace soltune::cli
