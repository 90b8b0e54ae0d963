// GPU tests (label gpu): the checks of templates/matmul_fp8 know FP8 accumulation. Hopper's FP8
// tensor cores add into an accumulator of about 14 significant bits; wgmma_ws promoting every 128 k
// into f32 passes at k = 16384 in every scale mode, its consumers taking turns or not, and the same
// kernel keeping the tensor cores' sum across all of k is wrong_answer there, in both 8-bit types.
#include <gtest/gtest.h>

#include <map>

#include "core/space.hpp"
#include "eval/worker_evaluator.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

// wgmma_ws's configuration with these knobs, the rest at a preset's values.
Config wgmma_config(const VariantSpec& v, int64_t promote, int64_t pingpong = 0) {
  const std::map<std::string, int64_t> knobs{{"BM", 128},        {"BN", 128},  {"STAGES", 4}, {"PROMOTE", promote},
                                             {"EPI", 0},         {"GROUP", 8}, {"SPARE", 0},  {"PINGPONG", pingpong}};
  Config c;
  for (const auto& k : v.knobs) c.values.push_back(knobs.at(k.name));
  return c;
}

TEST(Fp8CheckGpu, PromotionEvery128kPassesAndTheTensorCoresSumAloneFailsAtLargeK) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = test::source_dir() / "templates";
  const auto p = load_problem(root, "matmul_fp8");
  const auto& v = p.variant("wgmma_ws");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  for (DType dt : {DType::e4m3, DType::e5m2})
    for (int64_t scale : {0, 1, 2}) {
      const Task t{&p, &v, dt, Shape{{{"m", 256}, {"n", 256}, {"k", 16384}, {"scale", scale}}}};
      ev.baseline(t);
      // Both consumers issuing at once, and taking turns.
      const auto r = ev.evaluate(t, {wgmma_config(v, 1, 0), wgmma_config(v, 1, 1)});
      ASSERT_EQ(r.size(), 2u);
      EXPECT_EQ(r[0].status, Status::ok) << t.id() << ": " << r[0].log;
      EXPECT_EQ(r[1].status, Status::ok) << t.id() << " ping-pong: " << r[1].log;
      if (scale == 2) continue;  // block scales change every 128 k: each slice is promoted with its own
      const auto never = ev.evaluate(t, {wgmma_config(v, 0)});
      ASSERT_EQ(never.size(), 1u);
      EXPECT_EQ(never[0].status, Status::wrong_answer) << t.id() << " never promoted: " << never[0].log;
    }
  EXPECT_EQ(ev.restarts(), 0);
}

}  // namespace
}  // namespace soltune
