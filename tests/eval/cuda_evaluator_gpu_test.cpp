// GPU tests (label gpu): run on the H200. Every GELU variant is checked against the double-precision
// reference on fresh random inputs; deliberately broken kernels are caught with the right status;
// a fault costs one candidate; a short tune run finds a validated configuration.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <set>

#include "agents/dispatcher.hpp"
#include "eval/worker_evaluator.hpp"
#include "../support/call_index.hpp"
#include "../support/plan_variants.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

CudaEvalOptions fast_options() {
  CudaEvalOptions o;
  o.target_ms = 5;
  o.min_reps = 5;
  o.max_reps = 20;
  o.measure_ceilings = false;
  o.slow_factor = 1e9;  // these tests want every correct candidate timed, however slow
  o.seed = 7;
  return o;
}

Task make_task(const ProblemSpec& p, const std::string& variant, DType t, int64_t n) {
  return Task{&p, &p.variant(variant), t, Shape{{{"n", n}}}};
}

// Configurations in which every value of every knob appears at least once (where legal).
std::vector<Config> covering_set(const Space& s, uint64_t seed, size_t extra) {
  Rng rng(seed);
  std::vector<Config> out;
  std::set<std::string> keys;
  for (size_t k = 0; k < s.knobs().size(); ++k)
    for (auto v : s.knobs()[k].values)
      for (int tries = 0; tries < 500; ++tries) {
        auto c = s.sample(rng);
        if (!c) break;
        c->values[k] = v;
        if (!s.legal(*c)) continue;
        if (keys.insert(s.key(*c)).second) out.push_back(*c);
        break;
      }
  while (out.size() < s.knobs().size() + extra) {
    auto c = s.sample(rng);
    if (c && keys.insert(s.key(*c)).second) out.push_back(*c);
  }
  return out;
}

class CudaEvaluatorGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SOLTUNE_REQUIRE_GPU();
    ev_ = make(test::source_dir() / "templates");
  }
  // A worker-backed evaluator whose worker loads problems from `templates`.
  std::unique_ptr<WorkerEvaluator> make(const std::filesystem::path& templates, const CudaEvalOptions& eval = fast_options()) {
    WorkerOptions o;
    o.command = {test::soltune_binary(), "worker"};
    o.templates = templates;
    o.eval = eval;
    o.timeout_cap_s = 20;
    return std::make_unique<WorkerEvaluator>(compiler_, o);
  }
  Compiler compiler_{default_compiler_options()};
  std::unique_ptr<WorkerEvaluator> ev_;
};

TEST_F(CudaEvaluatorGpu, EveryGeluVariantIsCorrectOnFreshInputs) {
  const auto p = load_problem(test::source_dir() / "templates", "gelu");
  for (const auto& v : p.variants)
    for (auto dt : p.dtypes)
      for (int64_t n : {int64_t{1000003}, int64_t{1} << 24}) {
        const auto t = make_task(p, v.name, dt, n);
        const Space s(v, t.fixed(ev_->device()));
        const auto configs = covering_set(s, 11, 6);
        const auto results = ev_->evaluate(t, configs);
        ASSERT_EQ(results.size(), configs.size());
        for (const auto& r : results) {
          EXPECT_EQ(r.status, Status::ok) << t.id() << " " << r.key << ": " << r.log;
          EXPECT_TRUE(r.acc.pass) << r.acc.summary();
          EXPECT_EQ(r.acc.rounds, 6);       // four built-in rounds and gelu's two edge-value ones
          EXPECT_EQ(r.acc.checked, 6 * n);  // (the timed-loop check is kept apart)
          EXPECT_GT(r.time.median_us, 0);
          EXPECT_LE(r.time.q1_us, r.time.q3_us);
        }
      }
}

