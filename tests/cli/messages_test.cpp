// Bad input at the command line gets a clear message, the right exit code, and nothing lost:
// parse failures (file:line:column, exit 1), budgets (refused alike from the file and the options),
// a problem the knowledge base does not hold, tasks a replay cannot serve, and landscapes that
// must not be overwritten or taken as whole when they are not.
#include <chrono>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <tuple>

#include "cli_fixture.hpp"
#include "../support/spill_kernel.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {
namespace {

class Messages : public Cli {
 protected:
  // A gelu config in tmp_ with the shipped templates; `extra` is appended.
  fs::path config(const std::string& extra = "", const std::string& budget = "budget: {evals: 4}\n") const {
    const auto cfg = tmp_ / "c.yaml";
    write(cfg, "problem: gelu\ndtypes: [f32]\nshapes: [{n: 100000}]\n" + budget + "backend: model\ntemplates: " +
                   (kSource / "templates").string() + "\n" + extra);
    return cfg;
  }
};

TEST_F(Messages, ParseFailuresNameFileLineAndColumnAndExitWithOne) {
  // A key that is a list, in a config and in a template: once "internal error ... bad conversion".
  auto r = soltune("tune " + q(config("[a, b]: 1\n")) + " --kb " + q(kb_));
  expect_run(r, 1, {"c.yaml:7:1: expected a key (a plain name), got a list"});
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r;

  fs::copy(kSource / "templates", tmp_ / "templates", fs::copy_options::recursive);
  const auto variant = tmp_ / "templates" / "gelu" / "vectorized.yaml";
  write(variant, "{x: 1}: 2\n" + read(variant));
  fs::create_directories(tmp_ / "configs");
  write(tmp_ / "configs" / "c2.yaml", "problem: gelu\nshapes: [{n: 100000}]\nbudget: {evals: 4}\n");
  r = soltune("tune configs/c2.yaml --kb " + q(kb_));
  expect_run(r, 1, {"vectorized.yaml:1:1: expected a key (a plain name), got a mapping"});

  r = soltune("tune " + q(kSource / "configs"));  // a folder
  expect_run(r, 1, {"configs: is a folder, not a YAML file"});
  EXPECT_FALSE(fs::exists(kb_));
}

// A kernel whose parameters do not take what the variant passes (an input as T*, one parameter too
// many) is refused before anything is tuned or recorded, with the kernel's file and line; --check
// says so too.
TEST_F(Messages, KernelSignaturesAreCheckedBeforeTuning) {
  fs::copy(kSource / "templates", tmp_ / "templates", fs::copy_options::recursive);
  const auto cu = tmp_ / "templates" / "gelu" / "vectorized.cu";
  const std::string good = read(cu);
  const std::string decl = "gelu_tanh(const T* __restrict__ x, T* __restrict__ y, long long n)";
  const auto at = good.find(decl);
  ASSERT_NE(at, std::string::npos) << "vectorized.cu's kernel is no longer declared as this test expects";
  const int line = 1 + static_cast<int>(std::count(good.begin(), good.begin() + static_cast<long>(at), '\n'));
  const auto cfg = tmp_ / "c.yaml";
  write(cfg, "problem: gelu\nshapes: [{n: 100000}]\nbudget: {evals: 4}\nbackend: model\ntemplates: templates\n");
  auto r = soltune("tune " + q(cfg) + " --check");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("loads and checks: its data, the device memory it needs, and kernel parameters that take what "
                       "the variants pass them"), std::string::npos) << r;

  std::string bad = good;
  bad.replace(at, decl.size(), "gelu_tanh(const int* __restrict__ x, T* __restrict__ y, long long n)");
  write(cu, bad);
  for (const std::string& extra : {std::string(" --check"), " --kb " + q(kb_)}) {
    r = soltune("tune " + q(cfg) + extra);
    EXPECT_EQ(r.code, 1) << r;
    EXPECT_EQ(r.out.find("loads and checks"), std::string::npos) << "no verdict before a check fails: " << r;
    EXPECT_NE(r.err.find("vectorized.cu:" + std::to_string(line) + ": gelu_tanh<float, "), std::string::npos) << r;
    EXPECT_NE(r.err.find("parameter 1 cannot take 'x', which soltune passes as const float* (or float*) (variant vectorized, f32)"),
              std::string::npos) << r;
    EXPECT_NE(r.err.find("which soltune passes as const __nv_bfloat16* (or __nv_bfloat16*) (variant vectorized, bf16)"),
              std::string::npos) << r;
  }
  EXPECT_FALSE(fs::exists(kb_)) << "nothing is recorded for a run that cannot start";

