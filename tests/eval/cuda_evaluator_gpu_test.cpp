// GPU tests (label gpu): run on the H200. Every GELU variant is checked against the double-precision
// reference on fresh random inputs; deliberately broken kernels are caught with the right status;
// a fault costs one candidate; a short tune run finds a validated configuration.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "agents/dispatcher.hpp"
#include "eval/cuda_evaluator.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

CudaEvalOptions fast_options() {
  CudaEvalOptions o;
  o.target_ms = 5;
  o.min_reps = 5;
  o.max_reps = 20;
  o.measure_ceilings = false;
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
    compiler_ = std::make_unique<Compiler>(default_compiler_options());
    ev_ = std::make_unique<CudaEvaluator>(0, *compiler_, cuda_device(0).arch(), fast_options());
  }
  std::unique_ptr<Compiler> compiler_;
  std::unique_ptr<CudaEvaluator> ev_;
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
          EXPECT_EQ(r.acc.rounds, 2);
          EXPECT_EQ(r.acc.checked, 2 * n);
          EXPECT_GT(r.time.median_us, 0);
          EXPECT_LE(r.time.q1_us, r.time.q3_us);
        }
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

TEST_F(CudaEvaluatorGpu, KernelThatSkipsAnElementIsAWrongAnswer) {
  const auto root = test::copy_problem("gelu", "tailbug");
  test::write_file(root / "gelu" / "tailbug.cu", R"(
#include <cuda_bf16.h>
template <typename T, int BLOCK>
__global__ void gelu_tailbug(const T* x, T* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;
  if (i >= n - 1) return;  // forgets the last element
  const float v = static_cast<float>(x[i]);
  y[i] = T(0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))));
}
)");
  test::write_file(root / "gelu" / "tailbug.yaml",
                   "kernel: gelu_tailbug\ntemplate_args: [T, BLOCK]\nknobs: {BLOCK: [256]}\n"
                   "launch: {grid: \"cdiv(n, BLOCK)\", block: BLOCK}\n");
  const auto p = load_problem(root, "gelu");
  const auto t = make_task(p, "tailbug", DType::f32, 1000003);
  const auto r = ev_->evaluate(t, {Config{{256}}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, Status::wrong_answer) << r[0].log;
  EXPECT_EQ(r[0].acc.unwritten, 1) << r[0].acc.summary();
}

TEST_F(CudaEvaluatorGpu, FaultCostsOneCandidateOnly) {
  const auto root = test::copy_problem("gelu", "oob");
  test::write_file(root / "gelu" / "oob.cu", R"(
template <typename T, int BLOCK>
__global__ void gelu_oob(const T* x, T* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;
  if (i < n) y[i + (1LL << 40)] = x[i];  // far out of bounds: an illegal address
}
)");
  test::write_file(root / "gelu" / "oob.yaml",
                   "kernel: gelu_oob\ntemplate_args: [T, BLOCK]\nknobs: {BLOCK: [256]}\n"
                   "launch: {grid: \"cdiv(n, BLOCK)\", block: BLOCK}\n");
  const auto p = load_problem(root, "gelu");
  const auto bad = ev_->evaluate(make_task(p, "oob", DType::f32, 1000003), {Config{{256}}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].status, Status::fault) << bad[0].log;
  // The device was reset and the next candidate runs as if nothing happened.
  const auto t = make_task(p, "vectorized", DType::f32, 1000003);
  const Space s(p.variant("vectorized"), t.fixed(ev_->device()));
  const auto good = ev_->evaluate(t, covering_set(s, 3, 0));
  for (const auto& r : good) EXPECT_EQ(r.status, Status::ok) << r.key << ": " << r.log;
}

TEST_F(CudaEvaluatorGpu, ShortTuneRunFindsAValidatedConfiguration) {
  auto cfg = load_run_config(test::source_dir() / "configs" / "gelu.yaml");
  cfg.shapes = {Shape{{{"n", int64_t{1} << 24}}}};
  class Count : public TaskObserver {
   public:
    void on_result(const Task&, const EvalResult& r, const SolScore&) override { ok += r.status == Status::ok; }
    int ok = 0;
  } obs;
  Dispatcher d(cfg, *ev_, obs);
  const auto reports = d.run(Budget{16, 0}, 5, [](const Task&) { return std::set<std::string>{}; });
  ASSERT_EQ(reports.size(), cfg.dtypes.size());
  for (const auto& r : reports) {
    ASSERT_TRUE(r.outcome.best.has_value()) << r.task.id();
    EXPECT_TRUE(r.outcome.best->acc.pass);
    EXPECT_GT(r.outcome.best_sol.score, 0.5) << r.task.id() << " should beat the unfused baseline";
  }
  EXPECT_GT(obs.ok, 0);
}

}  // namespace
}  // namespace soltune
