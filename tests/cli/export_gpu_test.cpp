// GPU test (label gpu): the path a user takes, end to end. A short real tune of GELU, an export,
// and the header built by nvcc into tests/export/gelu_export_check.cu, which checks both launch
// functions against a double-precision reference on fresh inputs at tuned and untuned sizes: once
// launching the embedded cubins soltune timed, once with SOLTUNE_SOURCE_ONLY (kernels from source);
// the same for a variant whose kernels take tensor maps, and for matmul's tensor-core GEMM in both
// layouts through a split-K plan of two launches and its scratch.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>

#include "../eval/gpu_fixture.hpp"
#include "../support/files.hpp"
#include "../support/macro_variants.hpp"
#include "../support/npy.hpp"
#include "../support/tma_variants.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

using test::q;
using test::run;

// For the sweeps' drawn sizes (tests/export/check_common.cuh has the device programs' own).
bool is_prime(long long v) {
  for (long long d = 2; d * d <= v; ++d)
    if (v % d == 0) return false;
  return v > 1;
}

// Every test: a device, nvcc, a fresh folder, and the soltune binary that tunes and exports there.
class ExportGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SOLTUNE_REQUIRE_GPU();
    if (test::nvcc_path().empty()) GTEST_SKIP() << "no nvcc: neither $CUDA_HOME/bin/nvcc nor /usr/local/cuda/bin/nvcc exists";
    dev = cuda_devices().devices.front();
  }

  // " > tmp/log.txt 2>&1": every command's output lands in the log shown when it fails.
  std::string log() const { return " > " + q(tmp / "log.txt") + " 2>&1"; }
  std::string log_text() const { return test::read_file(tmp / "log.txt"); }
  std::string arch() const { return "sm_" + std::to_string(dev.cc_major) + std::to_string(dev.cc_minor); }

  // Copies templates/<problem> for each of `problems` to tmp/templates, for a test to edit.
  void copy_templates(std::initializer_list<const char*> problems) const {
    fs::create_directories(tmp / "templates");
    for (const char* p : problems) fs::copy(src / "templates" / p, tmp / "templates" / p, fs::copy_options::recursive);
  }

  // tmp/<name>: `body` (problem, shapes, budget, seed) run on the GPU with the templates in `templates`.
  void write_config(const std::string& name, const std::string& body, const fs::path& templates) const {
    test::write_file(tmp / name, body + "backend: cuda\ntemplates: " + templates.string() + "\n");
  }

  // `soltune tune tmp/<config>` into tmp/kb.sqlite (callers wrap it in ASSERT_NO_FATAL_FAILURE).
  void tune(const std::string& config) const {
    ASSERT_EQ(run(bin + " tune " + q(tmp / config) + " --kb " + q(tmp / "kb.sqlite") + " -q" + log()), 0) << log_text();
  }

  // `soltune export` of `problem` from tmp/kb.sqlite to `header`.
  void export_header(const std::string& problem, const fs::path& templates, const fs::path& header) const {
    ASSERT_EQ(run(bin + " export --kb " + q(tmp / "kb.sqlite") + " --problem " + problem + " --templates " + q(templates) +
                  " -o " + q(header) + log()), 0)
        << log_text();
  }

  // Builds tests/export/<check> with nvcc against the exported header twice, launching the embedded
  // cubins soltune timed and then (SOLTUNE_SOURCE_ONLY) the kernels compiled from source, and runs
  // it with `args` (sizes, tuned and not): every check must pass, both ways.
  void expect_checks_pass(const fs::path& header, const std::string& check, const std::string& args) const {
    for (const std::string def : {"", " -DSOLTUNE_SOURCE_ONLY"}) {
      ASSERT_EQ(run(q(test::nvcc_path()) + " -std=c++17 -O2 -arch=" + arch() + def + " -DEXPORTED='\"" + header.string() +
                    "\"' " + q(src / "tests" / "export" / check) + " -o " + q(tmp / "check") + log()), 0)
          << def << "\n" << log_text();
      EXPECT_EQ(run(q(tmp / "check") + " " + args + log()), 0) << def << "\n" << log_text();
      EXPECT_NE(log_text().find("all checks passed"), std::string::npos) << def << "\n" << log_text();
    }
  }

  // A problem tuned at two shapes (`shapes`, one small and one large), exported, and called through
  // the header at the 30 shapes of `check` (tests/export/rows_sweep_check.cu for problems over
  // [rows, cols], flat_sweep_check.cu for those over [n]) plus `extra`, f32 and bf16, against a
  // double-precision reference: every shape is served (by its tuned kernel, the nearest one whose
  // constraints hold, or the fallback) and correct.
  void expect_sweep_served(const std::string& problem, const std::string& shapes, const std::string& check,
                           const std::string& macro, const std::string& extra) const;

  DeviceInfo dev;
  test::TempDir tmp_dir{"export-gpu"};
  const fs::path tmp = tmp_dir.path(), src = test::source_dir();
  const std::string bin = q(test::soltune_binary());
};

