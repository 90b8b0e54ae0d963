// The model backend and the shared candidate checks, on the CPU: real NVRTC compiles, real ptxas
// resources, predictions labelled as such.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "eval/candidates.hpp"
#include "eval/cost_estimate.hpp"
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

// The baseline predicted for every task whose baseline was measured on the H200
// (tests/data/h200_baselines.json, from `soltune tune bench/baselines/<problem>.yaml`): within a
// factor of 2, at shapes from one element (where launches are all there is) to 1 GiB.
TEST_F(ModelEval, BaselinesAreWithinAFactorOfTwoOfTheMeasuredOnes) {
  std::ifstream in(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "tests" / "data" / "h200_baselines.json");
  const auto doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc.at("gpu"), "NVIDIA H200");
  ModelEvaluator ev(h200, compiler, "sm_90");
  std::map<std::string, ProblemSpec> problems;
  int checked = 0;
  for (const auto& row : doc.at("baselines")) {
    const std::string name = row.at("problem");
    if (!problems.count(name))
      problems.emplace(name, load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", name));
    const auto& pr = problems.at(name);
    if (pr.baseline_library) continue;  // the model predicts the library there (LibraryBaselinesArePredictedAsTheLibrary)
    const Task t{&pr, &pr.variants.front(), parse_dtype(row.at("dtype").get<std::string>()),
                 parse_shape(pr, row.at("shape"))};
    const double measured = row.at("t_ref_us"), predicted = ev.baseline(t).t_ref_us;
    EXPECT_GE(predicted, measured / 2) << t.id();
    EXPECT_LE(predicted, measured * 2) << t.id();
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

// Where a problem names a library baseline, the model predicts the library near its unit's ceiling,
// labelled with the library's name, whatever the baseline kernels would take.
TEST_F(ModelEval, LibraryBaselinesArePredictedAsTheLibrary) {
  const auto mm = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "matmul");
  ASSERT_TRUE(mm.baseline_library);
  ModelEvaluator ev(h200, compiler, "sm_90");
  const Task t{&mm, &mm.variant("tiled"), DType::bf16, parse_shape(mm, "m=4096,n=4096,k=4096,trans_b=1")};
  const auto b = ev.baseline(t);
  EXPECT_EQ(b.source, "cuBLAS");
  EXPECT_NE(b.note.find("T_ref: cuBLAS, predicted"), std::string::npos) << b.note;
  // 137 GFLOP at 75% of 989 TFLOP/s, and the launch.
  EXPECT_NEAR(b.t_ref_us, t.flops() / (0.75 * h200.ceilings().tensor_16) * 1e6 + 2.5, 1.0);
  EXPECT_GT(b.t_ref_us, b.t_sol_us);
  const auto gelu = ev.baseline(Task{&p, &p.variant("vectorized"), DType::f32, Shape{{{"n", 1 << 20}}}});
  EXPECT_EQ(gelu.source, "baseline");  // the kernels' label where problem.yaml gives none
}

// More work never takes less time, and the least work is never below a launch per kernel.
TEST_F(ModelEval, BaselinesGrowWithTheWorkFromTheLaunchFloor) {
  ModelEvaluator ev(h200, compiler, "sm_90");
  double before = 0;
  for (int64_t n = 1; n <= (int64_t{1} << 30); n *= 4) {
    const Task t{&p, &p.variant("vectorized"), DType::bf16, Shape{{{"n", n}}}};
    const double us = ev.baseline(t).t_ref_us;
    EXPECT_GE(us, before) << t.id();
    EXPECT_GE(us, 2.0 * static_cast<double>(p.baseline.size())) << t.id();
    before = us;
  }
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
  r.spill_loads = 4;  // spills are a cost the timing (or the model) weighs, not a limit
  EXPECT_EQ(launch_limits(r, g, h200), "");
}

// A cluster given at launch: only on sm_90 and newer, in a grid of whole clusters, of at most 16.
// A compile that missed its time limit twice is the candidate's timeout, not its compile error.
TEST_F(ModelEval, ACompileTimeoutIsATimeout) {
  Candidate c;
  CompileResult r;
  r.log = "NVRTC did not finish within 60 s: compile abandoned (the compile process was killed)\n";
  r.timed_out = true;
  EXPECT_FALSE(take_compile_result(c, r));
  EXPECT_EQ(c.result.status, Status::timeout);
  EXPECT_NE(c.result.log.find("compile: NVRTC did not finish"), std::string::npos);
  r.timed_out = false;
  EXPECT_FALSE(take_compile_result(c, r));
  EXPECT_EQ(c.result.status, Status::compile_error);
}

TEST_F(ModelEval, LaunchLimitsCheckClusters) {
  Resources r;
  r.registers = 32;
  Geometry g;
  g.grid = {264, 2, 1};
  g.block = {256, 1, 1};
  g.cluster = {2, 1, 1};
  EXPECT_EQ(launch_limits(r, g, h200), "");
  EXPECT_NE(g.str().find("cluster=(2,1,1)"), std::string::npos);
  const auto a100 = *find_known_gpu("A100");
  EXPECT_NE(launch_limits(r, g, a100).find("clusters need compute capability 9.0"), std::string::npos);
  g.cluster = {1, 4, 1};  // grid y = 2
  EXPECT_NE(launch_limits(r, g, h200).find("grid dimension 1 (2 blocks) is not a multiple of the cluster's (4)"),
            std::string::npos);
  g.cluster = {8, 2, 1};  // 16 blocks: the non-portable maximum, legal
  EXPECT_EQ(launch_limits(r, g, h200), "");
  g.grid = {264, 4, 1};
  g.cluster = {8, 4, 1};
  EXPECT_NE(launch_limits(r, g, h200).find("cluster of 32 blocks exceeds the 16"), std::string::npos);
}

// ptxas's notes that a Hopper kernel lost its design prune it, quoted with what they mean.
TEST_F(ModelEval, LaunchLimitsRefuseKernelsPtxasUndid) {
  Geometry g;
  g.block = {384, 1, 1};
  Resources r;
  r.registers = 168;
  ASSERT_EQ(launch_limits(r, g, h200), "");
  const std::string arrive =
      "(C7519) warpgroup.arrive is injected in around line 1755 by compiler to allow use of registers in GMMA in "
      "function '_Z4gemmv'";
  r.notes = {{PtxasNote::Kind::wgmma_serialized, arrive, 3}};
  auto why = launch_limits(r, g, h200);
  EXPECT_TRUE(why.starts_with("wgmma serialised by the compiler (ptxas \"" + arrive + "\" and 2 more such notes)"))
      << why;
  EXPECT_NE(why.find("not worth a GPU run"), std::string::npos) << why;

  const std::string wait =
      "(C7517) warpgroup.wait is injected in around line 343 by compiler to allow use of registers defined by GMMA "
      "in function '_Z4gemmv'";
  r.notes = {{PtxasNote::Kind::wgmma_serialized, wait, 1}};
  why = launch_limits(r, g, h200);
  EXPECT_TRUE(why.starts_with("wgmma serialised by the compiler (ptxas \"" + wait + "\"):")) << why;

  const std::string ignored = "(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.";
  r.notes = {{PtxasNote::Kind::setmaxnreg_ignored, ignored, 1}};
  why = launch_limits(r, g, h200);
  EXPECT_TRUE(why.starts_with("setmaxnreg ignored (ptxas \"" + ignored + "\"):")) << why;

  r.notes.insert(r.notes.begin(), PtxasNote{PtxasNote::Kind::wgmma_serialized, wait, 1});
  why = launch_limits(r, g, h200);
  EXPECT_NE(why.find("wgmma serialised"), std::string::npos) << why;
  EXPECT_NE(why.find("; setmaxnreg ignored"), std::string::npos) << why;
}

// A template whose kernel (sm_90a) lets ptxas serialise its wgmmas, or ignore its setmaxnreg, is
// pruned by the model backend after compiling, with the note quoted; the clean one is predicted.
// Only NVRTC runs: no GPU needed. EPT picks the kernel: 1 reads and rewrites a wgmma accumulator
// between wgmmas without a fence, 2 fences each group, 4 reallocates registers without min-blocks
// in __launch_bounds__ (ptxas cannot tell the count at entry).
TEST_F(ModelEval, PrunesWhatPtxasSerialisedOrIgnored) {
  auto hopper = p;
  VariantSpec& v = hopper.variants.front();
  ASSERT_EQ(v.name, "vectorized");
  v.arch = "sm_90a";
  v.source = R"CUDA(
__device__ __forceinline__ void mma(float (&d)[4], unsigned long long da, unsigned long long db) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db));
}
template <typename T, int BLOCK, int VEC, int EPT, int GRID_STRIDE, int FAST_TANH, int CACHE_HINT>
__global__ void __launch_bounds__(BLOCK) gelu_tanh(const T* __restrict__ x, T* __restrict__ y, long long n) {
  if constexpr (EPT == 4) {
    float v = static_cast<float>(x[threadIdx.x]);
    if (threadIdx.x >= 128) {
      asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
      v += 1.0f;
    } else {
      asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
      v *= 2.0f;
    }
    y[threadIdx.x] = static_cast<T>(v);
  } else {
    __shared__ __align__(1024) unsigned int smem[(64 + 8) * 32 / 4];
    for (int i = threadIdx.x; i < (64 + 8) * 32 / 4; i += blockDim.x) smem[i] = 0x3c003c00u;
    __syncthreads();
    const unsigned int base = static_cast<unsigned int>(__cvta_generic_to_shared(smem));
    const unsigned long long da = (base >> 4) & 0x3FFF, db = ((base + 64 * 32) >> 4) & 0x3FFF;
    float d[4] = {0, 0, 0, 0};
    for (long long it = 0; it < n; ++it) {
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
      mma(d, da, db);
      if (EPT == 1) d[0] = d[0] * 0.5f;  // in flight: ptxas must wait for the wgmma first
      mma(d, da, db);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }
    y[threadIdx.x] = static_cast<T>(d[0] + d[1] + d[2] + d[3]);
  }
}
)CUDA";
  ModelEvaluator ev(h200, compiler, "sm_90");
  const Task t{&hopper, &v, DType::f32, Shape{{{"n", int64_t{1} << 20}}}};
  const Space s(v, t.fixed(h200));
  const auto cfg = [&](int ept) {
    return s.parse_key("BLOCK=128,VEC=1,EPT=" + std::to_string(ept) + ",GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
  };
  const auto r = ev.evaluate(t, {cfg(1), cfg(2), cfg(4)});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].status, Status::illegal) << r[0].log;
  EXPECT_TRUE(r[0].log.starts_with("wgmma serialised by the compiler (ptxas \"(C75")) << r[0].log;
  EXPECT_NE(r[0].log.find("in function '_Z9gelu_tanh"), std::string::npos) << r[0].log;
  EXPECT_EQ(r[1].status, Status::ok) << r[1].log;
  EXPECT_TRUE(r[1].res.notes.empty());
  EXPECT_EQ(r[2].status, Status::illegal) << r[2].log;
  EXPECT_TRUE(r[2].log.starts_with("setmaxnreg ignored (ptxas \"(C7508) Potential Performance Loss: 'setmaxnreg' ignored"))
      << r[2].log;
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

