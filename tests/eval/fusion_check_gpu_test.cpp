// GPU tests (label gpu): the fused residual add + RMSNorm problems (templates/add_rmsnorm and
// templates/add_rmsnorm_fp8) pass with every variant at widths that fill no vector or block evenly,
// and their checks catch what a fusion gets wrong: x + x where h = x + r belongs, h left unwritten,
// a block's scale stored where another block's belongs, and q quantized without the scale's 448.
// The GEMM with its epilogue (templates/matmul_epilogue) passes at every activation and at tails
// of its tiles, the unfused pair too, and a kernel that drops the activation, reads R's first row
// for every row, drops the staged R or loads the staged bias 8 columns off fails, and work skipped
// in timed repetitions is caught on the rows the reference recomputes; SwiGLU's gated projection
// (templates/swiglu) passes at tails of its tiles, fused or not, and a kernel that takes the up's
// rows 8 rows off, or gates the up instead of the gate, fails; attention's scores softmax
// (templates/masked_softmax) passes masked or not, and its mistakes fail.
#include <gtest/gtest.h>

#include "core/device.hpp"
#include "core/space.hpp"
#include "core/task.hpp"
#include "eval/worker_evaluator.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

struct Mistake {
  std::string variant, name, from, to;
};

// Writes each mistake as a copy of its variant (test::add_mistake).
::testing::AssertionResult write_mistakes(const std::filesystem::path& dir, const std::vector<Mistake>& mistakes) {
  for (const auto& m : mistakes)
    if (auto r = test::add_mistake(dir, m.variant, m.name, m.from, m.to); !r) return r;
  return ::testing::AssertionSuccess();
}

struct Outcome {
  Status status;
  std::string log;
};

// Each case's configuration is legal on an H100 (the tested card's limits): checked on the host,
// without a GPU, so that an illegal test case fails here and not only on a device.
using Case = std::tuple<std::string, std::string, DType, Shape>;
void expect_legal(const ProblemSpec& p, const std::vector<Case>& cases) {
  const DeviceInfo h100 = *find_known_gpu("H100 80GB");
  for (const auto& [variant, key, dt, sh] : cases) {
    const Task t{&p, &p.variant(variant), dt, sh};
    const Space space(*t.variant, t.fixed(h100));
    EXPECT_EQ(space.why_illegal(space.parse_key(key)), "") << t.id() << " " << key;
  }
}

// One configuration of a variant at a shape, after the task's baseline, its status and log.
Outcome run(WorkerEvaluator& ev, const ProblemSpec& p, const std::string& variant, DType dt, const Shape& s, const std::string& key) {
  const Task t{&p, &p.variant(variant), dt, s};
  ev.baseline(t);
  const auto r = ev.evaluate(t, {Space(p.variant(variant), Bindings{}).parse_key(key)});
  if (r.size() != 1) return {Status::compile_error, t.id() + ": " + std::to_string(r.size()) + " results for one configuration"};
  return {r[0].status, t.id() + " " + key + ": " + r[0].log};
}

TEST(FusionCheckGpu, AddRmsnormPassesAndItsMistakesAreCaught) {
  const auto root = test::copy_problem("add_rmsnorm", "fuse");
  const auto dir = root / "add_rmsnorm";
  const std::vector<Mistake> mistakes = {
      {"rowreg", "xplusx", "residual_add<T>(xv, rv, h, at, cols, active, col, v)", "residual_add<T>(xv, xv, h, at, cols, active, col, v)"},
      {"looped", "noh", "store<0>(reinterpret_cast<Raw*>(h + at + c), hv);", ""}};
  ASSERT_TRUE(write_mistakes(dir, mistakes));
  SOLTUNE_REQUIRE_GPU();
  const auto p = load_problem(root, "add_rmsnorm");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  auto shape = [](int64_t rows, int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; };
  for (const DType dt : {DType::bf16, DType::f32})
    for (const auto& [variant, key, sh] : {std::tuple{"rowreg", "TPR=128,RPB=2,VEC=4,EPT=2,BPS=2,HINT=0", shape(37, 1000)},
                                           std::tuple{"rowreg", "TPR=512,RPB=1,VEC=4,EPT=2,BPS=1,HINT=2", shape(5, 4096)},
                                           std::tuple{"looped", "TPR=256,VEC=1,UNROLL=2", shape(37, 1001)}}) {
      const auto o = run(ev, p, variant, dt, sh, key);
      EXPECT_EQ(o.status, Status::ok) << o.log;
    }
  for (const auto& [variant, key, dt, sh] : {std::tuple{"rowreg_xplusx", "TPR=128,RPB=2,VEC=4,EPT=2,BPS=2,HINT=0", DType::bf16, shape(37, 1000)},
                                             std::tuple{"looped_noh", "TPR=256,VEC=1,UNROLL=2", DType::f32, shape(37, 1001)}}) {
    const auto o = run(ev, p, variant, dt, sh, key);
    EXPECT_EQ(o.status, Status::wrong_answer) << o.log;
  }
  EXPECT_EQ(ev.restarts(), 0);
}