TEST_F(ExportGpu, ExportedKernelsAreCorrectFromTheTimedBinaryAndFromSource) {
  write_config("gelu.yaml", "problem: gelu\ndtypes: [f32, bf16]\nshapes:\n  - {n: 1048576}\n"
                            "budget: {evals: 12, seconds: 120}\nseed: 3\n", src / "templates");
  ASSERT_NO_FATAL_FAILURE(tune("gelu.yaml"));
  ASSERT_NO_FATAL_FAILURE(export_header("gelu", src / "templates", tmp / "gelu.cuh"));
  const auto header = test::read_file(tmp / "gelu.cuh");
  EXPECT_NE(header.find("cudaLibraryLoadData"), std::string::npos) << "the export should carry the timed cubins";
  expect_checks_pass(tmp / "gelu.cuh", "gelu_export_check.cu", "1048576 1000003 12345 1");
}

// The same path for kernels that take tensor maps (a GELU copy whose one variant moves x and y by
// TMA): the exported header encodes the maps from the caller's pointers at every call.
TEST_F(ExportGpu, ExportedTensorMapKernelsAreCorrectFromTheTimedBinaryAndFromSource) {
  if (dev.cc() < 90) GTEST_SKIP() << "tensor maps need compute capability 9.0; " << dev.name << " is " << dev.arch();
  copy_templates({"gelu", "common"});
  test::add_tma_gelu(tmp / "templates" / "gelu");
  // Without the fallback's task, whose kernel may beat tma at the one shape and be exported instead.
  test::remove_fallback(tmp / "templates" / "gelu");
  write_config("gelu.yaml", "problem: gelu\nvariants: [tma]\ndtypes: [f32, bf16]\nshapes:\n  - {n: 1048576}\n"
                            "budget: {evals: 6, seconds: 120}\nseed: 3\n", tmp / "templates");
  ASSERT_NO_FATAL_FAILURE(tune("gelu.yaml"));
  ASSERT_NO_FATAL_FAILURE(export_header("gelu", tmp / "templates", tmp / "gelu.cuh"));
  const auto header = test::read_file(tmp / "gelu.cuh");
  EXPECT_NE(header.find("detail::encode_tensor_map(tensor_map_tx_, p.maps[0], x)"), std::string::npos);
  expect_checks_pass(tmp / "gelu.cuh", "gelu_export_check.cu", "1048576 1000008 12344 8");
}

