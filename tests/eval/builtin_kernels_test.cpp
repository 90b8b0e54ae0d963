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

namespace soltune {
namespace {

// The exact rows' grid: chunks of at least 256 k, never more than 32, and a last wave as full as
// a small price per split allows.
TEST(BuiltinKernels, ExactRowsSplitsFillTheLastWave) {
  // 8192 x 28672 x 8192 on 132 SMs: 224 tiles fill 85% of two waves unsplit; 7 splits fill 99% of 12.
  EXPECT_EQ(exact_rows_splits(224, 132, 8192), 7);
  // 24 tiles (n = 6144, 16 rows) take 11 splits: one whole wave.
  EXPECT_EQ(exact_rows_splits(24, 132, 4096), 11);
  // The LM head's 501 tiles fill 95% of four waves unsplit, all but 3 blocks of 19 waves in 5 splits.
  EXPECT_EQ(exact_rows_splits(501, 132, 4096), 5);
  // Where the waves are whole unsplit, no split.
  EXPECT_EQ(exact_rows_splits(264, 132, 4096), 1);
  for (int64_t tiles : {1, 3, 24, 100, 224, 501, 5000})
    for (int64_t k : {16, 255, 256, 1000, 4096, 65536}) {
      const int s = exact_rows_splits(tiles, 132, k);
      EXPECT_GE(s, 1);
      EXPECT_LE(s, std::max<int64_t>(1, std::min<int64_t>(32, k / 256))) << tiles << " tiles, k " << k;
    }
}

}  // namespace
}  // namespace soltune
