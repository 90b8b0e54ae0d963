// The model backend and the shared candidate checks, on the CPU: real NVRTC compiles, real ptxas
// resources, predictions labelled as such.
#include <gtest/gtest.h>

#include "eval/candidates.hpp"
#include "eval/model_evaluator.hpp"
#include "eval/model_predictor.hpp"

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

// The same bytes over the same blocks: launched as one wave (a grid-stride loop), the kernel ends with
// its slowest SM; launched as many waves, the block scheduler evens the SMs out.
TEST_F(ModelEval, AOneWaveGridEndsWithItsSlowestSm) {
  Resources r;
  r.registers = 32;
  Geometry one, many;
  one.block = many.block = {128, 1, 1};
  one.grid = {int64_t{h200.sms} * 16, 1, 1};  // 16 blocks of 128 threads per SM: one wave
  many.grid = {one.grid[0] * 100, 1, 1};
  const double bytes = 2.0 * (1 << 30), launch = predict_time(0, 0, 16, r, one, h200).t_us;
  const double t_one = predict_time(0, bytes, 16, r, one, h200).t_us - launch;
  const double t_many = predict_time(0, bytes, 16, r, many, h200).t_us - launch;
  EXPECT_GT(t_one, 1.05 * t_many) << t_one << " vs " << t_many;
  EXPECT_LT(t_one, 1.2 * t_many) << t_one << " vs " << t_many;
}

// The same bytes in flight per SM, held by all of its threads or by a quarter of them (registers):
// the fuller SM keeps more of them loading at a time.
TEST_F(ModelEval, FullerSmsKeepMoreBytesInFlight) {
  Geometry g;
  g.block = {128, 1, 1};
  g.grid = {int64_t{h200.sms} * 16 * 50, 1, 1};
  Resources full, quarter;
  full.registers = 32;     // 16 blocks of 128 threads per SM
  quarter.registers = 128;  // 4
  ASSERT_EQ(occupancy_blocks_per_sm(full, g, h200), 16);
  ASSERT_EQ(occupancy_blocks_per_sm(quarter, g, h200), 4);
  const double bytes = 2.0 * (1 << 30);
  EXPECT_LT(predict_time(0, bytes, 16, full, g, h200).t_us, predict_time(0, bytes, 64, quarter, g, h200).t_us);
}

// Where a template estimates its registers (model: registers_per_thread), the prior's occupancy
// follows: a warp per row holding 128 floats is no longer predicted as if 16 such blocks fit an SM.
TEST_F(ModelEval, ThePriorTakesTheTemplatesRegisterEstimate) {
  const auto rms = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "rmsnorm");
  auto bare = rms;
  for (auto& v : bare.variants) v.registers = Expr();
  ASSERT_FALSE(rms.variant("rowreg").registers.empty());
  const Shape shape{{{"rows", 8192}, {"cols", 4096}}};
  const Task with{&rms, &rms.variant("rowreg"), DType::f32, shape}, without{&bare, &bare.variant("rowreg"), DType::f32, shape};
  const Space s(*with.variant, with.fixed(h200));
  const auto wide = s.parse_key("TPR=32,RPB=4,VEC=4,EPT=32,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0");
  const auto full = s.parse_key("TPR=512,RPB=1,VEC=4,EPT=2,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0");
  ModelPredictor estimated(with, h200), unknown(without, h200);
  const auto a = estimated.predict({wide, full}), b = unknown.predict({wide, full});
  EXPECT_GT(a[0], b[0]) << "about 200 registers leave 2 blocks of 128 threads per SM";
  EXPECT_DOUBLE_EQ(a[1], b[1]) << "30 registers: still 2048 threads per SM, nothing changes";
  EXPECT_GT(a[0], a[1]);
  EXPECT_NE(estimated.describe().find("registers as the template estimates them"), std::string::npos);
  EXPECT_NE(unknown.describe().find("registers unknown"), std::string::npos);
}

}  // namespace
}  // namespace soltune