// A grid of fewer blocks than SMs streams at what its own SMs hold in flight: one block of 256 threads
// moving 8 MB takes milliseconds, not the minutes a weight over every SM gave it, and two such
// blocks take about half as long.
TEST_F(ModelEval, AGridSmallerThanTheGpuIsLimitedByItsOwnSms) {
  Resources r;
  r.registers = 32;
  Geometry one, two;
  one.block = two.block = {256, 1, 1};
  one.grid = {1, 1, 1};
  two.grid = {2, 1, 1};
  const double bytes = 8.0 * (1 << 20);
  const double t1 = predict_time(0, bytes, 16, r, one, h200).t_us, t2 = predict_time(0, bytes, 16, r, two, h200).t_us;
  EXPECT_LT(t1, 100e3) << t1;  // under 0.1 s
  EXPECT_GT(t1, 1.5 * t2) << t1 << " vs " << t2;
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

namespace soltune {
namespace {

// What measuring costs, estimated before anything runs, against what it cost on an H100 SXM
// (2026-12-06, `soltune tune configs/matmul-models.yaml --seconds 120`: the reference's time from
// the baseline's note, an evaluation's from the knowledge base's batch times): within a factor of 2.
TEST(CostEstimate, MatmulAtModelScaleIsWithinAFactorOfTwoOfWhatAnH100Took) {
  const auto mm = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "matmul");
  const DeviceInfo h100 = *find_known_gpu("H100 80GB");
  struct Case {
    const char* shape;
    double reference_s, candidate_s;  // measured
  };
  for (const auto& c : {Case{"m=8192,n=28672,k=8192,trans_b=1", 0.261, 2.0}, Case{"m=4096,n=6144,k=4096,trans_b=1", 0.0, 0.17},
                        Case{"m=1024,n=128256,k=4096,trans_b=1", 0.0, 0.6}}) {
    const Task t{&mm, &mm.variant("wgmma"), DType::bf16, parse_shape(mm, c.shape)};
    const auto e = estimate_costs(t, h100, CudaEvalOptions{});
    if (c.reference_s > 0) {
      EXPECT_GT(e.reference_s, c.reference_s / 2) << c.shape;
      EXPECT_LT(e.reference_s, c.reference_s * 2) << c.shape;
    }
    EXPECT_GT(e.candidate_s, c.candidate_s / 2) << c.shape << ": " << e.candidate_s;
    EXPECT_LT(e.candidate_s, c.candidate_s * 2) << c.shape << ": " << e.candidate_s;
    EXPECT_GT(e.baseline_s, e.reference_s);
  }
  // A memory-bound task costs far less to check than a GEMM of its bytes' size.
  const auto gelu = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "gelu");
  const auto g = estimate_costs(Task{&gelu, &gelu.variant("vectorized"), DType::f32, Shape{{{"n", int64_t{1} << 28}}}}, h100,
                                CudaEvalOptions{});
  EXPECT_LT(g.reference_s, 0.01);
  EXPECT_GT(g.candidate_s, 0.05);  // 100 ms of timed repetitions
  // A GEMM with its epilogue checks its timed repetitions on sampled rows (reference_rows): a
  // 32nd of the reference each, where a check by the whole reference would cost as much again.
  auto epi = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "matmul_epilogue");
  const Task et{&epi, &epi.variant("wgmma_ws"), DType::bf16,
                parse_shape(epi, "m=2048,n=4096,k=14336,trans_b=1,act=2")};
  const auto sampled = estimate_costs(et, h100, CudaEvalOptions{});
  epi.timed_check.reset();
  const auto whole = estimate_costs(et, h100, CudaEvalOptions{});
  EXPECT_GT(whole.candidate_s - sampled.candidate_s, 1.5 * sampled.reference_s) << sampled.candidate_s << " " << whole.candidate_s;
  // Attention's, on query rows its reference picks (reference_picked).
  auto att = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "attention");
  const Task at{&att, &att.variant("fa3"), DType::bf16, parse_shape(att, "b=8,h=16,h_kv=16,s_q=4096,s_k=4096,d=128,causal=0")};
  const auto picked = estimate_costs(at, h100, CudaEvalOptions{});
  att.timed_check.reset();
  const auto all_rows = estimate_costs(at, h100, CudaEvalOptions{});
  EXPECT_GT(all_rows.candidate_s - picked.candidate_s, 1.5 * picked.reference_s) << picked.candidate_s << " " << all_rows.candidate_s;
}

