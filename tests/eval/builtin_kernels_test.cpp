// soltune's own device kernels (input draws, comparison, L2 flush, ceiling probes) must compile for
// every architecture soltune targets, or no GPU run can start.
#include <gtest/gtest.h>

#include "codegen/compiler.hpp"
#include "eval/builtin_kernels.hpp"

namespace soltune {
namespace {

TEST(BuiltinKernels, CompileForSm80AndSm90) {
  const Compiler c(default_compiler_options());
  for (const char* arch : {"sm_80", "sm_90"}) {
    const auto r = c.compile(CompileRequest{builtin_kernels_source(), "soltune_builtins.cu", builtin_name_expressions(), arch, {}});
    ASSERT_TRUE(r.ok) << arch << ":\n" << r.log;
    ASSERT_EQ(r.kernels.size(), builtin_name_expressions().size());
    for (const auto& k : r.kernels) {
      EXPECT_FALSE(k.lowered_name.empty()) << k.name_expression;
      EXPECT_EQ(k.res.spill_stores, 0) << arch << " " << k.name_expression << " spills";
    }
  }
}

// The wgmma probes exist for sm_90a only. ptxas must not have serialised their wgmmas (notes C7517
// and C7519 in the log): the probe would then measure the compiler's waits, not the tensor cores.
TEST(BuiltinKernels, WgmmaProbesCompileForSm90aUnserialised) {
  const Compiler c(default_compiler_options());
  const auto r = c.compile(CompileRequest{wgmma_probe_source(), "soltune_wgmma_probe.cu", wgmma_probe_name_expressions(), "sm_90a", {}});
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.kernels.size(), 3u);
  for (const auto& k : r.kernels) {
    EXPECT_EQ(k.res.spill_stores, 0) << k.name_expression;
    EXPECT_TRUE(k.res.notes.empty()) << k.name_expression << ": " << k.res.notes.front().line;
  }
  EXPECT_EQ(r.log.find("C7517"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("C7519"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace soltune
