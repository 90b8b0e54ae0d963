// Speed-of-light scores, both forms.
#include "core/sol.hpp"

#include "core/device.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace soltune {
namespace {

TEST(Sol, TimeAtSpeedOfLight) {
  // 1 GB at 2 TB/s = 500 us; 1 GFLOP at 10 TFLOP/s = 100 us: memory bound.
  EXPECT_DOUBLE_EQ(t_sol_us(1e9, 1e9, 10e12, 2e12), 500.0);
  // Compute bound the other way round.
  EXPECT_DOUBLE_EQ(t_sol_us(1e10, 1e8, 10e12, 2e12), 1000.0);
  EXPECT_DOUBLE_EQ(t_sol_us(0, 4e9, 10e12, 2e12), 2000.0);
}

TEST(Sol, HalfAtBaselineOneAtSpeedOfLight) {
  const auto at_ref = sol_score(800, 800, 100);
  EXPECT_TRUE(at_ref.valid);
  EXPECT_FALSE(at_ref.below_sol);
  EXPECT_NEAR(at_ref.score, 0.5, 1e-12);
  EXPECT_NEAR(at_ref.execbench, 0.5, 1e-12);

  const auto at_sol = sol_score(100, 800, 100);
  EXPECT_TRUE(at_sol.valid);
  EXPECT_FALSE(at_sol.below_sol);
  EXPECT_NEAR(at_sol.score, 1.0, 1e-12);
  EXPECT_NEAR(at_sol.execbench, 1.0, 1e-12);
  EXPECT_EQ(at_sol.t_us, 100);
  EXPECT_EQ(at_sol.t_ref_us, 800);
  EXPECT_EQ(at_sol.t_sol_us, 100);
}

TEST(Sol, IntermediateValues) {
  // Log form: the geometric mean of T_ref and T_SOL scores 0.75.
  const auto mid = sol_score(std::sqrt(800.0 * 100.0), 800, 100);
  EXPECT_NEAR(mid.score, 0.75, 1e-12);
  // SOL-ExecBench form: halfway in time from T_SOL to T_ref scores 1 / 1.5.
  const auto half = sol_score(450, 800, 100);
  EXPECT_NEAR(half.execbench, 1.0 / 1.5, 1e-12);
  EXPECT_GT(half.score, 0.5);
  EXPECT_LT(half.score, 1.0);
  // Slower than the baseline: below 0.5 in both forms.
  const auto slow = sol_score(1600, 800, 100);
  EXPECT_LT(slow.score, 0.5);
  EXPECT_LT(slow.execbench, 0.5);
  EXPECT_NEAR(slow.score, 0.5 * (1 - std::log(2.0) / std::log(8.0)), 1e-12);
}

TEST(Sol, BelowSpeedOfLightIsFlagged) {
  const auto s = sol_score(50, 800, 100);
  EXPECT_TRUE(s.below_sol);
  EXPECT_GT(s.score, 1.0);  // the number is kept, but flagged: a red flag, never a win
  EXPECT_FALSE(sol_score(100, 800, 100).below_sol);
  EXPECT_FALSE(sol_score(100.0001, 800, 100).below_sol);
  // Within the ceilings' own noise: not a red flag; beyond it: flagged.
  EXPECT_FALSE(sol_score(100 * (1 - kSolNoise / 2), 800, 100).below_sol);
  EXPECT_TRUE(sol_score(100 * (1 - 2 * kSolNoise), 800, 100).below_sol);
}

TEST(Sol, InvalidWithoutScale) {
  EXPECT_FALSE(sol_score(100, 100, 100).valid);  // T_ref == T_SOL
  EXPECT_FALSE(sol_score(100, 90, 100).valid);   // T_ref < T_SOL
  EXPECT_EQ(sol_score(100, 90, 100).score, 0);
  EXPECT_FALSE(sol_score(0, 800, 100).valid);    // no time
  EXPECT_FALSE(sol_score(200, 800, 0).valid);    // no T_SOL
  EXPECT_TRUE(sol_score(100, 90, 100).t_ref_us == 90);
}

TEST(Sol, BandwidthIsTheBetterOfCopyAndRead) {
  // A reduction reads and hardly writes: it outruns the copy, so T_SOL uses the read rate where that
  // is higher, and the copy's where no read rate was measured (the datasheet, older files).
  Ceilings c{4.27e12, 6e13, 9.9e14, "measured", 4.48e12};
  EXPECT_DOUBLE_EQ(c.sol_bw(), 4.48e12);
  c.read_bw = 0;
  EXPECT_DOUBLE_EQ(c.sol_bw(), 4.27e12);
  c.read_bw = 4.0e12;
  EXPECT_DOUBLE_EQ(c.sol_bw(), 4.27e12);
}

}  // namespace
}  // namespace soltune