  bad = good;
  bad.replace(at, decl.size(), "gelu_tanh(const T* __restrict__ x, T* __restrict__ y, long long n, int extra)");
  write(cu, bad);
  r = soltune("tune " + q(cfg) + " --check");
  expect_run(r, 1, {"does not take 3 parameters, as its args (x, y, n) pass"});
}

// A configuration that spills registers is evaluated like any other, its spill bytes recorded, and
// the summary says per task how many spilled and how the fastest of them compares.
TEST_F(Messages, SpillingCandidatesAreEvaluatedAndReported) {
  fs::copy(kSource / "templates", tmp_ / "templates", fs::copy_options::recursive);
  const auto dir = tmp_ / "templates" / "gelu";
  test::remove_variant(dir, "vectorized");
  // N floats kept live per thread under 32 registers (1024 threads, 2 blocks per SM): N 64 spills.
  write(dir / "spill.cu", "#include <cuda_bf16.h>\n" + test::kSpillMix + R"SRC(
__device__ inline float to_f(float v) { return v; }
__device__ inline float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline void put(float& d, float v) { d = v; }
__device__ inline void put(__nv_bfloat16& d, float v) { d = __float2bfloat16_rn(v); }
template <typename T, int N>
__global__ void __launch_bounds__(1024, 2) gelu_spill(const T* x, T* y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r[N];
#pragma unroll
  for (int k = 0; k < N; ++k) r[k] = to_f(x[i + k < n ? i + k : i]);
  const float s = spill_mix<N, 3>(r);
  const float v = to_f(x[i]);
  const float g = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * fmaf(0.044715f * v, v * v, v)));
  put(y[i], s == 1.2345e30f ? 0.0f : g);
}
)SRC");
  write(dir / "spill.yaml", "kernel: gelu_spill\ntemplate_args: [T, N]\nknobs:\n  N: [2, 96]\nlaunch:\n  grid: cdiv(n, 1024)\n"
                            "  block: 1024\n");
  write(tmp_ / "s.yaml", "problem: gelu\ndtypes: [f32]\nshapes: [{n: 100000}]\nbudget: {evals: 2}\nbackend: model\n"
                         "templates: " + (tmp_ / "templates").string() + "\n");
  auto r = soltune("tune " + q(tmp_ / "s.yaml") + " --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("1 candidate(s) spilled registers and were predicted with their spills; the fastest of them"),
            std::string::npos) << r;
  r = soltune("kb show 1 --kb " + q(kb_) + " --json");
  ASSERT_EQ(r.code, 0) << r;
  const auto j = nlohmann::json::parse(r.out);
  int spilled = 0;
  for (const auto& row : j["results"]) {
    EXPECT_EQ(row["status"], "ok") << row.dump();
    spilled += row["spill_stores"].get<int>() > 0;
  }
  EXPECT_EQ(spilled, 1) << r.out;
}

TEST_F(Messages, BudgetsThatAreNotPositiveAreRefusedFromOptionsAndFilesAlike) {
  const auto cfg = config();
  for (const std::string opt : {"--evals -1", "--evals 0", "--seconds -5", "--seconds 0"}) {
    const auto r = soltune("tune " + q(cfg) + " --kb " + q(kb_) + " " + opt);
    EXPECT_EQ(r.code, 2) << opt << "\n" << r;
    const std::string name = opt.substr(0, opt.find(' '));
    EXPECT_NE(r.err.find(name + ": expected a positive number of"), std::string::npos) << r;
    EXPECT_NE(r.err.find("got " + opt.substr(opt.find(' ') + 1)), std::string::npos) << r;
  }
  for (const std::string budget : {"budget: {evals: 0}\n", "budget: {seconds: -5}\n"}) {
    const auto r = soltune("tune " + q(config("", budget)) + " --kb " + q(kb_));
    EXPECT_EQ(r.code, 1) << budget << r;
    EXPECT_NE(r.err.find("c.yaml:4:"), std::string::npos) << r;
    EXPECT_NE(r.err.find(": expected a positive number of"), std::string::npos) << r;
  }
  EXPECT_FALSE(fs::exists(kb_)) << "a refused run must not create its knowledge base";
  const auto r = soltune("tune " + q(config()) + " --kb " + q(kb_) + " --seed -2");
  EXPECT_EQ(r.code, 2) << r;
}