TEST(FusionCheckGpu, AddRmsnormFp8PassesAndItsScalesAreChecked) {
  const auto root = test::copy_problem("add_rmsnorm_fp8", "fusefp8");
  const auto dir = root / "add_rmsnorm_fp8";
  const std::vector<Mistake> mistakes = {
      {"rowreg", "scalerow", "s[(col(e) / 128) * rows + row] = amax / 448.f;", "s[row * ((cols + 127) / 128) + col(e) / 128] = amax / 448.f;"},
      {"looped", "no448", "factor = 448.f / amax;", "factor = 1.f / amax;"}};
  ASSERT_TRUE(write_mistakes(dir, mistakes));
  SOLTUNE_REQUIRE_GPU();
  const auto p = load_problem(root, "add_rmsnorm_fp8");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  auto shape = [](int64_t rows, int64_t cols, int64_t scale) { return Shape{{{"rows", rows}, {"cols", cols}, {"scale", scale}}}; };
  for (const DType dt : {DType::bf16, DType::f32})
    for (const int64_t scale : {1, 2})
      for (const auto& [variant, key, sh] : {std::tuple{"rowreg", "TPR=128,RPB=2,VEC=4,EPT=2,BPS=2", shape(37, 1000, scale)},
                                             std::tuple{"rowreg", "TPR=256,RPB=1,VEC=4,EPT=8,BPS=1", shape(9, 7168, scale)},
                                             std::tuple{"looped", "TPR=256,UNROLL=2", shape(37, 1001, scale)}}) {
        const auto o = run(ev, p, variant, dt, sh, key);
        EXPECT_EQ(o.status, Status::ok) << o.log;
      }
  for (const auto& [variant, key, dt] : {std::tuple{"rowreg_scalerow", "TPR=256,RPB=1,VEC=4,EPT=8,BPS=1", DType::bf16},
                                         std::tuple{"looped_no448", "TPR=256,UNROLL=2", DType::f32}}) {
    const auto o = run(ev, p, variant, dt, shape(9, 7168, 2), key);
    EXPECT_EQ(o.status, Status::wrong_answer) << o.log;
  }
  EXPECT_EQ(ev.restarts(), 0);
}

