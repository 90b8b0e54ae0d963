// GPU tests (label gpu): the contraction-aware check of templates/matmul on real kernels at k = 8192
// and 16384. A plain f32-accumulating GEMM passes in every dtype; the usual wrong GEMMs (bf16
// accumulation, a dropped k-tile, a skipped k tail, an unwritten column, TF32 inputs where f32 is
// declared, B read in the other layout) are each wrong_answer. Kernels that do the work while the
// correctness rounds run and skip part of it in timed repetitions are caught by the projection check
// of the timed loop (problem.yaml's `check:`).
#include <gtest/gtest.h>

#include "core/device.hpp"
#include "core/space.hpp"
#include "eval/cuda_task_state.hpp"
#include "eval/worker_evaluator.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

struct GemmKernel {
  const char* name;
  const char* body;  // a, b, c, m, n, k, row, col, call in scope; f() reads any T as float, put() stores
  bool right;
};
// `call` numbers the kernel's launches; from TIMED on they are timed repetitions (test::first_timed_launch).
const GemmKernel kTimedCheats[] = {
    // Writes nothing once timing starts: the previous repetition's result, for other inputs, stays.
    {"skipper", "if (call >= TIMED) return; float acc = 0; for (long long q = 0; q < k; ++q)"
                " acc = fmaf(f(a[row * k + q]), f(b[q * n + col]), acc); put(c + row * n + col, acc);", false},
    // Sums half of k once timing starts.
    {"halfk", "const long long kk = call >= TIMED ? k / 2 : k; float acc = 0; for (long long q = 0; q < kk; ++q)"
              " acc = fmaf(f(a[row * k + q]), f(b[q * n + col]), acc); put(c + row * n + col, acc);", false},
};

const GemmKernel kKernels[] = {
    {"plain", "float acc = 0; for (long long q = 0; q < k; ++q) acc = fmaf(f(a[row * k + q]), f(b[q * n + col]), acc);"
              " put(c + row * n + col, acc);", true},
    {"bf16acc", "__nv_bfloat16 acc = __float2bfloat16(0.0f); for (long long q = 0; q < k; ++q)"
                " acc = __float2bfloat16(__bfloat162float(acc) + f(a[row * k + q]) * f(b[q * n + col]));"
                " put(c + row * n + col, __bfloat162float(acc));", false},
    {"dropk", "float acc = 0; for (long long q = 0; q < k; ++q) if (q / 32 != 100)"
              " acc = fmaf(f(a[row * k + q]), f(b[q * n + col]), acc); put(c + row * n + col, acc);", false},
    {"tailk", "float acc = 0; for (long long q = 0; q < k / 32 * 32; ++q) acc = fmaf(f(a[row * k + q]), f(b[q * n + col]), acc);"
              " put(c + row * n + col, acc);", false},
    {"skipcol", "float acc = 0; for (long long q = 0; q < k; ++q) acc = fmaf(f(a[row * k + q]), f(b[q * n + col]), acc);"
                " if (col != n - 1) put(c + row * n + col, acc);", false},
    {"tf32", "float acc = 0; for (long long q = 0; q < k; ++q) acc = fmaf(tf32(f(a[row * k + q])), tf32(f(b[q * n + col])), acc);"
             " put(c + row * n + col, acc);", false},
    // B column-major (trans_b 1): right there, wrong for B row-major, as "plain" is the other way round.
    {"plain_nt", "float acc = 0; for (long long q = 0; q < k; ++q) acc = fmaf(f(a[row * k + q]), f(b[col * k + q]), acc);"
                 " put(c + row * n + col, acc);", false},
};

std::filesystem::path gemm_problem() {
  const auto root = test::copy_problem("matmul", "gemmcheck");
  const auto timed_from = std::to_string(test::first_timed_launch(load_problem(root, "matmul")));
  std::vector<GemmKernel> all(std::begin(kKernels), std::end(kKernels));
  all.insert(all.end(), std::begin(kTimedCheats), std::end(kTimedCheats));
  for (const auto& g : all) {
    test::write_file(root / "matmul" / (std::string(g.name) + ".cu"),
                     std::string("#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"
                                 "__device__ inline float f(float v) { return v; }\n"
                                 "__device__ inline float f(__nv_bfloat16 v) { return __bfloat162float(v); }\n"
                                 "__device__ inline float f(__half v) { return __half2float(v); }\n"
                                 "__device__ inline void put(float* p, float v) { *p = v; }\n"
                                 "__device__ inline void put(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }\n"
                                 "__device__ inline void put(__half* p, float v) { *p = __float2half_rn(v); }\n"
                                 "__device__ inline float tf32(float v) { unsigned u; asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(u) : \"f\"(v)); return __uint_as_float(u); }\n"
                                 "#define TIMED " + timed_from + "\n" + test::launch_counter_source() +
                                 "template <typename T, int B>\n__global__ void gemm(const T* a, const T* b, T* c, long long m, long long n, long long k) {\n"
                                 "  const unsigned call = launch_number();\n"
                                 "  const long long col = blockIdx.x * 16LL + threadIdx.x, row = blockIdx.y * 16LL + threadIdx.y;\n"
                                 "  if (row >= m || col >= n) return;\n  ") +
                         g.body + "\n}\n");
    test::write_file(root / "matmul" / (std::string(g.name) + ".yaml"),
                     "kernel: gemm\ntemplate_args: [T, B]\nargs: [a, b, c, m, n, k]\nknobs: {B: [16]}\n"
                     "launch: {grid: [\"cdiv(n, 16)\", \"cdiv(m, 16)\"], block: [16, 16]}\n");
  }
  return root;
}