TEST_F(Messages, BestOfAProblemTheKnowledgeBaseDoesNotHoldIsAnError) {
  ASSERT_EQ(tune_gelu(4).code, 0);
  for (const std::string json : {"", " --json"}) {
    const auto r = soltune("kb best --kb " + q(kb_) + " --problem nosuch" + json);
    expect_run(r, 1, {"no results for problem 'nosuch'", "problems there: gelu"});
  }
  // A problem it holds, with nothing on the GPUs asked for: an empty answer, not an error.
  const auto r = soltune("kb best --kb " + q(kb_) + " --problem gelu --gpu nosuchgpu");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("no ok result for problem 'gelu' on a GPU matching 'nosuchgpu'"), std::string::npos) << r;
  EXPECT_EQ(soltune("kb best --kb " + q(kb_) + " --problem gelu").code, 0);
}

TEST_F(Messages, AReplayNamesTheTasksItCannotServe) {
  // configs/gelu.yaml has four tasks; the shipped recording serves one.
  const auto r = soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --backend replay --landscape " +
                         q(kSource / "tests" / "data" / "gelu_f32_landscape.json") + " --kb " + q(kb_) + " --evals 8");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.err.find("3 task(s) of"), std::string::npos) << r;
  EXPECT_NE(r.err.find("have no landscape and are skipped"), std::string::npos) << r;
  for (const char* id : {"gelu/vectorized/f32/n=1000003", "gelu/vectorized/bf16/n=268435456", "gelu/vectorized/bf16/n=1000003"})
    EXPECT_NE(r.err.find("\n  " + std::string(id)), std::string::npos) << id << "\n" << r;
}

