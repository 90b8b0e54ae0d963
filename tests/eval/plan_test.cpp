// Plans of several launches on the CPU: a candidate's plan holds the launches its knobs make run, one
// NVRTC program compiles all of its kernels, the worker protocol carries each kernel, and the model
// charges the further launch and the scratch between them.
#include <gtest/gtest.h>

#include "../support/files.hpp"
#include "../support/plan_variants.hpp"
#include "eval/candidates.hpp"
#include "eval/model_evaluator.hpp"
#include "eval/wire.hpp"

namespace soltune {
namespace {

class Plans : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates" / "gelu", dir_.path() / "gelu",
                          std::filesystem::copy_options::recursive);
    test::add_two_step_gelu(dir_.path() / "gelu");
    p_ = load_problem(dir_.path(), "gelu");
  }
  test::TempDir dir_{"plans"};
  ProblemSpec p_;
  DeviceInfo h200 = *find_known_gpu("H200");
  Compiler compiler{default_compiler_options()};
};

TEST_F(Plans, ACandidatesPlanHoldsTheLaunchesItsKnobsRun) {
  const Task t{&p_, &p_.variant("twostep"), DType::bf16, Shape{{{"n", 1000003}}}};
  const Space s(*t.variant, t.fixed(h200));
  const auto batch = prepare_candidates(t, h200, "sm_90", {s.parse_key("BLOCK=256,STEPS=1,GAP=0,OVER=0"),
                                                           s.parse_key("BLOCK=128,STEPS=2,GAP=0,OVER=0")});
  ASSERT_EQ(batch.candidates.size(), 2u);
  const auto& one = batch.candidates[0];
  const auto& two = batch.candidates[1];
  ASSERT_EQ(one.plan.size(), 1u);
  EXPECT_EQ(one.name_expr, "gelu_first<__nv_bfloat16, 1, 0, 0>");
  ASSERT_EQ(two.plan.size(), 2u);
  EXPECT_EQ(two.plan[0].name_expr, "gelu_first<__nv_bfloat16, 2, 0, 0>");
  EXPECT_EQ(two.plan[1].name_expr, "gelu_second<__nv_bfloat16>");
  EXPECT_EQ(two.plan[1].geo.grid[0], (1000003 + 127) / 128);
  EXPECT_EQ(two.result.geo.grid[0], two.plan[0].geo.grid[0]) << "the candidate's geometry is the main launch's";
  ASSERT_EQ(batch.requests.size(), 2u);
  EXPECT_EQ(batch.requests[0].name_expressions, std::vector<std::string>{one.name_expr});
  EXPECT_EQ(batch.requests[1].name_expressions,
            (std::vector<std::string>{"gelu_first<__nv_bfloat16, 2, 0, 0>", "gelu_second<__nv_bfloat16>"}));

  // Compiled, each kernel gets its own resources, and the protocol carries them all.
  const auto built = compiler.compile_all(batch.requests);
  ASSERT_TRUE(built[1].ok) << built[1].log;
  auto c = two;
  ASSERT_TRUE(take_compile_result(c, built[1]));
  EXPECT_TRUE(c.plan[0].res.parsed);
  EXPECT_TRUE(c.plan[1].res.parsed);
  EXPECT_EQ(plan_limits(c, h200), "");
  YAML::Node msg;
  msg["kernels"] = wire::encode_kernels(built[1].kernels);
  const auto back = wire::decode_kernels(wire::parse(wire::emit(msg))["kernels"]);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].name_expression, "gelu_second<__nv_bfloat16>");
  EXPECT_EQ(back[1].lowered_name, built[1].kernels[1].lowered_name);
  EXPECT_EQ(back[1].res.registers, built[1].kernels[1].res.registers);
  // A limit broken by the second kernel names it.
  c.plan[1].geo.block = {2048, 1, 1};
  EXPECT_EQ(plan_limits(c, h200).rfind("gelu_second: block of 2048 threads", 0), 0u) << plan_limits(c, h200);
}

// A launch marked programmatic overlaps the one before it where the device has programmatic
// dependent launch (compute capability 9.0 on), and is an ordinary launch elsewhere.
TEST_F(Plans, AProgrammaticLaunchOverlapsOnlyWhereTheDeviceHasIt) {
  const auto yaml = dir_.path() / "gelu" / "twostep.yaml";
  test::write_file(yaml, test::replace_once(test::read_file(yaml), "when: STEPS == 2}", "when: STEPS == 2, programmatic: true}"));
  p_ = load_problem(dir_.path(), "gelu");
  ASSERT_TRUE(p_.variant("twostep").after.at(0).programmatic);
  const Task t{&p_, &p_.variant("twostep"), DType::f32, Shape{{{"n", 4096}}}};
  for (const auto* gpu : {"H200", "A100"}) {
    const DeviceInfo d = *find_known_gpu(gpu);
    const Space s(*t.variant, t.fixed(d));
    const auto batch = prepare_candidates(t, d, "sm_80", {s.parse_key("BLOCK=128,STEPS=2,GAP=0,OVER=0")});
    ASSERT_EQ(batch.candidates.at(0).plan.size(), 2u);
    EXPECT_FALSE(batch.candidates[0].plan[0].programmatic) << "the plan's first launch waits for all before it";
    EXPECT_EQ(batch.candidates[0].plan[1].programmatic, d.cc() >= 90) << gpu;
  }
}

TEST_F(Plans, TheModelChargesTheFurtherLaunchAndTheScratch) {
  const Task t{&p_, &p_.variant("twostep"), DType::f32, Shape{{{"n", 1 << 26}}}};
  const Space s(*t.variant, t.fixed(h200));
  ModelEvaluator ev(h200, compiler, "sm_90");
  const auto r = ev.evaluate(t, {s.parse_key("BLOCK=256,STEPS=1,GAP=0,OVER=0"), s.parse_key("BLOCK=256,STEPS=2,GAP=0,OVER=0")});
  ASSERT_EQ(r.size(), 2u);
  ASSERT_EQ(r[0].status, Status::ok) << r[0].log;
  ASSERT_EQ(r[1].status, Status::ok) << r[1].log;
  // 256 MiB of f32 scratch written and read once: about 2 * 268 MB / (0.9 * 4.8 TB/s), 124 us.
  const double extra = r[1].time.median_us - r[0].time.median_us;
  EXPECT_GT(extra, 100.0);
  EXPECT_LT(extra, 160.0);
}

}  // namespace
}  // namespace soltune
