// Tensor maps on the CPU: a configuration whose map breaks a rule is illegal with its reason before
// anything compiles, in the candidates every backend builds; the others compile (NVRTC, sm_90) and
// are predicted like any kernel.
#include <gtest/gtest.h>

#include "../support/files.hpp"
#include "../support/tma_variants.hpp"
#include "eval/candidates.hpp"
#include "eval/model_evaluator.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

class TensorMapPrune : public test::TmaProblemCopies {
 protected:
  DeviceInfo h200 = *find_known_gpu("H200");
  Compiler compiler{default_compiler_options()};
};

TEST_F(TensorMapPrune, RowsThatAreNot16ByteAlignedAreIllegalBeforeAnyCompile) {
  const auto p = load_problem(dir_.path(), "matmul");
  const Task odd{&p, &p.variant("tma_a"), DType::bf16, Shape{{{"m", 256}, {"n", 192}, {"k", 1793}, {"trans_b", 0}}}};
  const Space s(*odd.variant, odd.fixed(h200));
  const auto batch = prepare_candidates(odd, h200, "sm_90", s.all_legal());
  ASSERT_EQ(batch.candidates.size(), 2u);  // BM 16 and 32: legal for the space, not for TMA
  EXPECT_TRUE(batch.requests.empty());
  for (const auto& c : batch.candidates) {
    EXPECT_EQ(c.result.status, Status::illegal) << c.result.key;
    EXPECT_EQ(c.result.log.rfind("tensor map 'ta' over 'a': the stride of dimension 1 is 3586 bytes, not a multiple of 16", 0), 0u)
        << c.result.log;
  }

  // At k = 1792 the same configurations compile and are predicted.
  ModelEvaluator ev(h200, compiler, "sm_90");
  for (const DType t : {DType::f32, DType::bf16, DType::f16}) {
    const Task even{&p, &p.variant("tma_a"), t, Shape{{{"m", 256}, {"n", 192}, {"k", 1792}, {"trans_b", 0}}}};
    for (const auto& r : ev.evaluate(even, Space(*even.variant, even.fixed(h200)).all_legal())) {
      EXPECT_EQ(r.status, Status::ok) << even.id() << " " << r.key << ": " << r.log;
      EXPECT_TRUE(r.res.parsed) << r.log;
    }
  }
}

TEST_F(TensorMapPrune, ABoxPastTheLimitIsIllegalAndTheOthersCompile) {
  const auto p = load_problem(dir_.path(), "gelu");
  ModelEvaluator ev(h200, compiler, "sm_90");
  for (const DType t : {DType::f32, DType::bf16}) {
    const Task task{&p, &p.variant("tma"), t, Shape{{{"n", 1000008}}}};
    const Space s(*task.variant, task.fixed(h200));
    const auto r = ev.evaluate(task, {s.parse_key("BOX=128"), s.parse_key("BOX=256"), s.parse_key("BOX=512")});
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].status, Status::ok) << r[0].log;
    EXPECT_EQ(r[1].status, Status::ok) << r[1].log;
    EXPECT_EQ(r[2].status, Status::illegal);
    EXPECT_EQ(r[2].log.rfind("tensor map 'tx' over 'x': box dimension 0 is 512 elements; TMA takes 1 to 256", 0), 0u) << r[2].log;
    // An output whose innermost dimension ends inside a 16-byte unit: a TMA store would write past it.
    const Task odd{&p, &p.variant("tma"), t, Shape{{{"n", 1000003}}}};
    const auto o = ev.evaluate(odd, {Space(*odd.variant, odd.fixed(h200)).parse_key("BOX=256")});
    EXPECT_EQ(o[0].status, Status::illegal);
    EXPECT_EQ(o[0].log.rfind("tensor map 'ty' over 'y': its innermost dimension is", 0), 0u) << o[0].log;
  }
}

TEST_F(TensorMapPrune, DevicesWithoutTensorMapsRuleTheVariantOut) {
  const auto p = load_problem(dir_.path(), "gelu");
  const DeviceInfo a100 = *find_known_gpu("A100");
  const Task task{&p, &p.variant("tma"), DType::f32, Shape{{{"n", 4096}}}};
  const auto batch = prepare_candidates(task, a100, "sm_80", {Space(*task.variant, task.fixed(a100)).parse_key("BOX=128")});
  ASSERT_EQ(batch.candidates.size(), 1u);
  EXPECT_EQ(batch.candidates[0].result.status, Status::illegal);
  EXPECT_EQ(batch.candidates[0].result.log, "tensor maps need compute capability 9.0 or newer, and this device's is 8.0");
  EXPECT_TRUE(batch.requests.empty());
}

}  // namespace
}  // namespace soltune
