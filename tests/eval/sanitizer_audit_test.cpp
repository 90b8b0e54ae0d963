// Reading compute-sanitizer's logs and finding the tool, without a GPU.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

#include "eval/sanitizer_audit.hpp"

namespace soltune {
namespace {

TEST(SanitizerLog, FindingsAreSplitAndNamedByKernelWithoutTheHostBacktrace) {
  const auto r = parse_sanitizer_log(
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at _Z10bad_kernelIfLi256EEvPKT_PS0_x+0x1c0\n"
      "=========     by thread (3,0,0) in block (7,0,0)\n"
      "=========     Address 0x7f00 is out of bounds\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "=========         Host Frame: cuLaunchKernelEx [0x2f1] in libcuda.so.1\n"
      "=========\n"
      "========= Uninitialized __global__ memory read of size 4 bytes\n"
      "=========     at soltune_compare+0x70\n"
      "=========\n"
      "========= ERROR SUMMARY: 3 errors\n");
  EXPECT_TRUE(r.summary);
  EXPECT_EQ(r.errors, 3);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].kernel, "_Z10bad_kernelIfLi256EEvPKT_PS0_x");
  EXPECT_EQ(r.findings[0].lines.size(), 4u);
  EXPECT_EQ(r.findings[1].kernel, "soltune_compare");
  // Demangled for people to read.
  EXPECT_EQ(findings_text({r.findings[0]}),
            "Invalid __global__ write of size 4 bytes\nat void bad_kernel<float, 256>(float const*, float*, long long)+0x1c0\n"
            "by thread (3,0,0) in block (7,0,0)\nAddress 0x7f00 is out of bounds");
}

TEST(SanitizerLog, RacecheckSummaryCountsErrorsAndWarnings) {
  const auto r = parse_sanitizer_log(
      "========= COMPUTE-SANITIZER\n"
      "========= Error: Race reported between Write access at _Z4raceIfEvv+0x90 in race.cu:7\n"
      "=========     and Read access at _Z4raceIfEvv+0xb0 in race.cu:7 [128 hazards]\n"
      "=========\n"
      "========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)\n");
  EXPECT_TRUE(r.summary);
  EXPECT_EQ(r.errors, 1);
  EXPECT_EQ(r.warnings, 1);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kernel, "_Z4raceIfEvv");
  EXPECT_EQ(r.findings[0].lines.size(), 2u);
}

TEST(SanitizerLog, ALogWithoutASummaryIsNotAPass) {
  const auto r = parse_sanitizer_log("========= COMPUTE-SANITIZER\n========= Target application terminated\n");
  EXPECT_FALSE(r.summary);
  EXPECT_EQ(r.errors, 0);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kernel, "");
  EXPECT_FALSE(parse_sanitizer_log("").summary);
  EXPECT_TRUE(parse_sanitizer_log("========= ERROR SUMMARY: 0 errors\n").summary);
}

TEST(SanitizerLog, FindingsTextIsCappedInLength) {
  std::string log;
  for (int i = 0; i < 100; ++i) log += "========= Invalid __shared__ read of size 4 bytes\n=========     at k+0x10\n";
  const auto r = parse_sanitizer_log(log + "========= ERROR SUMMARY: 100 errors\n");
  EXPECT_EQ(r.errors, 100);
  EXPECT_EQ(r.findings.size(), 100u);
  const auto text = findings_text(r.findings);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n') + 1, kMaxFindingLines);
}

TEST(SanitizerAudit, ANamedSanitizerThatIsMissingIsNotFoundRatherThanAnother) {
  ASSERT_EQ(setenv("SOLTUNE_COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer", 1), 0);
  EXPECT_FALSE(find_compute_sanitizer().has_value());
  unsetenv("SOLTUNE_COMPUTE_SANITIZER");
}

TEST(SanitizerAudit, WithoutTheSanitizerEveryToolIsNotAudited) {
  const Compiler c(default_compiler_options());
  AuditOptions o;  // no sanitizer
  const auto v = audit_kernel(c, o, DeviceInfo{}, Task{}, Config{});
  ASSERT_EQ(v.size(), sanitizer_tools().size());
  for (const auto& a : v) {
    EXPECT_EQ(a.verdict, AuditVerdict::not_audited) << a.tool;
    EXPECT_EQ(a.log, "compute-sanitizer not found");
  }
  EXPECT_EQ(overall_verdict(v), AuditVerdict::not_audited);
}

TEST(AuditVerdicts, AnyFailureFailsAndAnyGapLeavesItNotAudited) {
  std::vector<ToolAudit> v = {{"memcheck", AuditVerdict::passed, 0, ""}, {"racecheck", AuditVerdict::passed, 0, ""}};
  EXPECT_EQ(overall_verdict(v), AuditVerdict::passed);
  v.push_back({"initcheck", AuditVerdict::not_audited, 0, "timed out"});
  EXPECT_EQ(overall_verdict(v), AuditVerdict::not_audited);
  v.push_back({"synccheck", AuditVerdict::failed, 1, "Barrier error"});
  EXPECT_EQ(overall_verdict(v), AuditVerdict::failed);
  EXPECT_EQ(overall_verdict({}), AuditVerdict::not_audited);
  // A kernel is audited only when every tool ran: two that passed are not enough.
  const std::vector<ToolAudit> two = {{"memcheck", AuditVerdict::passed, 0, ""}, {"racecheck", AuditVerdict::passed, 0, ""}};
  EXPECT_EQ(kernel_verdict(two), AuditVerdict::not_audited);
  std::vector<ToolAudit> all;
  for (const auto& t : sanitizer_tools()) all.push_back({t, AuditVerdict::passed, 0, ""});
  EXPECT_EQ(kernel_verdict(all), AuditVerdict::passed);
  all[1].verdict = AuditVerdict::failed;
  EXPECT_EQ(kernel_verdict(all), AuditVerdict::failed);
  EXPECT_EQ(parse_audit_verdict("failed"), AuditVerdict::failed);
  EXPECT_THROW(parse_audit_verdict("ok"), Error);
}

}  // namespace
}  // namespace soltune
