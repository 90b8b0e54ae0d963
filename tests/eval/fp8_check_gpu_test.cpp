// GPU tests (label gpu): the checks of templates/matmul_fp8 know FP8 accumulation. Hopper's FP8
// tensor cores add into an accumulator of about 14 significant bits; wgmma_ws promoting every 128 k
// into f32 passes at k = 16384 in every scale mode, its consumers taking turns or not, and the same
// kernel keeping the tensor cores' sum across all of k is wrong_answer there, in both 8-bit types.
// Timed repetitions are checked by the scaled projection, which catches work skipped while timed.
#include <gtest/gtest.h>

#include <map>
#include <string>

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

// Naive scaled GEMMs that do the work in the correctness rounds and cheat once timed (launches from
// TIMED on): the timed repetitions' scaled projection catches each, in every scale mode.
struct Fp8Cheat {
  const char* name;
  const char* body;  // a, b, sa, sb, c, m, n, k, scale, row, col, call, sa_at(q), sb_at(q) in scope
};
const Fp8Cheat kFp8Cheats[] = {
    // Writes nothing once timed: the previous repetition's result, for other inputs, stays.
    {"skipper", "if (call >= TIMED) return; float acc = 0; for (long long q = 0; q < k; ++q)"
                " acc += float(a[row * k + q]) * sa_at(q) * (float(b[col * k + q]) * sb_at(q)); c[row * n + col] = __float2bfloat16_rn(acc);"},
    // Sums half of k once timed.
    {"halfk", "const long long kk = call >= TIMED ? k / 2 : k; float acc = 0; for (long long q = 0; q < kk; ++q)"
              " acc += float(a[row * k + q]) * sa_at(q) * (float(b[col * k + q]) * sb_at(q)); c[row * n + col] = __float2bfloat16_rn(acc);"},
    // Leaves B's scales out once timed.
    {"noscale", "float acc = 0; for (long long q = 0; q < k; ++q)"
                " acc += float(a[row * k + q]) * sa_at(q) * (float(b[col * k + q]) * (call >= TIMED ? 1.0f : sb_at(q)));"
                " c[row * n + col] = __float2bfloat16_rn(acc);"},
};

TEST(Fp8CheckGpu, WorkSkippedWhileTimedIsCaughtByTheScaledProjection) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = test::copy_problem("matmul_fp8", "fp8cheat");
  const auto timed_from = std::to_string(test::first_timed_launch(load_problem(root, "matmul_fp8")));
  for (const auto& g : kFp8Cheats) {
    test::write_file(root / "matmul_fp8" / (std::string(g.name) + ".cu"),
                     "#include <cuda_bf16.h>\n#include <cuda_fp8.h>\n#define TIMED " + timed_from + "\n" +
                         test::launch_counter_source() +
                         "template <typename T, int B>\n__global__ void gemm(const T* a, const T* b, const float* sa, const float* sb,"
                         " __nv_bfloat16* c, long long m, long long n, long long k, long long scale) {\n"
                         "  const unsigned call = launch_number();\n"
                         "  const long long col = blockIdx.x * 16LL + threadIdx.x, row = blockIdx.y * 16LL + threadIdx.y;\n"
                         "  if (row >= m || col >= n) return;\n"
                         "  auto sa_at = [&](long long q) { return scale == 0 ? sa[0] : scale == 1 ? sa[row] : sa[(q / 128) * m + row]; };\n"
                         "  auto sb_at = [&](long long q) { return scale == 0 ? sb[0] : scale == 1 ? sb[col] : sb[(col / 128) * ((k + 127) / 128) + q / 128]; };\n  " +
                         g.body + "\n}\n");
    test::write_file(root / "matmul_fp8" / (std::string(g.name) + ".yaml"),
                     "kernel: gemm\ntemplate_args: [T, B]\nargs: [a, b, sa, sb, c, m, n, k, scale]\nknobs: {B: [16]}\n"
                     "launch: {grid: [\"cdiv(n, 16)\", \"cdiv(m, 16)\"], block: [16, 16]}\n");
  }
  const auto p = load_problem(root, "matmul_fp8");
  const Compiler compiler(default_compiler_options());
  for (DType dt : {DType::e4m3, DType::e5m2})
    for (int64_t scale : {0, 1, 2})
      for (const auto& g : kFp8Cheats) {
        // One scale per tensor, drawn from [0.25, 4], may be too near 1 for its absence to show.
        if (scale == 0 && std::string(g.name) == "noscale") continue;
        WorkerEvaluator ev(compiler, test::worker_options(root));  // the call counter starts at zero
        const Task t{&p, &p.variant(g.name), dt, Shape{{{"m", 256}, {"n", 384}, {"k", 4096}, {"scale", scale}}}};
        ev.baseline(t);
        const auto r = ev.evaluate(t, {Config{{16}}});
        ASSERT_EQ(r.size(), 1u);
        EXPECT_EQ(r[0].status, Status::wrong_answer) << t.id() << " " << g.name << ": " << r[0].log;
        EXPECT_NE(r[0].log.find("inside the timed loop"), std::string::npos) << t.id() << " " << g.name << ": " << r[0].log;
        EXPECT_NE(r[0].log.find("checked by projection"), std::string::npos) << t.id() << " " << g.name << ": " << r[0].log;
      }
}

}  // namespace
}  // namespace soltune