// Where a driver is installed, NVRTC may answer a repeated compile from the driver's compute cache
// without running ptxas, and so without the -v report that static pruning and the knowledge base's
// register counts need (seen on the H200 machine). Every compile here must carry the report.
TEST(CompilerWithDriver, RepeatedCompilesKeepThePtxasReport) {
  SOLTUNE_REQUIRE_GPU();
  auto o = default_compiler_options();
  o.cache_dir.clear();  // soltune's own cache would answer the repeat with the stored report
  const Compiler c(o);
  const auto p = load_problem(test::source_dir() / "templates", "gelu");
  const auto& v = p.variant("vectorized");
  const Space s(v, Bindings{});
  Bindings b;
  const auto cfg = s.parse_key("BLOCK=256,VEC=4,EPT=2,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
  for (size_t k = 0; k < v.knobs.size(); ++k) b[v.knobs[k].name] = static_cast<double>(cfg.values[k]);
  const CompileRequest r{v.source, "vectorized.cu", {name_expression(v.launch, DType::f32, b)}, "sm_90", {}};
  for (int i = 0; i < 3; ++i) {
    const auto res = c.compile(r);
    ASSERT_TRUE(res.ok) << res.log;
    EXPECT_TRUE(res.kernels.front().res.parsed) << "compile " << i << ": no ptxas report in the log:\n" << res.log;
    EXPECT_GT(res.kernels.front().res.registers, 0) << "compile " << i;
  }
}

TEST_F(CudaEvaluatorGpu, BaselineIsCheckedAndTimed) {
  const auto p = load_problem(test::source_dir() / "templates", "gelu");
  for (auto dt : p.dtypes) {
    const auto t = make_task(p, p.variants.front().name, dt, int64_t{1} << 24);
    const auto b = ev_->baseline(t);
    EXPECT_GT(b.t_ref_us, b.t_sol_us) << t.id();
    EXPECT_GT(b.t_sol_us, 0);
    EXPECT_NE(b.note.find("checked"), std::string::npos) << b.note;
    EXPECT_GE(b.ref_timing.reps, 5);
  }
}

// A baseline whose timing would outlast the limit given is not timed, and says why; within the
// limit it is timed as without one.
TEST_F(CudaEvaluatorGpu, ABaselineTooSlowForItsLimitIsSkippedSayingWhy) {
  const auto p = load_problem(test::source_dir() / "templates", "gelu");
  const auto t = make_task(p, p.variants.front().name, DType::f32, int64_t{1} << 24);
  const auto skipped = ev_->baseline_within(t, 1e-6);
  EXPECT_EQ(skipped.ref_timing.reps, 0);
  EXPECT_NE(skipped.skipped.find("timing it would take about"), std::string::npos) << skipped.skipped;
  const auto timed = ev_->baseline_within(t, 60);
  EXPECT_TRUE(timed.skipped.empty()) << timed.skipped;
  EXPECT_GE(timed.ref_timing.reps, 5);
}

// Deliberately bad kernels, each a variant of a copied gelu problem with one knob-free config.
struct BadKernel {
  const char* name;
  const char* body;  // the kernel body; x, y, n and i (the element index) are in scope
  Status expected;
  const char* why;   // a phrase the log must contain
  int64_t n = 1000003;
};

const BadKernel kBadKernels[] = {
    {"partial", "if (i < n / 2) y[i] = gelu(x[i]);", Status::wrong_answer, "unwritten"},
    {"tailbug", "if (i < n - 1) y[i] = gelu(x[i]);", Status::wrong_answer, "1 unwritten"},
    // Writes 64 elements past the end of y: the guard zone after the output sees it.
    {"overrun", "if (i < n) y[i] = gelu(x[i]); if (i < 64) y[n + i] = T(0);", Status::wrong_answer,
     "256 guard bytes written out of bounds"},
    // Writes 64 elements 96 KiB past the end of y: past the leading 64 KiB of the trailing zone, in
    // the rest of the allocation, which the zone runs to.
    {"farrun", "if (i < n) y[i] = gelu(x[i]); if (i < 64) y[n + 24576 + i] = T(0);", Status::wrong_answer,
     "256 guard bytes written out of bounds"},
    // f32 computed through bf16: inside this problem copy's loosened per-element tolerance, but
    // the precision check sees bf16-sized errors.
    {"lowprec", "if (i < n) y[i] = T(__bfloat162float(__float2bfloat16(gelu(x[i]))));", Status::wrong_answer,
     "lower precision than declared"},
    // Skips the work when called again with the previous call's input pointer. A block's call
    // number is its arrival count over the grid size, the same for every block of one call.
    {"cached", "__shared__ bool skip; if (threadIdx.x == 0) { const unsigned k = atomicAdd(&calls, 1u) / gridDim.x; "
               "skip = slots[(k + 1) % 2] == x; slots[k % 2] = x; } __syncthreads(); if (!skip && i < n) y[i] = gelu(x[i]);",
     Status::wrong_answer, "round 2"},
    // Wrong only for magnitudes from 1e4 to 1e30, which no declared, widened, shifted or edge-value
    // round draws: the full-range round does.
    {"midrange", "if (i < n) { const float v = x[i]; y[i] = T(fabsf(v) > 1.0e4f && fabsf(v) < 1.0e30f ? 0.0f : gelu(v)); }",
     Status::wrong_answer, "round 4 (full-range inputs)"},
    // Wrong for magnitudes from 1e-30 to 1e-8: normal(0, 3) draws one in 1e9 there, the tiny
    // edge-value round none.
    {"tinyrange", "if (i < n) { const float v = x[i]; y[i] = T(fabsf(v) > 1.0e-30f && fabsf(v) < 1.0e-8f ? 1.0f : gelu(v)); }",
     Status::wrong_answer, "round 4 (full-range inputs)"},
    // Does the work on its first seven calls only: past the correctness rounds (six for gelu), so
    // only the check inside the timed loop can see it.
    {"flaky", SOLTUNE_TEST_CALL_INDEX
              "if (k < 7 && i < n) y[i] = gelu(x[i]);",
     Status::wrong_answer, "inside the timed loop"},
    // Computes for its first nine calls (six correctness rounds, three warm-up), then writes back
    // the last result it stashed: right for as long as the inputs stay the same, which one input
    // set alone would allow; part of the inputs is drawn afresh before every timed repetition.
    {"replayer", SOLTUNE_TEST_CALL_INDEX
                 "if (i < n) { if (k < 9) { y[i] = gelu(x[i]); stash[i] = float(y[i]); } else { y[i] = T(stash[i]); } }",
     Status::wrong_answer, "inside the timed loop"},
    // Right through the first timed batch (six rounds, three warm-up, the probe's three, 20
    // repetitions), wrong in the extra batches, which the test always runs: they are checked too.
    {"late", SOLTUNE_TEST_CALL_INDEX
             "if (i < n) y[i] = k < 32 ? gelu(x[i]) : T(0);",
     Status::wrong_answer, "inside the timed loop"},
    // Works only where its output holds the poison the correctness rounds write, and leaves the
    // previous repetition's result elsewhere: timed repetitions, checked or not, find no poison.
    {"poisonwatch", "if (i < n && reinterpret_cast<const unsigned*>(y)[i] == 0xFFFFFFFFu) y[i] = gelu(x[i]);",
     Status::wrong_answer, "inside the timed loop"},
    // A block works only when the first of its inputs changed since its previous call, and leaves
    // the previous result otherwise: a kernel that tells fresh inputs from repeated ones. Above 2^20
    // elements the timed loop redraws a 64th of every set before every repetition, rarely that one
    // element (at or below, all of it: the kernel then does all the work).
    {"inputwatch", "__shared__ bool same; if (threadIdx.x == 0) { const long long f = blockIdx.x * static_cast<long long>(BLOCK); "
                   "const float v = float(x[f]); same = seen[blockIdx.x] == v; seen[blockIdx.x] = v; } __syncthreads(); "
                   "if (!same && i < n) y[i] = gelu(x[i]);",
     Status::wrong_answer, "inside the timed loop", 4194307},
    // Writes its input: the output is right, but inputs are read-only.
    {"inplace", "if (i < n) { y[i] = gelu(x[i]); const_cast<T*>(x)[i] = T(0); }", Status::wrong_answer,
     "wrote its input x"},
    // Right for its first eight calls, then zeroes its input and writes gelu(0) = 0: a reference run
    // after it on the zeroed input would agree.
    {"zeroer", SOLTUNE_TEST_CALL_INDEX
               "if (i < n) { if (k < 8) { y[i] = gelu(x[i]); } else { const_cast<T*>(x)[i] = T(0); y[i] = T(0); } }",
     Status::wrong_answer, "wrote its input x"},
};

std::filesystem::path bad_problem() {
  const auto root = test::copy_problem("gelu", "bad");
  // Loosen the per-element band for f32 (the precision check stays): lowprec must fail on precision alone.
  auto yaml = root / "gelu" / "problem.yaml";
  std::ifstream in(yaml);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "f32: {atol: 1.0e-6, rtol: 2.0e-6,";
  text.replace(text.find(from), from.size(), "f32: {atol: 1.0e-2, rtol: 1.0e-2,");
  test::write_file(yaml, text);
  for (const auto& b : kBadKernels)
    test::add_gelu_variant(root / "gelu", b.name,
                           std::string("#include <cuda_bf16.h>\n__device__ const void* slots[2];\n__device__ unsigned calls;\n"
                                       "__device__ float stash[1 << 20];\n__device__ float seen[1 << 16];\n"
                                       "__device__ inline float gelu(float v) { return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }\n"
                                       "template <typename T, int BLOCK>\n__global__ void bad_kernel(const T* x, T* y, long long n) {\n"
                                       "  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;\n  ") +
                               b.body + "\n}\n",
                           "bad_kernel");
  test::add_gelu_variant(root / "gelu", "bigsmem",
                         "template <typename T, int BLOCK>\n__global__ void big(const T* x, T* y, long long n) {}\n", "big",
                         ", smem: 300000");
  return root;
}

// Runs without a GPU too: the bad kernels must compile, so that on the GPU each is caught for what
// it does, not for failing to build.
TEST(BadKernelSuite, EveryBadKernelCompilesForSm90) {
  const auto root = bad_problem();
  const auto p = load_problem(root, "gelu");
  const Compiler c(default_compiler_options());
  for (const auto& b : kBadKernels) {
    const auto& v = p.variant(b.name);
    Bindings bind{{"BLOCK", 256}};
    const auto r = c.compile(CompileRequest{v.source, b.name, {name_expression(v.launch, DType::f32, bind)}, "sm_90", {}});
    EXPECT_TRUE(r.ok) << b.name << ":\n" << r.log;
  }
}

TEST_F(CudaEvaluatorGpu, BadKernelsAreCaughtWithTheRightStatus) {
  const auto root = bad_problem();
  const auto p = load_problem(root, "gelu");
  auto opt = fast_options();
  opt.target_cv = -1;  // both extra batches, whatever the spread (`late` is wrong only there)
  auto ev = make(root, opt);
  for (const auto& b : kBadKernels) {
    const auto t = make_task(p, b.name, DType::f32, b.n);
    ev->baseline(t);
    const auto r = ev->evaluate(t, {Config{{256}}});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, b.expected) << b.name << ": " << r[0].log;
    EXPECT_NE(r[0].log.find(b.why), std::string::npos) << b.name << ": " << r[0].log;
  }
  const auto big = ev->evaluate(make_task(p, "bigsmem", DType::f32, 1000003), {Config{{256}}});
  EXPECT_EQ(big[0].status, Status::illegal) << big[0].log;
  EXPECT_NE(big[0].log.find("shared memory"), std::string::npos) << big[0].log;
  EXPECT_EQ(ev->restarts(), 0);
}