TEST_F(Messages, ALandscapeIsNeitherOverwrittenNorTakenAsWholeWhenCut) {
  // A space of four configurations, recorded with the model backend.
  const auto cfg = config("variants: [vectorized]\n");
  fs::copy(kSource / "templates", tmp_ / "templates", fs::copy_options::recursive);
  auto yaml = read(tmp_ / "templates" / "gelu" / "vectorized.yaml");
  yaml = std::regex_replace(yaml, std::regex("BLOCK: \\{values: \\[[^\\]]*\\]"), "BLOCK: {values: [128, 256]");
  yaml = std::regex_replace(yaml, std::regex("EPT: \\{values: \\[[^\\]]*\\]"), "EPT: {values: [1, 2]");
  for (const char* k : {"VEC", "GRID_STRIDE", "FAST_TANH", "CACHE_HINT"})
    yaml = std::regex_replace(yaml, std::regex(std::string(k) + ": \\{values: \\[[^\\]]*\\]"),
                              std::string(k) + (std::string(k) == "VEC" ? ": {values: [4]" : ": {values: [0]"));
  yaml = std::regex_replace(yaml, std::regex("BLOCKS_PER_SM: \\{values: \\[[^\\]]*\\]"), "BLOCKS_PER_SM: {values: [1]");
  write(tmp_ / "templates" / "gelu" / "vectorized.yaml", yaml);
  write(cfg, std::regex_replace(read(cfg), std::regex("templates: .*"), "templates: templates"));
  const auto out = tmp_ / "l.json";
  auto r = soltune("landscape " + q(cfg) + " --backend model -o " + q(out));
  ASSERT_EQ(r.code, 0) << r;
  const std::string recorded = read(out);

  // Again without --resume: refused before any work, the recording kept byte for byte.
  r = soltune("landscape " + q(cfg) + " --backend model -o " + q(out));
  expect_run(r, 2,
             {"already holds a complete landscape of gelu/vectorized/f32/n=100000 (4 of 4",
              "--force replaces it"});
  EXPECT_EQ(read(out), recorded);
  EXPECT_EQ(soltune("landscape " + q(cfg) + " --backend model -o " + q(out) + " --force").code, 0);

  // Cut short and without "legal" (as files from before partial recordings): not taken as whole.
  auto j = nlohmann::json::parse(recorded);
  j.erase("legal");
  j["results"].erase(j["results"].begin());
  write(out, j.dump(1));
  r = soltune("tune " + q(cfg) + " --backend replay --landscape " + q(out) + " --kb " + q(tmp_ / "replay.sqlite"));
  expect_run(r, 1, {"a partial landscape (3 of 4 legal configurations measured)"});
  // Whole and without "legal": still whole.
  j = nlohmann::json::parse(recorded);
  j.erase("legal");
  write(out, j.dump(1));
  r = soltune("tune " + q(cfg) + " --backend replay --landscape " + q(out) + " --kb " + q(tmp_ / "replay.sqlite"));
  EXPECT_EQ(r.code, 0) << r;
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

// A variant built for sm_90a (wgmma) beside a portable one: on an A100 it is left out with the
// reason, on stderr and in the run's notes, and the run goes on with the other variant.
TEST_F(Messages, AVariantForAnotherArchitectureIsSkippedWithTheReason) {
  const auto templates = tmp_ / "templates";
  fs::create_directories(templates);
  fs::copy(kSource / "templates" / "gelu", templates / "gelu", fs::copy_options::recursive);
  write(templates / "gelu" / "hopper.yaml", read(templates / "gelu" / "vectorized.yaml") +
                                               "source: vectorized.cu\narch: sm_90a\n");
  for (const char* gpu : {"A100", "H200"}) {
    const auto cfg = tmp_ / (std::string(gpu) + ".yaml");
    write(cfg, "problem: gelu\ndtypes: [f32]\nshapes: [{n: 1000003}]\nbudget: {evals: 8}\nseed: 5\nmodel_gpu: " +
                   std::string(gpu) + "\ntemplates: " + templates.string() + "\n");
    const auto r = soltune("tune " + q(cfg) + " --backend model --kb " + q(kb_) + " -q");
    ASSERT_EQ(r.code, 0) << r;
    const std::string why = "variant 'hopper' is built for sm_90a, which runs only on compute capability 9.0";
    if (std::string(gpu) == "A100") {
      EXPECT_NE(r.err.find(why + "; NVIDIA A100-SXM4-80GB is sm_80: its tasks are skipped"), std::string::npos) << r;
      EXPECT_EQ(r.out.find("gelu/hopper/"), std::string::npos) << r;
      const auto list = soltune("kb list --kb " + q(kb_));
      EXPECT_NE(list.out.find("run 1: " + why), std::string::npos) << list;
    } else {
      EXPECT_EQ(r.err.find(why), std::string::npos) << r;
      EXPECT_NE(r.out.find("gelu/hopper/f32/n=1000003"), std::string::npos) << r;
    }
  }
}

// Runs that cannot succeed end as failures: a variant whose first candidates all fail to compile
// stops after a few (not the whole budget) and the run exits 1 with the log; a variant never legal
// at the config's shapes leaves nothing to export, and the run exits 1 without suggesting export.
TEST_F(Messages, RunsThatCannotSucceedEndAsFailures) {
  fs::create_directories(tmp_ / "templates");
  fs::copy(kSource / "templates" / "gelu", tmp_ / "templates" / "gelu", fs::copy_options::recursive);
  const auto cu = tmp_ / "templates" / "gelu" / "vectorized.cu";
  const std::string source = read(cu);
  write(cu, source + "\n#error this template is broken\n");
  const auto cfg = tmp_ / "g.yaml";
  write(cfg, "problem: gelu\ndtypes: [f32, bf16]\nshapes: [{n: 100000}, {n: 1000003}]\nbudget: {evals: 200}\nseed: 1\n"
             "templates: templates\n");
  auto r = soltune("tune " + q(cfg) + " --backend model --kb " + q(kb_));
  expect_run(r, 1, {"failed to compile", "this template is broken"});
  {
    const auto store = KnowledgeBase::open(kb_);
    EXPECT_LE(store.results(store.runs().back().id).size(), 16u) << "stopped after its first candidates, not 200";
  }
  // Never legal here: every configuration breaks a constraint at these shapes.
  write(cu, source);
  const auto yaml = tmp_ / "templates" / "gelu" / "vectorized.yaml";
  write(yaml, std::regex_replace(read(yaml), std::regex("constraints:\n"), "constraints:\n  - n > 2000000\n"));
  r = soltune("tune " + q(cfg) + " --backend model --kb " + q(tmp_ / "b.sqlite"));
  expect_run(r, 1, {"found a valid configuration"});
  EXPECT_EQ(r.out.find("soltune export"), std::string::npos) << r;
}

// The model backend runs nothing, so it cannot check a kernel: the summary says so per task, and an
// export of predictions says so per kernel in the header and once on stderr.
TEST_F(Messages, PredictedKernelsSayTheirCorrectnessWasNotChecked) {
  auto r = soltune("tune " + q(config()) + " --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  const auto out = std::regex_replace(r.out, std::regex("\n +"), " ");  // lines wrapped at 120 columns
  EXPECT_NE(out.find("correctness not checked: predicted"), std::string::npos) << r;
  const auto header = tmp_ / "gelu.cuh";
  r = soltune("export --kb " + q(kb_) + " --problem gelu --allow-predicted -o " + q(header));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.err.find("their correctness was never checked"), std::string::npos) << r;
  const auto text = read(header);
  size_t kernels = 0, said = 0;
  for (size_t at = text.find("knobs: "); at != std::string::npos; at = text.find("knobs: ", at + 1)) ++kernels;
  for (size_t at = text.find("correctness NOT checked"); at != std::string::npos; at = text.find("correctness NOT checked", at + 1)) ++said;
  EXPECT_GT(kernels, 0u);
  EXPECT_EQ(said, kernels);
}

// Paths the system refuses (a loop of links, a name too long, a folder where a file belongs) are the
// user's to fix: a clear error naming the path and the cause, exit 1, never an internal error.
TEST_F(Messages, PathsTheSystemRefusesAreClearErrors) {
  fs::create_symlink("loop1", tmp_ / "loop2");
  fs::create_symlink("loop2", tmp_ / "loop1");
  const auto cfg = tmp_ / "loop.yaml";
  write(cfg, "problem: gelu\nshapes: [{n: 10}]\nbudget: {evals: 2}\ntemplates: loop1\n");
  const std::string longname(300, 'p');
  fs::create_directories(tmp_ / "folder");
  ASSERT_EQ(tune_gelu(2).code, 0);
  for (const auto& [args, path, cause] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"tune " + q(cfg) + " --backend model", "loop1", "Too many levels of symbolic links"},
           {"export --kb " + q(kb_) + " --problem " + longname + " -o x.cuh", longname, "File name too long"},
           {"landscape " + q(config()) + " --backend model -o loop1", "loop1", "Too many levels of symbolic links"},
           {"bench-search --landscape folder", "folder", "is a folder"}}) {
    const auto r = soltune(args);
    EXPECT_EQ(r.code, 1) << args << r;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r;
    EXPECT_NE(r.err.find(path), std::string::npos) << r;
    EXPECT_NE(r.err.find(cause), std::string::npos) << r;
  }
}

