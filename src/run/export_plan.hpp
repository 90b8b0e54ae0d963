#pragma once
// What `soltune export` ships of a problem, chosen from a knowledge base: per tuned (dtype, shape)
// the fastest result of today's templates (or of an earlier text that compiles to the same machine
// code), the problem's fallback per dtype, their cubins rebuilt as they were timed, and their
// compute-sanitizer verdicts. The choice and its warnings are values; the command line prints them.
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/header_export.hpp"
#include "core/audit.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {

struct ExportOptions {
  std::string kb_path;                // as the user named it, for messages
  std::string gpu;                    // GPU name fragment ("": the only GPU with results)
  std::filesystem::path templates;    // today's templates
  bool allow_predicted = false;       // export model predictions where nothing was measured
  bool allow_failed_audit = false;    // export kernels that failed compute-sanitizer (with a warning)
  bool source_only = false;           // no cubins: the header's kernels compile from source
};

struct ExportPlan {
  ProblemSpec spec;
  std::vector<Specialization> specs;  // the tuned ones, then the fallbacks
  std::vector<ResultRecord> records;  // each specialization's result, in the same order
  DeviceInfo device;                  // the GPU they were tuned on, as the knowledge base records it
  std::string gpu;                    // its name
  std::vector<std::string> warnings;  // what the user must know of the choice, one message each
};

// An export that cannot go on. `warnings` holds what was found before it stopped; `usage`: the
// user must choose (several GPUs and no --gpu), not fix the knowledge base.
class ExportRefused : public Error {
 public:
  ExportRefused(const std::string& what, std::vector<std::string> found, bool choose)
      : Error(what), warnings(std::move(found)), usage(choose) {}
  std::vector<std::string> warnings;
  bool usage;
};

// Throws ExportRefused where nothing may be exported (no result, only predictions without
// allow_predicted, a failed audit without allow_failed_audit, several GPUs, a cubin NVRTC no
// longer builds).
ExportPlan plan_export(const KnowledgeBase& kb, const std::string& problem, const ExportOptions& o);

// The verdicts that hold for a result as export ships it: audits of its own template text or of
// today's (which export compiles), latest per tool.
std::vector<ToolAudit> audits_of(const KnowledgeBase& kb, const ProblemSpec& spec, const ResultRecord& r);
// "memcheck passed, racecheck failed (2 errors), synccheck passed, initcheck not audited"
std::string audit_summary(const std::vector<ToolAudit>& audits);

}  // namespace soltune