TEST(MatmulCheckGpu, RightGemmsPassAndWrongOnesFailAtLargeK) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = gemm_problem();
  const auto p = load_problem(root, "matmul");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  for (DType dt : {DType::f32, DType::bf16, DType::f16})
    for (int64_t k : {int64_t{8192}, int64_t{8200}, int64_t{16384}})
      for (const auto& g : kKernels) {
        if (std::string(g.name) == "tf32" && dt != DType::f32) continue;  // TF32 rounding of 16-bit inputs is exact
        if (std::string(g.name) == "tailk" && k % 32 == 0) continue;      // nothing to skip
        if (!g.right && k == 16384) continue;
        for (int64_t tb : {0, 1}) {
          const bool nt = std::string(g.name) == "plain_nt";
          if (tb == 1 && (k != 8192 || (!nt && std::string(g.name) != "plain"))) continue;
          const bool right = nt ? tb == 1 : g.right && tb == 0;
          const Task t{&p, &p.variant(g.name), dt, Shape{{{"m", 256}, {"n", 192}, {"k", k}, {"trans_b", tb}}}};
          ev.baseline(t);
          const auto r = ev.evaluate(t, {Config{{16}}});
          ASSERT_EQ(r.size(), 1u);
          if (right)
            EXPECT_EQ(r[0].status, Status::ok) << t.id() << ": " << r[0].log;
          else
            EXPECT_EQ(r[0].status, Status::wrong_answer) << t.id() << ": " << r[0].log;
        }
      }
  EXPECT_EQ(ev.restarts(), 0);
}

TEST(MatmulCheckGpu, WorkSkippedInTimedRepetitionsIsCaughtByTheProjection) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = gemm_problem();
  const auto p = load_problem(root, "matmul");
  const Compiler compiler(default_compiler_options());
  for (DType dt : {DType::f32, DType::bf16})
    for (const auto& g : kTimedCheats) {
      // A worker per kernel: the call counter starts at zero.
      WorkerEvaluator ev(compiler, test::worker_options(root));
      const Task t{&p, &p.variant(g.name), dt, Shape{{{"m", 256}, {"n", 192}, {"k", 8192}, {"trans_b", 0}}}};
      ev.baseline(t);
      const auto r = ev.evaluate(t, {Config{{16}}});
      ASSERT_EQ(r.size(), 1u);
      EXPECT_EQ(r[0].status, Status::wrong_answer) << t.id() << ": " << r[0].log;
      EXPECT_NE(r[0].log.find("inside the timed loop"), std::string::npos) << t.id() << ": " << r[0].log;
      EXPECT_NE(r[0].log.find("checked by projection"), std::string::npos) << t.id() << ": " << r[0].log;
    }
}

// Where a compute-bound shape's own traffic evicts L2, timed repetitions rotate input sets instead
// of flushing (rotation_sets): a right GEMM passes and says so, and work skipped while timed, which
// leaves the previous repetition's result (for another set's inputs) or half of it, is still caught.
TEST(MatmulCheckGpu, RotatedInputSetsStillCatchWorkSkippedWhileTimed) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = gemm_problem();
  const auto p = load_problem(root, "matmul");
  const Compiler compiler(default_compiler_options());
  for (const char* name : {"plain", "skipper", "halfk"}) {
    WorkerEvaluator ev(compiler, test::worker_options(root));  // the call counter starts at zero
    const Task t{&p, &p.variant(name), DType::bf16, Shape{{{"m", 1024}, {"n", 8192}, {"k", 4096}, {"trans_b", 0}}}};
    ASSERT_GT(rotation_sets(t, ev.device(), {}), 1) << "88 MiB a repetition should rotate on an H100 or H200";
    ev.baseline(t);
    const auto r = ev.evaluate(t, {Config{{16}}});
    ASSERT_EQ(r.size(), 1u);
    std::printf("%s: %s\n", t.id().c_str(), r[0].log.c_str());
    std::fflush(stdout);
    if (std::string(name) == "plain") {
      EXPECT_EQ(r[0].status, Status::ok) << r[0].log;
      EXPECT_NE(r[0].log.find("input sets rotated"), std::string::npos) << r[0].log;
    } else {
      EXPECT_EQ(r[0].status, Status::wrong_answer) << t.id() << ": " << r[0].log;
      EXPECT_NE(r[0].log.find("inside the timed loop"), std::string::npos) << t.id() << ": " << r[0].log;
    }
  }
}