// Broken kernels that must each cost one candidate, never the run: two faults and a hang.
void add_broken_variants(const std::filesystem::path& root) {
  test::add_gelu_variant(root / "gelu", "oob", R"(
template <typename T, int BLOCK>
__global__ void gelu_oob(const T* x, T* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;
  if (i < n) y[i + (1LL << 40)] = x[i];  // far out of bounds: an illegal address
}
)", "gelu_oob");
  test::add_gelu_variant(root / "gelu", "trap", R"(
template <typename T, int BLOCK>
__global__ void gelu_trap(const T* x, T* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;
  if (i == n / 2) __trap();  // the context is lost, as after an illegal address
  if (i < n) y[i] = x[i];
}
)", "gelu_trap");
  test::add_gelu_variant(root / "gelu", "hang", R"(
template <typename T, int BLOCK>
__global__ void gelu_hang(const T* x, T* y, long long n) {
  // Spins on the SM clock: the compiler cannot prove this ends (a loop on a volatile local was
  // compiled into one that returned at once).
  const long long t0 = clock64();
  while (clock64() - t0 >= 0) {}
}
)", "gelu_hang");
}

TEST_F(CudaEvaluatorGpu, FaultAndHangCostOneCandidateEach) {
  const auto root = test::copy_problem("gelu", "broken");
  add_broken_variants(root);
  const auto p = load_problem(root, "gelu");
  auto ev = make(root);
  const auto good_task = make_task(p, "vectorized", DType::f32, 1000003);
  const Space s(p.variant("vectorized"), good_task.fixed(ev->device()));
  const auto good_configs = covering_set(s, 3, 0);
  ev->baseline(good_task);
  for (const char* broken : {"oob", "trap", "hang"}) {
    const auto t = make_task(p, broken, DType::f32, 1000003);
    ev->baseline(t);
    const auto bad = ev->evaluate(t, {Config{{256}}});
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_EQ(bad[0].status, std::string(broken) == "hang" ? Status::timeout : Status::fault) << broken << ": " << bad[0].log;
    // The worker was replaced and the next candidates run as if nothing happened.
    for (const auto& r : ev->evaluate(good_task, good_configs)) EXPECT_EQ(r.status, Status::ok) << r.key << ": " << r.log;
  }
  EXPECT_EQ(ev->restarts(), 3);
}