TEST(FusionCheckGpu, MatmulEpiloguePassesAtEveryActivationAndItsMistakesAreCaught) {
  const auto root = test::copy_problem("matmul_epilogue", "epi", {"matmul"});
  const auto dir = root / "matmul_epilogue";
  const std::vector<Mistake> mistakes = {
      {"wgmma_ws", "noact", "gemm_epi::BiasActResidual<T, ACT>{bias, r, n, alpha, beta}", "gemm_epi::BiasActResidual<T, 0>{bias, r, n, alpha, beta}"},
      {"tiled", "row0", "gemm_epi::BiasActResidual<T, ACT>{bias, r, n, alpha, beta}", "gemm_epi::BiasActResidual<T, ACT>{bias, r, 0, alpha, beta}"},
      // EPI 1, the sources staged by TMA: R dropped, and the bias's columns loaded 8 off.
      {"wgmma_ws", "nores", "BiasActResidualStaged<T, ACT>{&tr, &tbias, alpha, beta}", "BiasActResidualStaged<T, ACT>{&tr, &tbias, alpha, 0.0f}"},
      {"wgmma_ws", "bias8", "const int cb[1] = {col0};", "const int cb[1] = {col0 + 8};"}};
  ASSERT_TRUE(write_mistakes(dir, mistakes));
  const auto p = load_problem(root, "matmul_epilogue");
  auto shape = [](int64_t m, int64_t n, int64_t k, int64_t trans_b, int64_t act) {
    return Shape{{{"m", m}, {"n", n}, {"k", k}, {"trans_b", trans_b}, {"act", act}}};
  };
  const std::string ws0 = "BM=128,BN=128,STAGES=4,CM=1,GROUP=8,EPI=0,SPARE=0", ws1 = "BM=256,BN=128,STAGES=3,CM=2,GROUP=8,EPI=1,SPARE=0";
  const std::string ws2 = "BM=128,BN=192,STAGES=4,CM=1,GROUP=8,EPI=1,SPARE=8";
  const std::string tiled = "BM=64,BN=64,BK=8,TM=4,TN=4,VEC=1,PAD=0,STAGES=1,ASYNC=0,A_T=0,SPLIT=0,UNROLL=0";
  // Every activation in bf16 (tiles of m, n and k each cut short; NT and NN); f16, C by TMA from
  // 2-block clusters, and odd widths, at one each.
  std::vector<Case> cases;
  for (int64_t act = 0; act <= 4; ++act) {
    cases.emplace_back("wgmma_ws", ws0, DType::bf16, shape(200, 328, 136, 1, act));
    cases.emplace_back("tiled", tiled, DType::bf16, shape(37, 101, 77, act % 2, act));
  }
  cases.emplace_back("wgmma_ws", ws1, DType::f16, shape(300, 136, 200, 0, 3));
  // EPI 1 with R and the bias staged: 288 tiles, so that blocks take several and the staging's
  // barrier turns over; tails of m and n.
  cases.emplace_back("wgmma_ws", ws2, DType::bf16, shape(3000, 1496, 136, 1, 2));
  cases.emplace_back("tiled", tiled, DType::f16, shape(37, 101, 77, 1, 4));
  // The unfused rival: the GEMM's C in the input type, then the epilogue's own pass over it.
  cases.emplace_back("unfused", ws0, DType::bf16, shape(200, 328, 136, 1, 4));
  cases.emplace_back("unfused", ws0, DType::f16, shape(200, 328, 136, 1, 2));
  // Rows not 16-byte aligned: the operands padded into scratch, C stored element by element.
  cases.emplace_back("wgmma_pad", "BM=128,BN=128,STAGES=4,CM=1,GROUP=8,SPARE=0", DType::bf16, shape(200, 201, 133, 1, 2));
  expect_legal(p, cases);
  SOLTUNE_REQUIRE_GPU();
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  for (const auto& [variant, key, dt, sh] : cases) {
    const auto o = run(ev, p, variant, dt, sh, key);
    EXPECT_EQ(o.status, Status::ok) << o.log;
  }
  for (const auto& [variant, key] : {std::pair{"wgmma_ws_noact", ws0}, std::pair{"tiled_row0", tiled},
                                     std::pair{"wgmma_ws_nores", ws2}, std::pair{"wgmma_ws_bias8", ws2}}) {
    const auto o = run(ev, p, variant, DType::bf16, shape(200, 328, 136, 1, 2), key);
    EXPECT_EQ(o.status, Status::wrong_answer) << o.log;
  }
  EXPECT_EQ(ev.restarts(), 0);
}

