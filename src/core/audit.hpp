#pragma once
// What compute-sanitizer said about a kernel: one verdict per tool. A kernel the search admitted
// may still read or write where it must not, or race on shared memory where the races did not show
// in the checked launches; the audit runs its correctness rounds under each tool once, before it
// is exported.
#include <string>
#include <string_view>
#include <vector>

namespace soltune {

enum class AuditVerdict { passed, failed, not_audited };
std::string_view audit_verdict_name(AuditVerdict v);
AuditVerdict parse_audit_verdict(std::string_view s);  // throws Error for an unknown name

struct ToolAudit {
  std::string tool;  // memcheck, racecheck, synccheck, initcheck
  AuditVerdict verdict = AuditVerdict::not_audited;
  int errors = 0;    // what the tool counted (0 when it did not run)
  std::string log;   // the findings, or why the kernel was not audited
};

// The tools an audit runs, in order.
const std::vector<std::string>& sanitizer_tools();

// The verdict over tools: failed if any failed, else not_audited if any was not, else passed
// (not_audited for none).
AuditVerdict overall_verdict(const std::vector<ToolAudit>& tools);
// A kernel's verdict: overall_verdict over its audits, where a tool of sanitizer_tools() never run
// leaves it not_audited (what export and `soltune audit` go by).
AuditVerdict kernel_verdict(const std::vector<ToolAudit>& audits);

}  // namespace soltune