// The same path for a kernel written as a macro program (knobs as -D definitions): tuned at two
// sizes on the GPU, exported with one copy of its source per set of definitions, and called from
// the header at tuned and untuned sizes.
TEST_F(ExportGpu, ExportedMacroKernelsAreCorrectFromTheTimedBinaryAndFromSource) {
  copy_templates({"gelu"});
  test::add_macro_gelu(tmp / "templates" / "gelu");
  test::remove_fallback(tmp / "templates" / "gelu");  // macro's kernels alone are measured and exported
  write_config("gelu.yaml", "problem: gelu\nvariants: [macro]\ndtypes: [f32, bf16]\nshapes:\n  - {n: 1048576}\n"
                            "  - {n: 4099}\nbudget: {evals: 24, seconds: 120}\nseed: 3\n", tmp / "templates");
  ASSERT_NO_FATAL_FAILURE(tune("gelu.yaml"));
  ASSERT_NO_FATAL_FAILURE(export_header("gelu", tmp / "templates", tmp / "gelu.cuh"));
  EXPECT_NE(test::read_file(tmp / "gelu.cuh").find("namespace v_macro_"), std::string::npos);
  expect_checks_pass(tmp / "gelu.cuh", "gelu_export_check.cu", "1048576 4099 1000003 12345 1");
}

// The shipped pnpoly (a macro program with the polygon in constant memory, float2 points and an int
// output) tuned on the GPU with its polygon read from a .npy file, beside two copies that answer
// wrong: one flips every 1000th point's answer, one leaves the last point unwritten. Each of theirs
// is a wrong_answer; the right kernel's results pass, and its export, called with a polygon from
// host and from device memory, agrees with a double-precision test at tuned and untuned sizes.
TEST_F(ExportGpu, ExportedConstantMemoryKernelWithAnIntegerOutputIsCorrect) {
  const fs::path dir = tmp / "templates" / "pnpoly";
  copy_templates({"pnpoly"});
  const auto edited = test::pnpoly_vertices_from_file(test::read_file(dir / "problem.yaml"));
  ASSERT_FALSE(edited.empty());
  test::write_file(dir / "problem.yaml", edited);
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> poly(1200);
  for (auto& x : poly) x = u(gen);
  ASSERT_TRUE(test::write_npy(dir / "polygon.npy", poly, "<f4", "(600, 2)"));
  const auto cu = test::read_file(dir / "crossing.cu");
  const std::string store = "if (i < n) inside[i] = c[k];";
  ASSERT_NE(cu.find(store), std::string::npos);
  for (const auto& [name, wrong] : {std::pair<std::string, std::string>{"flipped", "if (i < n) inside[i] = c[k] ^ (i % 1000 == 0);"},
                                    {"tail", "if (i < n - 1) inside[i] = c[k];"}}) {
    test::write_file(dir / (name + ".cu"), std::string(cu).replace(cu.find(store), store.size(), wrong));
    test::write_file(dir / (name + ".yaml"), test::read_file(dir / "crossing.yaml"));
  }
  write_config("pnpoly.yaml", "problem: pnpoly\nshapes:\n  - {n: 1048576, nv: 600}\n"
                              "budget: {evals: 18, seconds: 150}\nseed: 3\n", tmp / "templates");
  ASSERT_NO_FATAL_FAILURE(tune("pnpoly.yaml"));
  ASSERT_EQ(run(bin + " kb show 1 --kb " + q(tmp / "kb.sqlite") + " --json > " + q(tmp / "run.json")), 0);
  int right = 0, caught = 0;
  const auto run_json = nlohmann::json::parse(test::read_file(tmp / "run.json"));
  ASSERT_FALSE(run_json["results"].empty());
  for (const auto& r : run_json["results"]) {
    const std::string variant = r["variant"], status = r["status"];
    if (variant == "crossing") {
      EXPECT_TRUE(status == "ok" || status == "slow") << r.dump();
      right += status == "ok";
    } else {
      EXPECT_EQ(status, "wrong_answer") << r.dump();
      caught += status == "wrong_answer";
    }
  }
  EXPECT_GT(right, 0);
  EXPECT_GT(caught, 0);
  ASSERT_NO_FATAL_FAILURE(export_header("pnpoly", tmp / "templates", tmp / "pnpoly.cuh"));
  // The tuned count and one point, then 30 point counts drawn once (1 to 2^22, log-uniform; primes, multiples of 8,
  // powers of two and one past them), each against the double-precision CPU test.
  std::mt19937_64 draw(20261204);
  std::uniform_real_distribution<double> lg(0.0, 22.0);
  std::string counts = "1048576 1";
  for (int i = 0; i < 30; ++i) {
    long long v = std::max(1LL, static_cast<long long>(std::exp2(lg(draw))));
    if (i % 4 == 1) while (!is_prime(v)) ++v;
    if (i % 4 == 2) v = (v + 7) / 8 * 8;
    if (i % 4 == 3) v = (1LL << (v % 22)) + (i % 8 == 3);
    counts += " " + std::to_string(v);
  }
  expect_checks_pass(tmp / "pnpoly.cuh", "pnpoly_export_check.cu", counts);
}

