// GPU tests (label gpu) of a buffer read and written in place (role inout): GELU applied to x
// itself. A kernel that does the work passes, is timed and re-timed on inputs drawn whole before
// every repetition; kernels that skip the work, do it only while the correctness rounds last,
// replay a kept result or write past the buffer are caught. Given data (a .npy file) is put back
// before every repetition too.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "eval/worker_evaluator.hpp"
#include "../support/call_index.hpp"
#include "../support/npy.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

void replace(std::string& text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  ASSERT_NE(pos, std::string::npos) << from;
  text.replace(pos, from.size(), to);
}

struct InplaceKernel {
  const char* name;
  const char* body;  // x, n and i (the element index) are in scope
  Status expected;
  const char* why;  // a phrase the log must contain
};

const InplaceKernel kKernels[] = {
    {"inplace", "if (i < n) x[i] = T(gelu(float(x[i])));", Status::ok, "timed repetitions checked"},
    // Leaves the buffer as drawn: the output it must hold is gelu of that.
    {"untouched", "", Status::wrong_answer, "round 1"},
    // Does the work on its first seven calls (the six correctness rounds and a warm-up), none after.
    {"flaky", SOLTUNE_TEST_CALL_INDEX
              "if (k < 7 && i < n) x[i] = T(gelu(float(x[i])));",
     Status::wrong_answer, "inside the timed loop"},
    // Keeps its results while the rounds last, then writes them back: the buffer is drawn afresh
    // before every repetition, so the kept result is wrong.
    {"replayer", SOLTUNE_TEST_CALL_INDEX
                 "if (i < n) { if (k < 9) { x[i] = T(gelu(float(x[i]))); stash[i] = float(x[i]); } else { x[i] = T(stash[i]); } }",
     Status::wrong_answer, "inside the timed loop"},
    // Right in place, and 64 elements past the end of x: the guard zone after the buffer sees it.
    {"overrun", "if (i < n) x[i] = T(gelu(float(x[i]))); if (i < 64) x[n + i] = T(0);", Status::wrong_answer,
     "guard bytes written out of bounds"},
};

