// soltune export and compute-sanitizer's verdicts (soltune audit): a kernel that failed its audit
// is not exported unless asked for, one never audited is named, and the header says which is which.
// Measured results without a GPU: the replay backend on the recorded GELU landscape; the verdicts
// are written into the knowledge base as `soltune audit` writes them.
#include <gtest/gtest.h>

#include <string>

#include "cli_fixture.hpp"
#include "core/fallback.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {
namespace {

class ExportAudit : public Cli {
 protected:
  // Records a verdict per tool for every best result of gelu: export's pick is one of them.
  void record(AuditVerdict racecheck) const {
    auto kb = KnowledgeBase::open(kb_);
    auto kernels = kb.best("gelu");
    const auto spec = load_problem(kSource / "templates", "gelu");
    const auto& v = *spec.fallback_variant();  // and the fallback export ships beside them
    for (const auto& r : kb.config_results("gelu", v.name, "f32", Space(v, Bindings{}).key(*fallback_config(v, DType::f32)),
                                           "", kernels.front().source_hash))
      kernels.push_back(r);
    for (const auto& r : kernels) {
      std::vector<ToolAudit> tools;
      for (const auto& tool : sanitizer_tools()) tools.push_back({tool, AuditVerdict::passed, 0, ""});
      tools[1].verdict = racecheck;
      if (racecheck == AuditVerdict::failed) {
        tools[1].errors = 2;
        tools[1].log = "2 error(s):\nError: Race reported between Write access at gelu_vec+0x90\nand Read access at gelu_vec+0xb0";
      }
      kb.record_audit(r, r.source_hash, "nvrtc 13.0", tools);
    }
  }
};

TEST_F(ExportAudit, UnauditedKernelsAreNamedAndFailedOnesRefused) {
  const auto templates = tune_gelu_replay();
  ASSERT_FALSE(HasFailure());
  const auto out = tmp_ / "gelu.cuh";
  const std::string common = "export --kb " + q(kb_) + " --problem gelu --templates " + q(templates) + " -o " + q(out);

  // An export that wrote the header: what it said, and the audit line the header carries.
  const auto expect_written = [&](const Result& r, std::initializer_list<std::string_view> says, const std::string& audit) {
    expect_run(r, 0, says);
    EXPECT_NE(read(out).find("// compute-sanitizer audit: " + audit), std::string::npos) << audit;
  };

  auto r = soltune(common);  // "not audited" names the fallback as well
  expect_written(r, {"2 kernel(s) not audited under compute-sanitizer", "never audited"}, "not_audited");

  record(AuditVerdict::passed);
  r = soltune(common);
  expect_written(r, {}, "passed (memcheck passed, racecheck passed, synccheck passed, initcheck passed)");
  EXPECT_EQ(r.err.find("not audited"), std::string::npos) << r;

  // A later audit that failed is the one that holds; nothing is written over the earlier header.
  fs::remove(out);
  record(AuditVerdict::failed);
  r = soltune(common);
  expect_run(r, 1,
             {"2 kernel(s) failed their compute-sanitizer audit; nothing was written",
              "racecheck failed (2 errors)",
              "Race reported between Write access"});
  EXPECT_FALSE(fs::exists(out));

  expect_written(soltune(common + " --allow-failed-audit"),
                 {"warning: exporting 2 kernel(s) that failed their compute-sanitizer audit"}, "failed");

  // A tool that could not run leaves the kernel not audited, with the reason.
  record(AuditVerdict::not_audited);
  expect_written(soltune(common), {"racecheck not_audited"}, "");
}

TEST_F(ExportAudit, AuditWithoutAGpuOrWithAnUnknownToolFails) {
  tune_gelu_replay();
  ASSERT_FALSE(HasFailure());
  auto r = soltune("audit --kb " + q(kb_) + " --tools memcheck,leakcheck");
  expect_run(r, 2, {"unknown tool 'leakcheck'"});
  r = soltune("audit --kb " + q(tmp_ / "missing.sqlite"));
  expect_run(r, 1, {"does not exist"});
  // Where a GPU exists the audit runs (the GPU tests audit); this part is about machines without one.
  if (soltune("devices --no-measure").out.find("device 0:") != std::string::npos)
    GTEST_SKIP() << "a GPU is present: the audit runs there (eval_gpu_test audits)";
  r = soltune("audit --kb " + q(kb_));
  expect_run(r, 1, {"nothing audited"});
}

}  // namespace
}  // namespace soltune