// The fused GEMM's timed repetitions are checked on sampled rows by the reference (reference_rows):
// a naive kernel passes, and the same kernel leaving a quarter of C's rows as the previous
// repetition left them (for other inputs) once timing starts is caught.
TEST(FusionCheckGpu, MatmulEpilogueWorkSkippedWhileTimedIsCaughtOnSampledRows) {
  const auto root = test::copy_problem("matmul_epilogue", "epirows", {"matmul"});
  const auto dir = root / "matmul_epilogue";
  const auto timed_from = test::first_timed_launch(load_problem(root, "matmul_epilogue"));
  test::write_file(dir / "naive.cu",
                   "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include \"../common/gemm_epilogue.cuh\"\n" +
                   test::launch_counter_source() +
                   "template <typename T, int ACT, int SKIP>\n"
                   "__global__ void epi_naive(const T* a, const T* b, const T* bias, const T* r, T* c, float alpha, float beta,\n"
                   "                          long long m, long long n, long long k, long long trans_b) {\n"
                   "  const unsigned call = launch_number();\n"
                   "  const long long col = blockIdx.x * 16LL + threadIdx.x, row = blockIdx.y * 16LL + threadIdx.y;\n"
                   "  if (row >= m || col >= n) return;\n"
                   "  if (SKIP && call >= " + std::to_string(timed_from) + " && blockIdx.y % 4 == 1) return;\n"
                   "  float acc = 0;\n"
                   "  for (long long q = 0; q < k; ++q)\n"
                   "    acc = fmaf(gemm_epi::to_float(a[row * k + q]), gemm_epi::to_float(trans_b ? b[col * k + q] : b[q * n + col]), acc);\n"
                   "  c[row * n + col] = static_cast<T>(gemm_epi::bias_act_residual<ACT>(\n"
                   "      acc, gemm_epi::to_float(bias[col]), gemm_epi::to_float(r[row * n + col]), alpha, beta));\n"
                   "}\n");
  test::write_file(dir / "naive.yaml",
                   "kernel: epi_naive\ntemplate_args: [T, act, SKIP]\nknobs: {SKIP: [0, 1]}\n"
                   "args: [a, b, bias, r, c, alpha, beta, m, n, k, trans_b]\n"
                   "launch: {grid: [\"cdiv(n, 16)\", \"cdiv(m, 16)\"], block: [16, 16]}\n");
  SOLTUNE_REQUIRE_GPU();
  const auto p = load_problem(root, "matmul_epilogue");
  const Compiler compiler(default_compiler_options());
  const Shape shape{{{"m", 512}, {"n", 256}, {"k", 256}, {"trans_b", 1}, {"act", 2}}};
  for (const int skip : {0, 1}) {
    WorkerEvaluator ev(compiler, test::worker_options(root));  // a worker per kernel: its call counter starts at zero
    const auto o = run(ev, p, "naive", DType::bf16, shape, "SKIP=" + std::to_string(skip));
    EXPECT_NE(o.log.find("sampled rows"), std::string::npos) << o.log;
    if (skip) {
      EXPECT_EQ(o.status, Status::wrong_answer) << o.log;
      EXPECT_NE(o.log.find("inside the timed loop"), std::string::npos) << o.log;
    } else {
      EXPECT_EQ(o.status, Status::ok) << o.log;
    }
  }
}

TEST(FusionCheckGpu, SwigluPassesAtTailsAndItsMistakesAreCaught) {
  const auto root = test::copy_problem("swiglu", "swiglu", {"matmul"});
  const auto dir = root / "swiglu";
  const std::vector<Mistake> mistakes = {{"wgmma_ws", "upoff", "(tx, tw, th, h, m, n, k,", "(tx, tw, th, h, m, n + 8, k,"},
                                         {"simt", "swapped", "SiluGate{}.pair(gate, up)", "SiluGate{}.pair(up, gate)"}};
  ASSERT_TRUE(write_mistakes(dir, mistakes));
  const auto p = load_problem(root, "swiglu");
  auto shape = [](int64_t m, int64_t n, int64_t k) { return Shape{{{"m", m}, {"n", n}, {"k", k}}}; };
  const std::string ws0 = "BM=128,BN=256,STAGES=4,GROUP=8,EPI=0,SPARE=0", ws1 = "BM=256,BN=128,STAGES=3,GROUP=8,EPI=1,SPARE=0";
  const std::vector<Case> cases = {{"wgmma_ws", ws0, DType::bf16, shape(200, 136, 136)},
                                   {"wgmma_ws", ws1, DType::f16, shape(300, 200, 264)},
                                   {"simt", "TILE=16", DType::bf16, shape(37, 53, 77)},
                                   // the unfused rival: gu in the input type, then SiLU-and-mul over it
                                   {"unfused", "BM=128,BN=128,STAGES=4,CM=1,GROUP=8,EPI=0,SPARE=0", DType::bf16, shape(200, 136, 136)},
                                   {"unfused", "BM=256,BN=128,STAGES=3,CM=2,GROUP=8,EPI=1,SPARE=0", DType::f16, shape(300, 200, 264)}};
  expect_legal(p, cases);
  SOLTUNE_REQUIRE_GPU();
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  for (const auto& [variant, key, dt, sh] : cases) {
    const auto o = run(ev, p, variant, dt, sh, key);
    EXPECT_EQ(o.status, Status::ok) << o.log;
  }
  for (const auto& [variant, key] : {std::pair{"wgmma_ws_upoff", ws0}, std::pair{"simt_swapped", std::string("TILE=16")}}) {
    const auto o = run(ev, p, variant, DType::bf16, shape(200, 136, 136), key);
    EXPECT_EQ(o.status, Status::wrong_answer) << o.log;
  }
  EXPECT_EQ(ev.restarts(), 0);
}

