// Tensor maps through the real `soltune`, without a GPU (the model backend): a configuration whose map
// the driver would refuse is a result like any other, `illegal` with the map and the rule in its log,
// on the progress line and in the knowledge base; the run goes on and finishes. The export of what
// was tuned encodes the maps at each call, in a header nvcc compiles and a JSON that names them.
#include <nlohmann/json.hpp>

#include <map>

#include "../support/tma_variants.hpp"
#include "cli_fixture.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {
namespace {

class TensorMapCli : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    fs::create_directories(tmp_ / "templates");
    test::copy_tma_problems(tmp_ / "templates");
  }
  // A model-backend tune of CONFIG's text (templates: the copy) into kb_.
  Result tune(const std::string& config) const {
    write(tmp_ / "c.yaml", config + "backend: model\nseed: 3\ntemplates: " + (tmp_ / "templates").string() + "\n");
    return soltune("tune " + q(tmp_ / "c.yaml") + " --kb " + q(kb_));
  }
};

TEST_F(TensorMapCli, IllegalMapsAreRecordedWithTheirReasonAndTheRunFinishes) {
  // 2 configurations per task, 6 tasks: every configuration is evaluated.
  auto r = tune("problem: matmul\nvariants: [tma_a]\ndtypes: [bf16, f32]\nbudget: {evals: 24}\n"
                "shapes: [{m: 256, n: 192, k: 1792}, {m: 256, n: 192, k: 1793}, {m: 256, n: 192, k: 1796}]\n");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("illegal: tensor map 'ta' over 'a': the stride of dimension 1 is 3586 bytes"), std::string::npos) << r;
  r = tune("problem: gelu\nvariants: [tma]\ndtypes: [bf16]\nbudget: {evals: 6}\nshapes: [{n: 1000008}]\n");
  ASSERT_EQ(r.code, 0) << r;

  auto kb = KnowledgeBase::open(kb_);
  const auto runs = kb.runs();
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& run : runs) EXPECT_EQ(run.status, "finished");
  std::map<std::string, std::string> status;  // "dtype shape config" -> status: log
  for (const auto& run : runs)
    for (const auto& x : kb.results(run.id)) status[x.dtype + " " + x.shape_key + " " + x.config_key] = x.status + ": " + x.log;
  // And each run's fallback (matmul's tiled, gelu's vectorized), once per dtype at the smallest shape,
  // matmul's in both layouts (tiled compiles trans_b in).
  EXPECT_EQ(status.size(), 20u);
  for (const char* dtype : {"bf16", "f32"})
    for (const char* bm : {"16", "32"}) {
      const std::string at = std::string(dtype) + " m=256,n=192,k=";
      const std::string cfg = std::string(",trans_b=0 BM=") + bm + ",BK=32";
      EXPECT_EQ(status[at + "1792" + cfg].rfind("ok: ", 0), 0u) << status[at + "1792" + cfg];
      const std::string stride = std::string(dtype) == "bf16" ? "3586" : "7172";
      EXPECT_EQ(status[at + "1793" + cfg].rfind("illegal: tensor map 'ta' over 'a': the stride of dimension 1 is " + stride +
                                                " bytes, not a multiple of 16", 0), 0u)
          << status[at + "1793" + cfg];
    }
  EXPECT_EQ(status["f32 m=256,n=192,k=1796,trans_b=0 BM=16,BK=32"].rfind("ok: ", 0), 0u);
  const auto& bf16_1796 = status["bf16 m=256,n=192,k=1796,trans_b=0 BM=16,BK=32"];
  EXPECT_EQ(bf16_1796.rfind("illegal: tensor map 'ta' over 'a': the stride of dimension 1 is 3592 bytes", 0), 0u) << bf16_1796;
  const auto& box = status["bf16 n=1000008 BOX=512"];
  EXPECT_EQ(box.rfind("illegal: tensor map 'tx' over 'x': box dimension 0 is 512 elements; TMA takes 1 to 256", 0), 0u) << box;
  EXPECT_EQ(status["bf16 n=1000008 BOX=256"].rfind("ok: ", 0), 0u) << status["bf16 n=1000008 BOX=256"];
}