// The exported GEMM: mma_sync restricted to split-K in two (a plan of two launches through f32
// scratch), tuned at 1000^3 in both layouts, called at tuned and untuned shapes through
// tests/export/matmul_export_check.cu and checked against a double-precision reference.
TEST_F(ExportGpu, ExportedSplitKGemmIsCorrectInBothLayouts) {
  if (dev.cc() < 80) GTEST_SKIP() << "mma.sync bf16 needs compute capability 8.0; " << dev.name << " is " << dev.arch();
  copy_templates({"matmul", "common"});
  const auto yaml = tmp / "templates" / "matmul" / "mma_sync.yaml";
  auto text = test::read_file(yaml);
  const auto at = text.find("SPLITK: {values: [1, 2, 3, 4]");
  ASSERT_NE(at, std::string::npos) << "mma_sync.yaml no longer lists SPLITK's values as this test expects";
  text.replace(at, 29, "SPLITK: {values: [2]");
  test::write_file(yaml, text);
  write_config("gemm.yaml", "problem: matmul\nvariants: [mma_sync]\ndtypes: [bf16]\nshapes:\n"
                            "  - {m: 1000, n: 1000, k: 1000}\n  - {m: 1000, n: 1000, k: 1000, trans_b: 1}\n"
                            "budget: {evals: 8, seconds: 300}\nseed: 3\n", tmp / "templates");
  ASSERT_NO_FATAL_FAILURE(tune("gemm.yaml"));
  ASSERT_NO_FATAL_FAILURE(export_header("matmul", tmp / "templates", tmp / "matmul.cuh"));
  const auto header = test::read_file(tmp / "matmul.cuh");
  EXPECT_NE(header.find("matmul_bf16_scratch_bytes"), std::string::npos);
  EXPECT_NE(header.find("matmul_splitk_reduce"), std::string::npos);
  expect_checks_pass(tmp / "matmul.cuh", "matmul_export_check.cu",
                     "1000,1000,1000,0 1000,1000,1000,1 77,131,4100,0 77,131,4100,1 1,1,2048,0 520,264,1032,1");
}