// A baseline (or reference) that reads a constant argument from its own __constant__ variable, as
// kernels written for other tuners do, sees the drawn data: its module's variable is filled with
// every draw as a candidate's is (it had computed with zeros, and the task stopped at the baseline's
// check).
TEST_F(CudaEvaluatorGpu, ABaselineReadingConstantMemorySeesTheConstant) {
  const auto root = test::copy_problem("pnpoly", "constbase");
  // The shipped baseline, its polygon read from a __constant__ array of the argument's name.
  const auto file = root / "pnpoly" / "baseline.cu";
  test::replace_in_file(file, "const float* vertices", "const float* unused");
  test::replace_in_file(file, "template <int NV>", "__constant__ float vertices[1200];\ntemplate <int NV>");
  const auto p = load_problem(root, "pnpoly");
  auto ev = make(root);
  const Task t{&p, &p.variants.front(), DType::f32, Shape{{{"n", 1 << 20}, {"nv", 600}}}};
  const auto b = ev->baseline(t);
  EXPECT_GT(b.t_ref_us, 0);
  EXPECT_NE(b.note.find("checked"), std::string::npos) << b.note;
}

// Thread-block clusters given at launch (cudaLaunchKernelExC): the kernel sees its cluster's size
// (a wrong one writes NaN), and a cluster beyond what a device allows is illegal, not a fault.
TEST_F(CudaEvaluatorGpu, ClustersGivenAtLaunchRunAndOversizedOnesAreIllegal) {
  const auto root = test::copy_problem("gelu", "cluster");
  test::write_file(root / "gelu" / "clustered.cu", R"(
__device__ inline float gelu(float v) { return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }
template <typename T, int BLOCK, int CL>
__global__ void gelu_clustered(const T* x, T* y, long long n) {
  unsigned size;
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;
  if (i < n) y[i] = size == CL ? T(gelu(float(x[i]))) : T(__int_as_float(0x7fc00000));
}
)");
  test::write_file(root / "gelu" / "clustered.yaml",
                   "kernel: gelu_clustered\ntemplate_args: [T, BLOCK, CL]\nknobs: {BLOCK: [256], CL: [1, 2, 8, 32]}\n"
                   "dtypes: [f32]\nlaunch: {grid: \"cdiv(cdiv(n, BLOCK), CL) * CL\", block: BLOCK, cluster: CL}\n");
  const auto p = load_problem(root, "gelu");
  auto ev = make(root);
  const auto t = make_task(p, "clustered", DType::f32, 1000003);
  ev->baseline(t);
  const auto r = ev->evaluate(t, {Config{{256, 1}}, Config{{256, 2}}, Config{{256, 8}}, Config{{256, 32}}});
  ASSERT_EQ(r.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r[i].status, Status::ok) << r[i].key << ": " << r[i].log;
  EXPECT_EQ(r[3].status, Status::illegal) << r[3].log;
  EXPECT_NE(r[3].log.find("cluster of 32 blocks exceeds the 16"), std::string::npos) << r[3].log;
  EXPECT_EQ(ev->restarts(), 0);
}

