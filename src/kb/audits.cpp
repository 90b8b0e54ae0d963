// compute-sanitizer's verdicts on tuned kernels (the audits table).
#include <algorithm>

#include "kb/kb_impl.hpp"

namespace soltune {

void KnowledgeBase::record_audit(const ResultRecord& kernel, const std::string& source_hash, const std::string& toolchain,
                                 const std::vector<ToolAudit>& tools) {
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  sqlite::Transaction tx(db);
  for (const auto& a : tools) {
    auto st = db.prepare(std::string(
                             "INSERT INTO audits (gpu_id, problem, variant, dtype, shape_key, config_key, source_hash, tool, "
                             "verdict, errors, log, toolchain, audited_at) VALUES (:gpu_id, :problem, :variant, :dtype, "
                             ":shape_key, :config_key, :source_hash, :tool, :verdict, :errors, :log, :toolchain, ") +
                         kb::kNowSql + ")");
    st.bind("gpu_id", kernel.gpu_id)
        .bind("problem", kernel.problem)
        .bind("variant", kernel.variant)
        .bind("dtype", kernel.dtype)
        .bind("shape_key", kernel.shape_key)
        .bind("config_key", kernel.config_key)
        .bind("source_hash", source_hash)
        .bind("tool", a.tool)
        .bind("verdict", audit_verdict_name(a.verdict))
        .bind("errors", static_cast<int64_t>(a.errors))
        .bind("log", a.log)
        .bind("toolchain", toolchain);
    st.run();
  }
  tx.commit();
}

std::vector<ToolAudit> KnowledgeBase::audits(const ResultRecord& kernel, const std::vector<std::string>& source_hashes) const {
  std::lock_guard lock(impl_->mu);
  const auto hashes = source_hashes.empty() ? std::vector<std::string>{kernel.source_hash} : source_hashes;
  // The latest row per tool; ids break ties between audits of one millisecond.
  auto st = impl_->db.prepare(
      "SELECT tool, verdict, errors, log, source_hash FROM audits WHERE gpu_id = :gpu_id AND problem = :problem AND "
      "variant = :variant AND dtype = :dtype AND shape_key = :shape_key AND config_key = :config_key "
      "ORDER BY audited_at DESC, id DESC");
  st.bind("gpu_id", kernel.gpu_id)
      .bind("problem", kernel.problem)
      .bind("variant", kernel.variant)
      .bind("dtype", kernel.dtype)
      .bind("shape_key", kernel.shape_key)
      .bind("config_key", kernel.config_key);
  std::vector<ToolAudit> latest;
  while (st.step()) {
    if (std::find(hashes.begin(), hashes.end(), st.text("source_hash")) == hashes.end()) continue;
    const auto tool = st.text("tool");
    if (std::any_of(latest.begin(), latest.end(), [&](const ToolAudit& a) { return a.tool == tool; })) continue;
    latest.push_back({tool, parse_audit_verdict(st.text("verdict")), static_cast<int>(st.i64("errors")), st.text("log")});
  }
  const auto& order = sanitizer_tools();
  auto rank = [&](const ToolAudit& a) { return std::find(order.begin(), order.end(), a.tool) - order.begin(); };
  std::sort(latest.begin(), latest.end(), [&](const ToolAudit& a, const ToolAudit& b) { return rank(a) < rank(b); });
  return latest;
}

}  // namespace soltune