// A time budget holds with compiles in flight: a variant whose configurations take NVRTC seconds
// (2000 unrolled steps; U = 1, the one the kernel-signature check compiles, does not), a 3-s budget
// and a cold cache. Compiles still running at the budget's end are stopped, not waited for: the run
// ends soon after its budget (5 s of slack for the support kernels' compiles on a loaded machine).
TEST_F(Messages, ATimeBudgetHoldsWhileCompilesAreInFlight) {
  fs::copy(kSource / "templates", tmp_ / "templates", fs::copy_options::recursive);
  const auto dir = tmp_ / "templates" / "gelu";
  test::remove_fallback(dir);  // the slow variant alone
  write(dir / "slow.cu", "template <typename T, int U>\n__global__ void slow(const T* x, T* y, long long n) {\n"
                         "  float a = x[threadIdx.x], b = x[threadIdx.x + 32];\n#pragma unroll\n"
                         "  for (int i = 0; i < U; ++i) { a = fmaf(a, b, x[(i * 7) & 1023]); b = __sinf(a) + b * x[(i * 13) & 1023]; }\n"
                         "  y[threadIdx.x] = a + b;\n}\n");
  write(dir / "slow.yaml", "kernel: slow\ntemplate_args: [T, U]\nknobs: {U: [1, 2000, 1999, 1998, 1997, 1996, 1995]}\n"
                           "dtypes: [f32]\nlaunch: {grid: \"cdiv(n, 256)\", block: 256}\n");
  const auto cfg = tmp_ / "slow.yaml";
  write(cfg, "problem: gelu\nvariants: [slow]\ndtypes: [f32]\nshapes: [{n: 1048576}]\nbudget: {seconds: 3}\n"
             "backend: model\ntemplates: templates\n");
  const auto began = std::chrono::steady_clock::now();
  const auto r = soltune_within("tune " + q(cfg) + " --kb " + q(kb_) + " -q", 120);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_TRUE(r.code == 0 || r.err.find("found a valid configuration") != std::string::npos) << r;
  EXPECT_LE(wall, 8.0) << r;
}

}  // namespace
}  // namespace soltune