// A plan of two launches through f32 scratch is right and timed as one candidate; a plan that reads
// scratch it never wrote (poisoned to NaN) or writes past its end is wrong_answer, and neither costs
// the next candidate anything (the re-timing of the right one still passes).
TEST_F(CudaEvaluatorGpu, PlansOfSeveralLaunchesAreCheckedAndTimedWhole) {
  const auto root = test::copy_problem("gelu", "plan");
  test::add_two_step_gelu(root / "gelu");
  const auto p = load_problem(root, "gelu");
  auto ev = make(root);
  for (const DType dt : {DType::f32, DType::bf16}) {
    const auto t = make_task(p, "twostep", dt, 1000003);
    const Space s(*t.variant, t.fixed(ev->device()));
    ev->baseline(t);
    const auto r = ev->evaluate(t, {s.parse_key("BLOCK=256,STEPS=1,GAP=0,OVER=0"), s.parse_key("BLOCK=256,STEPS=2,GAP=0,OVER=0"),
                                    s.parse_key("BLOCK=128,STEPS=2,GAP=1,OVER=0"), s.parse_key("BLOCK=128,STEPS=2,GAP=0,OVER=1"),
                                    s.parse_key("BLOCK=128,STEPS=2,GAP=0,OVER=0")});
    ASSERT_EQ(r.size(), 5u);
    for (int i : {0, 1, 4}) EXPECT_EQ(r[i].status, Status::ok) << t.id() << " " << r[i].key << ": " << r[i].log;
    EXPECT_EQ(r[2].status, Status::wrong_answer) << r[2].log;
    // The last element came from poison: NaN, or poison's own bytes (then it reads as unwritten).
    EXPECT_TRUE(r[2].log.find(" 1 non-finite") != std::string::npos || r[2].log.find(" 1 unwritten") != std::string::npos)
        << r[2].log;
    EXPECT_EQ(r[3].status, Status::wrong_answer) << r[3].log;
    EXPECT_NE(r[3].log.find("out of bounds"), std::string::npos) << r[3].log;
    // Two launches and 4 MB more traffic take longer than one.
    EXPECT_GT(r[1].time.median_us, r[0].time.median_us) << r[0].time.median_us << " " << r[1].time.median_us;
    const auto again = ev->retime(t, {r[1].config, r[4].config}, 1);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->config_us.size(), 2u);
  }
  EXPECT_EQ(ev->restarts(), 0);
  std::filesystem::remove_all(root);
}

