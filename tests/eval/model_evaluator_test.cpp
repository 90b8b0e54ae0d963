// The model backend and the shared candidate checks, on the CPU: real NVRTC compiles, real ptxas
// resources, predictions labelled as such.
#include <gtest/gtest.h>

#include "eval/candidates.hpp"
#include "eval/model_evaluator.hpp"

namespace soltune {
namespace {

class ModelEval : public ::testing::Test {
 protected:
  ProblemSpec p = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "gelu");
  DeviceInfo h200 = *find_known_gpu("H200");
  Compiler compiler{default_compiler_options()};
};

TEST_F(ModelEval, PredictsLabelledTimesFromRealResources) {
  ModelEvaluator ev(h200, compiler, "sm_90");
  const Task t{&p, &p.variant("vectorized"), DType::f32, Shape{{{"n", int64_t{1} << 28}}}};
  const Space s(*t.variant, t.fixed(h200));
  // One fast-looking configuration and one that keeps few bytes in flight.
  const auto good = s.parse_key("BLOCK=256,VEC=4,EPT=4,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
  const auto poor = s.parse_key("BLOCK=64,VEC=1,EPT=1,GRID_STRIDE=1,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
  const auto r = ev.evaluate(t, {good, poor});
  ASSERT_EQ(r.size(), 2u);
  for (const auto& x : r) {
    EXPECT_EQ(x.status, Status::ok) << x.log;
    EXPECT_EQ(x.kind, TimeKind::predicted);
    EXPECT_TRUE(x.res.parsed);
    EXPECT_GT(x.res.registers, 0);
    EXPECT_NE(x.log.find("predicted"), std::string::npos);
  }
  EXPECT_LT(r[0].time.median_us, r[1].time.median_us);
  const auto b = ev.baseline(t);
  EXPECT_EQ(b.kind, TimeKind::predicted);
  // Never faster than the bandwidth allows.
  EXPECT_GE(r[0].time.median_us, b.t_sol_us);
  EXPECT_GT(b.t_ref_us, r[0].time.median_us);
}

TEST_F(ModelEval, IllegalConfigurationsNeverReachNvrtc) {
  const Task t{&p, &p.variant("vectorized"), DType::f32, Shape{{{"n", 1000}}}};
  const Space s(*t.variant, t.fixed(h200));
  const auto illegal = s.parse_key("BLOCK=256,VEC=8,EPT=4,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
  const auto batch = prepare_candidates(t, h200, "sm_90", {illegal});
  ASSERT_EQ(batch.candidates.size(), 1u);
  EXPECT_EQ(batch.candidates[0].result.status, Status::illegal);
  EXPECT_TRUE(batch.requests.empty());
  EXPECT_NE(batch.candidates[0].result.log.find("VEC * dtype_bytes <= 16"), std::string::npos);
}

TEST_F(ModelEval, LaunchLimitsFollowTheDevice) {
  Resources r;
  r.registers = 255;
  Geometry g;
  g.block = {1024, 1, 1};
  EXPECT_NE(launch_limits(r, g, h200), "");  // 255 x 1024 registers exceed the register file
  r.registers = 32;
  EXPECT_EQ(launch_limits(r, g, h200), "");
  g.smem = 300 * 1024;
  EXPECT_NE(launch_limits(r, g, h200).find("shared memory"), std::string::npos);
  g.smem = 0;
  EXPECT_EQ(occupancy_blocks_per_sm(r, g, h200), 2);  // 2048 threads per SM on sm_90
  r.spill_loads = 4;  // ptxas's report: a spilling kernel never reaches the GPU
  EXPECT_NE(launch_limits(r, g, h200).find("spilled"), std::string::npos);
}

}  // namespace
}  // namespace soltune