// The shipped matmul (every variant, the fallback among them) tuned in bf16 at two shapes, exported,
// and called at 30 shapes drawn once from a fixed seed (1 to 2^13 per dimension, m * n * k at most
// 2^33 so that the double-precision reference stays quick; both layouts, primes, 1 x N and N x 1
// outputs) with and without scratch, against the contraction band.
TEST_F(ExportGpu, ExportedMatmulServesEveryShapeOfTheSweep) {
  write_config("gemm.yaml", "problem: matmul\ndtypes: [bf16]\nshapes:\n  - {m: 1000, n: 1000, k: 1000}\n"
                            "  - {m: 2048, n: 2048, k: 2048, trans_b: 1}\nbudget: {evals: 24, seconds: 90}\n"
                            "seed: 5\n", src / "templates");
  ASSERT_NO_FATAL_FAILURE(tune("gemm.yaml"));
  ASSERT_NO_FATAL_FAILURE(export_header("matmul", src / "templates", tmp / "matmul.cuh"));
  std::mt19937_64 gen(20261204);
  std::uniform_real_distribution<double> lg(0.0, 13.0);
  auto draw = [&] { return std::max(1LL, static_cast<long long>(std::exp2(lg(gen)))); };
  std::string shapes;
  for (int i = 0; i < 30; ++i) {
    long long m = draw(), n = draw(), k = draw();
    if (i % 5 == 1) m = 1;                                     // one output row
    if (i % 5 == 2) n = 1;                                     // one output column
    if (i % 5 == 3) for (long long* d : {&m, &n, &k}) while (!is_prime(*d)) ++*d;
    if (i % 5 == 4) for (long long* d : {&m, &n, &k}) *d = (*d + 7) / 8 * 8;
    while (m * n * k > (1LL << 33)) k = std::max(1LL, k / 2);
    shapes += " " + std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) + "," + std::to_string(i % 2);
  }
  expect_checks_pass(tmp / "matmul.cuh", "matmul_export_check.cu", shapes.substr(1));
}

void ExportGpu::expect_sweep_served(const std::string& problem, const std::string& shapes, const std::string& check,
                                    const std::string& macro, const std::string& extra) const {
  write_config("sweep.yaml", "problem: " + problem + "\ndtypes: [f32, bf16]\nshapes:\n" + shapes +
                                 "budget: {evals: 40, seconds: 90}\nseed: 5\n", src / "templates");
  const fs::path header = tmp / (problem + ".cuh");
  ASSERT_NO_FATAL_FAILURE(tune("sweep.yaml"));
  ASSERT_NO_FATAL_FAILURE(export_header(problem, src / "templates", header));
  EXPECT_NE(log_text().find("fallback, measured at"), std::string::npos) << log_text();
  ASSERT_EQ(run(q(test::nvcc_path()) + " -std=c++17 -O2 -arch=" + arch() + " -D" + macro + " -DEXPORTED='\"" +
                header.string() + "\"' " + q(src / "tests" / "export" / check) + " -o " + q(tmp / "check") + log()), 0)
      << log_text();
  const int rc = run(q(tmp / "check") + " " + extra + log());
  const auto out = log_text();
  std::printf("%s", out.c_str());  // the sweep's table: which kernel served each shape, and its time
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("all checks passed"), std::string::npos) << out;
}

const char* const kRowShapes = "  - {rows: 64, cols: 1000}\n  - {rows: 32, cols: 131072}\n";
const char* const kFlatShapes = "  - {n: 1000}\n  - {n: 16777216}\n";

TEST_F(ExportGpu, ExportedGeluServesEverySizeOfTheSweep) {
  expect_sweep_served("gelu", kFlatShapes, "flat_sweep_check.cu", "SWEEP_GELU", "268435456");
}

TEST_F(ExportGpu, ExportedL1NormServesEverySizeOfTheSweep) {
  expect_sweep_served("l1norm", kFlatShapes, "flat_sweep_check.cu", "SWEEP_L1NORM", "268435456");
}

TEST_F(ExportGpu, ExportedSoftmaxServesEveryShapeOfTheSweep) {
  expect_sweep_served("softmax", kRowShapes, "rows_sweep_check.cu", "SWEEP_SOFTMAX", "1x1048576 8x262144 32x131072 4x4194304");
}

TEST_F(ExportGpu, ExportedLayerNormServesEveryShapeOfTheSweep) {
  expect_sweep_served("layernorm", kRowShapes, "rows_sweep_check.cu", "SWEEP_LAYERNORM", "1x1048576 8x262144 32x131072");
}

TEST_F(ExportGpu, ExportedRMSNormServesEveryShapeOfTheSweep) {
  expect_sweep_served("rmsnorm", kRowShapes, "rows_sweep_check.cu", "SWEEP_RMSNORM", "1x1048576 8x262144 32x131072");
}

}  // namespace
}  // namespace soltune