TEST_F(CudaEvaluatorGpu, ShortTuneRunFindsAValidatedConfiguration) {
  auto cfg = load_run_config(test::source_dir() / "configs" / "gelu.yaml");
  cfg.shapes = {Shape{{{"n", int64_t{1} << 24}}}};
  class Count : public Archive {
   public:
    void on_result(const Task&, const EvalResult& r, const SolScore&) override { ok += r.status == Status::ok; }
    void on_demoted(const Task&, const EvalResult& r) override { demoted += r.key + ": " + r.log + "\n"; }
    int ok = 0;
    std::string demoted;  // right configurations found wrong while re-timed: none may be
  } obs;
  Dispatcher d(cfg, *ev_, obs);
  const auto reports = d.run(Budget{16, 0}, 5);
  ASSERT_EQ(reports.size(), cfg.dtypes.size());
  for (const auto& r : reports) {
    ASSERT_TRUE(r.outcome.best.has_value()) << r.task.id();
    EXPECT_TRUE(r.outcome.retimed) << r.task.id() << ": best and baseline re-timed interleaved";
    EXPECT_EQ(obs.demoted, "");
    EXPECT_TRUE(r.outcome.best->acc.pass);
    EXPECT_GT(r.outcome.best_sol.score, 0.5) << r.task.id() << " should beat the unfused baseline";
  }
  EXPECT_GT(obs.ok, 0);
}

}  // namespace
}  // namespace soltune