// Timed repetitions of a compute-bound task whose traffic covers L2 twice over in at most three
// repetitions rotate input sets instead of flushing; everything else flushes.
TEST(RotationSets, OnlyComputeBoundWorkWithTrafficEnoughRotatesAndARunConfigsTimingFlushes) {
  const auto mm = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "matmul");
  const DeviceInfo h100 = *find_known_gpu("H100 80GB");
  ASSERT_EQ(h100.l2_bytes, 50 << 20);
  auto sets = [&](const char* shape, const TimingOptions& timing = {}) {
    return rotation_sets(Task{&mm, &mm.variant("wgmma"), DType::bf16, parse_shape(mm, shape)}, h100, timing);
  };
  EXPECT_EQ(sets("m=4096,n=6144,k=4096,trans_b=1"), 2) << "128 MiB a repetition: one other set evicts";
  EXPECT_EQ(sets("m=4096,n=4096,k=4096,trans_b=1"), 3) << "96 MiB a repetition: two others";
  EXPECT_EQ(sets("m=8192,n=28672,k=8192,trans_b=1"), 2);
  EXPECT_EQ(sets("m=1024,n=1024,k=1024,trans_b=1"), 0) << "6 MiB a repetition: a flush is cheaper than 18 sets";
  EXPECT_EQ(sets("m=16,n=6144,k=4096,trans_b=1"), 0) << "memory-bound: flushed";
  EXPECT_EQ(sets("m=65536,n=65536,k=65536,trans_b=1"), 0) << "a second set would not fit half the device";
  TimingOptions two;
  two.input_sets = 2;
  EXPECT_EQ(sets("m=4096,n=6144,k=4096,trans_b=1", two), 0) << "the run config's sets are flushed";
  EXPECT_EQ(timed_input_sets(Task{&mm, &mm.variant("wgmma"), DType::bf16, parse_shape(mm, "m=16,n=6144,k=4096,trans_b=1")},
                             h100, two),
            2);
  TimingOptions flush;
  flush.flush_mib = 64;
  EXPECT_EQ(sets("m=4096,n=6144,k=4096,trans_b=1", flush), 0);
  const auto gelu = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "gelu");
  EXPECT_EQ(rotation_sets(Task{&gelu, &gelu.variant("vectorized"), DType::f32, Shape{{{"n", int64_t{1} << 28}}}}, h100, {}), 0);
}

// A checked timed repetition of a GEMM computes a 256th of its rows exactly, at least a block's 16.
TEST(ExactCheckRows, ARowShareWithABlocksFloor) {
  EXPECT_EQ(exact_check_rows(1), 1);
  EXPECT_EQ(exact_check_rows(16), 16);
  EXPECT_EQ(exact_check_rows(512), 16);
  EXPECT_EQ(exact_check_rows(4096), 16);
  EXPECT_EQ(exact_check_rows(8192), 32);
  EXPECT_EQ(exact_check_rows(8193), 33);
}

}  // namespace
}  // namespace soltune