TEST_F(TensorMapCli, TheExportEncodesTheMapsAndCompilesWithNvcc) {
  // 3 evaluations: the tuned task's, and the fallback's in each layout.
  ASSERT_EQ(tune("problem: matmul\nvariants: [tma_a]\ndtypes: [bf16]\nbudget: {evals: 3}\nshapes: [{m: 256, n: 192, k: 1792}]\n").code, 0);
  const auto header = tmp_ / "matmul.cuh";
  const std::string common = "export --kb " + q(kb_) + " --problem matmul --templates " + q(tmp_ / "templates") + " --allow-predicted";
  auto r = soltune(common + " -o " + q(header));
  ASSERT_EQ(r.code, 0) << r;
  // The fallback in both layouts, though the run tuned NN only (its NT run is also the only kernel
  // measured at that shape, hence a specialization there too).
  EXPECT_NE(r.out.find("2 specialization(s) and 2 fallback(s)"), std::string::npos) << r;
  const auto text = read(header);
  EXPECT_NE(text.find("#include <cudaTypedefs.h>"), std::string::npos);
  EXPECT_NE(text.find("detail::encode_tensor_map(tensor_map_ta_, p.maps[0], a)"), std::string::npos);
  EXPECT_NE(text.find("cudaLibraryLoadData"), std::string::npos) << "the timed cubin travels with the header";

  r = soltune(common + " --format json -o " + q(tmp_ / "matmul.json"));
  ASSERT_EQ(r.code, 0) << r;
  const auto j = nlohmann::json::parse(read(tmp_ / "matmul.json"));
  const auto& ta = j["variants"]["tma_a"]["tensor_maps"]["ta"];
  EXPECT_EQ(ta["buffer"], "a");
  EXPECT_EQ(ta["dims"], (nlohmann::json{"k", "m"}));
  EXPECT_EQ(ta["box"], (nlohmann::json{"BK", "BM"}));
  EXPECT_EQ(ta["strides"], (nlohmann::json{"(k)"}));  // row-major: a row of A is k elements
  EXPECT_EQ(ta["swizzle"], "none");
  EXPECT_EQ(j["variants"]["tma_a"]["args"], (nlohmann::json{"ta", "b", "c", "m", "n", "k"}));

  const auto nvcc = test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc: neither $CUDA_HOME/bin/nvcc nor /usr/local/cuda/bin/nvcc exists";
  write(tmp_ / "use.cu", R"SRC(#include <cstdio>

#include "matmul.cuh"
// The caller passes pointers; the header makes the map. Compiled only (no GPU here).
cudaError_t run(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, long long m, long long n, long long k) {
  return soltune_matmul::matmul_bf16(a, b, c, m, n, k, 0);
}
// Which plan serves a shape on an H200 (host code only): the source of the choice, -1 for none.
int source(double m, double n, double k, double tb) {
  soltune_matmul::matmul_bf16_plan p;
  return soltune_matmul::matmul_bf16_choice(m, n, k, tb, 132, 90, 232448, 52428800, &p) >= 0 ? p.source : -1;
}
int main() {
  std::printf("%d %d %d\n", source(256, 192, 1792, 0), source(1000, 999, 77, 0), source(1000, 999, 77, 1));
  return 0;
}
)SRC");
  const auto c = shell("cd " + q(tmp_) + " && " + q(nvcc) + " -std=c++17 -arch=sm_90 use.cu -o use >" +
                       q(tmp_ / "stdout.txt") + " 2>" + q(tmp_ / "stderr.txt"));
  ASSERT_EQ(c.code, 0) << c;
  // Tuned at its shape; at odd shapes the fallback (NN), or the NT run's kernel, the nearest tuned
  // one there (NT).
  const auto u = shell(q(tmp_ / "use") + " >" + q(tmp_ / "stdout.txt") + " 2>" + q(tmp_ / "stderr.txt"));
  EXPECT_EQ(u.out, "0 2 1\n") << u;
}

}  // namespace
}  // namespace soltune