// Attention's scores softmax, scaled and causally masked (templates/masked_softmax): both variants
// pass with and without the mask at rows that fill no vector or block evenly, and a kernel that
// drops the mask, keeps one key too few or drops the scale fails.
TEST(FusionCheckGpu, MaskedSoftmaxPassesAndItsMistakesAreCaught) {
  const auto root = test::copy_problem("masked_softmax", "msm");
  const auto dir = root / "masked_softmax";
  const std::vector<Mistake> mistakes = {
      {"rowreg", "nomask", "c0 + k <= last ? v[e][k] * scale : neg_inf()", "v[e][k] * scale"},
      {"looped", "short", "f[k] = c0 + k <= last ?", "f[k] = c0 + k < last ?"},
      {"looped", "noscale", "f[k] = c0 + k <= last ? f[k] * scale", "f[k] = c0 + k <= last ? f[k]"}};
  ASSERT_TRUE(write_mistakes(dir, mistakes));
  const auto p = load_problem(root, "masked_softmax");
  auto shape = [](int64_t heads, int64_t s_q, int64_t s_k, int64_t causal) {
    return Shape{{{"heads", heads}, {"s_q", s_q}, {"s_k", s_k}, {"d", 64}, {"causal", causal}}};
  };
  const std::string reg = "BLOCK=256,TPR=32,VEC=4,EPT=4,FAST_EXP=1", loop = "BLOCK=256,VEC=4,UNROLL=4,FAST_EXP=1";
  std::vector<Case> cases;
  for (const DType dt : {DType::bf16, DType::f32})
    for (const int64_t causal : {0, 1}) {
      cases.emplace_back("rowreg", reg, dt, shape(3, 37, 500, causal));
      cases.emplace_back("looped", loop, dt, shape(2, 5, 3000, causal));
    }
  cases.emplace_back("looped", "BLOCK=128,VEC=1,UNROLL=2,FAST_EXP=0", DType::bf16, shape(2, 7, 1001, 1));
  cases.emplace_back("rowreg", "BLOCK=128,TPR=128,VEC=1,EPT=8,FAST_EXP=0", DType::f32, shape(1, 9, 1001, 1));
  expect_legal(p, cases);
  SOLTUNE_REQUIRE_GPU();
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  for (const auto& [variant, key, dt, sh] : cases) {
    const auto o = run(ev, p, variant, dt, sh, key);
    EXPECT_EQ(o.status, Status::ok) << o.log;
  }
  for (const auto& [variant, key] : {std::pair{"rowreg_nomask", reg}, std::pair{"looped_short", loop}, std::pair{"looped_noscale", loop}}) {
    const auto o = run(ev, p, variant, DType::bf16, shape(3, 37, variant[0] == 'r' ? 500 : 3000, 1), key);
    EXPECT_EQ(o.status, Status::wrong_answer) << o.log;
  }
  EXPECT_EQ(ev.restarts(), 0);
}

}  // namespace
}  // namespace soltune
