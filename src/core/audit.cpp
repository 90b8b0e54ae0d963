#include "core/audit.hpp"

#include <algorithm>

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace soltune {

namespace {
constexpr EnumNames<AuditVerdict, 3> kVerdict{
    "audit verdict",
    {{{AuditVerdict::passed, "passed"}, {AuditVerdict::failed, "failed"}, {AuditVerdict::not_audited, "not_audited"}}}};
}  // namespace

std::string_view audit_verdict_name(AuditVerdict v) { return kVerdict.name(v); }
AuditVerdict parse_audit_verdict(std::string_view s) { return kVerdict.parse(s); }

const std::vector<std::string>& sanitizer_tools() {
  static const std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
  return tools;
}

AuditVerdict overall_verdict(const std::vector<ToolAudit>& tools) {
  if (tools.empty()) return AuditVerdict::not_audited;
  bool all = true;
  for (const auto& t : tools) {
    if (t.verdict == AuditVerdict::failed) return AuditVerdict::failed;
    all = all && t.verdict == AuditVerdict::passed;
  }
  return all ? AuditVerdict::passed : AuditVerdict::not_audited;
}

AuditVerdict kernel_verdict(const std::vector<ToolAudit>& audits) {
  const auto v = overall_verdict(audits);
  for (const auto& tool : sanitizer_tools())
    if (v == AuditVerdict::passed &&
        std::none_of(audits.begin(), audits.end(), [&](const ToolAudit& a) { return a.tool == tool; }))
      return AuditVerdict::not_audited;
  return v;
}

}  // namespace soltune