// The variants at a compute-bound shape share a group's correctness rounds: the first candidate
// runs the reference in every round, the next (another variant) runs none, and a wrong one is still
// caught against the kept results.
TEST(MatmulCheckGpu, VariantsAtAShapeShareTheirRoundsReference) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = gemm_problem();
  const auto p = load_problem(root, "matmul");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  const Shape shape{{{"m", 1024}, {"n", 1024}, {"k", 4096}, {"trans_b", 0}}};
  // tf32 is right for bf16: rounding 16-bit inputs to TF32 is exact.
  const Task plain{&p, &p.variant("plain"), DType::bf16, shape}, tf32{&p, &p.variant("tf32"), DType::bf16, shape},
      dropk{&p, &p.variant("dropk"), DType::bf16, shape};
  for (const auto* t : {&plain, &tf32, &dropk}) ev.baseline(*t);
  const auto first = ev.evaluate(plain, {Config{{16}}});
  const auto second = ev.evaluate(tf32, {Config{{16}}});
  const auto wrong = ev.evaluate(dropk, {Config{{16}}});
  ASSERT_EQ(first[0].status, Status::ok) << first[0].log;
  ASSERT_EQ(second[0].status, Status::ok) << second[0].log;
  EXPECT_GT(first[0].phases.reference, 0);
  EXPECT_EQ(second[0].phases.reference, 0) << "the kept rounds served";
  EXPECT_GT(second[0].phases.rounds, 0);
  EXPECT_EQ(wrong[0].status, Status::wrong_answer) << wrong[0].log;
  EXPECT_EQ(ev.restarts(), 0);
}

// The shipped kernels for the shapes the aligned ones cannot serve pass every check at shapes with
// tails everywhere: skinny (a decode step's few rows, m not a multiple of 16) and wgmma_pad (rows
// not 16-byte aligned, n odd: C stored element by element).
TEST(MatmulCheckGpu, SkinnyAndPaddedKernelsPassAtOddShapes) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = test::copy_problem("matmul", "oddgemm");
  const auto p = load_problem(root, "matmul");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  struct Case {
    const char* variant;
    const char* key;
    DType dt;
    Shape shape;
  };
  auto mnk = [](int64_t m, int64_t n, int64_t k, int64_t tb) {
    return Shape{{{"m", m}, {"n", n}, {"k", k}, {"trans_b", tb}}};
  };
  const std::vector<Case> cases = {
      {"skinny", "MT=1,J=2,WARPS=4,U=4,PREFETCH=0", DType::bf16, mnk(12, 1000, 1000, 1)},
      {"skinny", "MT=1,J=2,WARPS=4,U=4,PREFETCH=1", DType::bf16, mnk(1, 1000, 1000, 1)},
      {"skinny", "MT=4,J=1,WARPS=8,U=2,PREFETCH=1", DType::f16, mnk(40, 1000, 4096, 1)},
      {"skinny", "MT=2,J=4,WARPS=2,U=8,PREFETCH=0", DType::bf16, mnk(17, 4104, 8192, 1)},
      {"wgmma_pad", "BM=128,BN=128,STAGES=4,CM=1,GROUP=8,SPARE=0", DType::bf16, mnk(257, 263, 1001, 0)},
      {"wgmma_pad", "BM=128,BN=256,STAGES=3,CM=1,GROUP=4,SPARE=4", DType::f16, mnk(1793, 1793, 1793, 1)},
      {"wgmma_pad", "BM=256,BN=128,STAGES=4,CM=2,GROUP=8,SPARE=0", DType::bf16, mnk(300, 129, 1000, 0)},
  };
  for (const auto& c : cases) {
    const auto& v = p.variant(c.variant);
    const Task t{&p, &v, c.dt, c.shape};
    const Config cfg = Space(v, Bindings{}).parse_key(c.key);
    ASSERT_EQ(Space(v, t.fixed(*find_known_gpu("H200"))).why_illegal(cfg), "") << t.id() << " " << c.key;
    ev.baseline(t);
    const auto r = ev.evaluate(t, {cfg});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, Status::ok) << t.id() << " " << c.key << ": " << r[0].log;
  }
  EXPECT_EQ(ev.restarts(), 0);
}

}  // namespace
}  // namespace soltune