// gelu with x overwritten by its result: no y; the baseline's last step writes x (after every step
// that reads it); the reference reads x and writes x.out (its default arguments: x, x.out, n).
std::filesystem::path inplace_problem(const std::string& tag) {
  const auto root = test::copy_problem("gelu", tag);
  const auto dir = root / "gelu";
  test::remove_variant(dir, "vectorized");
  std::filesystem::remove(dir / "vectorized.cu");
  std::ifstream in(dir / "problem.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  replace(text, "shape: [n], role: in, init:", "shape: [n], role: inout, init:");
  replace(text, "  - {name: y, kind: buffer, dtype: T, shape: [n], role: out}\n", "");
  replace(text, "args: [t1, t0, y, n]", "args: [t1, t0, x, n]");
  test::write_file(dir / "problem.yaml", text);
  for (const auto& k : kKernels) {
    test::write_file(dir / (std::string(k.name) + ".cu"),
                     std::string("#include <cuda_bf16.h>\n__device__ unsigned calls;\n__device__ float stash[1 << 20];\n"
                                 "__device__ inline float gelu(float v) { return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }\n"
                                 "template <typename T, int BLOCK>\n__global__ void gelu_inplace(T* x, long long n) {\n"
                                 "  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;\n  ") +
                         k.body + "\n}\n");
    test::write_file(dir / (std::string(k.name) + ".yaml"),
                     "kernel: gelu_inplace\ntemplate_args: [T, BLOCK]\nknobs: {BLOCK: [128, 256]}\n"
                     "launch: {grid: \"cdiv(n, BLOCK)\", block: BLOCK}\n");
  }
  return root;
}

TEST(InplaceSuite, TheProblemLoadsAndEveryKernelCompilesForSm90) {
  const auto root = inplace_problem("inplace-cpu");
  const auto p = load_problem(root, "gelu");
  EXPECT_EQ(p.args[0].role, Role::inout);
  EXPECT_EQ(p.reference.args, (std::vector<std::string>{"x", "x.out", "n"}));
  const Compiler c(default_compiler_options());
  for (const auto& k : kKernels) {
    const auto& v = p.variant(k.name);
    const auto r = c.compile(CompileRequest{v.source, k.name, {name_expression(v.launch, DType::f32, {{"BLOCK", 256}})}, "sm_90", {}});
    EXPECT_TRUE(r.ok) << k.name << ":\n" << r.log;
  }
  std::filesystem::remove_all(root);
}

class InplaceGpu : public ::testing::Test {
 protected:
  void SetUp() override { SOLTUNE_REQUIRE_GPU(); }
  std::unique_ptr<WorkerEvaluator> make(const std::filesystem::path& templates) {
    auto o = test::worker_options(templates, 5, 5, 20, 20);
    o.eval.seed = 11;
    return std::make_unique<WorkerEvaluator>(compiler_, o);
  }
  Compiler compiler_{default_compiler_options()};
};

TEST_F(InplaceGpu, KernelsAreCheckedOnWhatTheyLeaveInTheBuffer) {
  const auto root = inplace_problem("inplace");
  const auto p = load_problem(root, "gelu");
  auto ev = make(root);
  for (const DType dt : {DType::f32, DType::bf16})
    for (const auto& k : kKernels) {
      const Task t{&p, &p.variant(k.name), dt, Shape{{{"n", 1000003}}}};
      // The baseline runs in place too, checked against the reference before it is timed.
      const auto b = ev->baseline(t);
      EXPECT_GT(b.t_ref_us, 0) << t.id();
      const auto r = ev->evaluate(t, {Config{{128}}, Config{{256}}});
      ASSERT_EQ(r.size(), 2u);
      for (const auto& one : r) {
        EXPECT_EQ(one.status, k.expected) << t.id() << " " << one.key << ": " << one.log;
        EXPECT_NE(one.log.find(k.why), std::string::npos) << t.id() << ": " << one.log;
      }
      if (k.expected != Status::ok) continue;
      EXPECT_GT(r[0].time.median_us, 0);
      // Re-timed beside the baseline, checked like the search's repetitions.
      const auto again = ev->retime(t, {r[0].config, r[1].config}, 2);
      ASSERT_TRUE(again.has_value());
      for (const auto& why : again->failed) EXPECT_EQ(why, "") << t.id();
    }
  EXPECT_EQ(ev->restarts(), 0);
  std::filesystem::remove_all(root);
}

// Given data in place: the file's values are put back before every run; a kernel that leaves them
// is as wrong as with drawn ones.
TEST_F(InplaceGpu, GivenDataIsPutBackBeforeEveryRepetition) {
  const auto root = inplace_problem("inplace-file");
  const auto dir = root / "gelu";
  std::vector<float> x(300007);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((static_cast<double>(i % 2001) - 1000.0) / 97.0);
  ASSERT_TRUE(test::write_npy(dir / "x.npy", x, "<f4", "(300007,)"));
  std::ifstream in(dir / "problem.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto from = text.find("init: \"normal(0, 3)\",");
  const auto to = text.find("}", from);
  ASSERT_NE(from, std::string::npos);
  text.replace(from, to - from, "file: x.npy");  // no init, edge_inits or range beside a file
  replace(text, "dtypes: [f32, bf16]", "dtypes: [f32]");
  test::write_file(dir / "problem.yaml", text);
  const auto p = load_problem(root, "gelu");
  auto ev = make(root);
  for (const char* name : {"inplace", "untouched", "flaky"}) {
    const Task t{&p, &p.variant(name), DType::f32, Shape{{{"n", 300007}}}};
    ev->baseline(t);
    const auto r = ev->evaluate(t, {Config{{256}}});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, std::string(name) == "inplace" ? Status::ok : Status::wrong_answer) << name << ": " << r[0].log;
  }
  EXPECT_EQ(ev->restarts(), 0);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace soltune
