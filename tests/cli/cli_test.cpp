// The `soltune` binary end to end, on a machine without a GPU: a model-backend tune recorded in a
// knowledge base, an export whose header nvcc compiles, and bad input refused with useful errors.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "kb/knowledge_base.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

const fs::path kSoltune = SOLTUNE_BINARY_DIR "/src/cli/soltune";
const fs::path kSource = SOLTUNE_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

struct Result {
  int code = -1;
  std::string out, err;
};

std::ostream& operator<<(std::ostream& o, const Result& r) {
  return o << "exit " << r.code << "\n--- stdout:\n" << r.out << "\n--- stderr:\n" << r.err;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kSoltune)) << kSoltune;
    std::string t = (fs::temp_directory_path() / "soltune-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    tmp_ = t;
    // A compile cache of this test's own: no effects across tests, or from earlier runs.
    ASSERT_EQ(setenv("SOLTUNE_CACHE_DIR", (tmp_ / "cache").c_str(), 1), 0);
    kb_ = tmp_ / "kb.sqlite";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  // Runs `soltune ARGS` in the temp folder; stdout and stderr captured separately.
  Result soltune(const std::string& args) const {
    const std::string cmd = "cd " + q(tmp_) + " && " + q(kSoltune) + " " + args + " >" + q(tmp_ / "stdout.txt") +
                            " 2>" + q(tmp_ / "stderr.txt");
    return shell(cmd);
  }
  Result shell(const std::string& cmd) const {
    Result r;
    const int st = std::system(cmd.c_str());
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = read(tmp_ / "stdout.txt");
    r.err = read(tmp_ / "stderr.txt");
    return r;
  }

  // A model-backend tune of configs/gelu.yaml (4 tasks) into kb_.
  Result tune_gelu(int evals = 16) const {
    return soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals " +
                   std::to_string(evals) + " --kb " + q(kb_));
  }

  fs::path tmp_, kb_;
};

TEST_F(Cli, ModelBackendTuneEndToEnd) {
  const auto r = tune_gelu();
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("backend model"), std::string::npos) << r;
  EXPECT_NE(r.out.find("prediction"), std::string::npos) << r;
  EXPECT_NE(r.out.find("(predicted)"), std::string::npos) << r;
  EXPECT_NE(r.out.find("summary"), std::string::npos) << r;
  for (const char* id : {"gelu/vectorized/f32/n=268435456", "gelu/vectorized/bf16/n=1000003"})
    EXPECT_NE(r.out.find(id), std::string::npos) << id << "\n" << r;
  ASSERT_TRUE(fs::exists(kb_));

  auto kb = KnowledgeBase::open(kb_);
  const auto runs = kb.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_EQ(runs[0].info.problem, "gelu");
  EXPECT_EQ(runs[0].info.backend, "model");
  EXPECT_EQ(runs[0].info.seed, 42u);
  const auto results = kb.results(runs[0].id);
  ASSERT_EQ(results.size(), 16u);
  std::map<std::string, int> per_task;
  int ok = 0;
  for (const auto& x : results) {
    EXPECT_EQ(x.time_kind, "predicted") << x.config_key;
    EXPECT_EQ(x.problem, "gelu");
    EXPECT_EQ(x.gpu_name, "NVIDIA H200");
    ++per_task[x.dtype + "/" + x.shape_key];
    if (x.status == "ok") {
      ++ok;
      EXPECT_GT(x.time_us, 0) << x.config_key;
      EXPECT_GT(x.res.registers, 0) << x.config_key;  // from the real ptxas report
    }
  }
  EXPECT_EQ(per_task, (std::map<std::string, int>{{"bf16/n=1000003", 4},
                                                  {"bf16/n=268435456", 4},
                                                  {"f32/n=1000003", 4},
                                                  {"f32/n=268435456", 4}}));
  EXPECT_GT(ok, 0);
  const auto gpus = kb.gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].kind, TimeKind::predicted);
  EXPECT_EQ(kb.baselines(runs[0].id).size(), 4u);
  const auto best = kb.best("gelu");
  EXPECT_FALSE(best.empty());
  for (const auto& b : best) EXPECT_EQ(b.time_kind, "predicted");
}

TEST_F(Cli, SecondRunAddsOnlyNewConfigurations) {
  ASSERT_EQ(tune_gelu(8).code, 0);
  const auto r = tune_gelu(8);
  ASSERT_EQ(r.code, 0) << r;
  auto kb = KnowledgeBase::open(kb_);
  const auto runs = kb.runs();
  ASSERT_EQ(runs.size(), 2u);
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const auto& run : runs) {
    const auto results = kb.results(run.id);
    EXPECT_EQ(results.size(), 8u);
    for (const auto& x : results)
      EXPECT_TRUE(seen.emplace(x.dtype, x.shape_key, x.config_key).second)
          << "evaluated again: " << x.dtype << " " << x.shape_key << " " << x.config_key;
  }
}

TEST_F(Cli, ExportWritesAHeader) {
  ASSERT_EQ(tune_gelu().code, 0);
  const auto out = tmp_ / "gelu.cuh";
  // Only predictions in the knowledge base: refused unless asked for.
  auto r = soltune("export --kb " + q(kb_) + " --problem gelu -o " + q(out));
  EXPECT_NE(r.code, 0) << r;
  EXPECT_NE(r.err.find("--allow-predicted"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(out));

  r = soltune("export --kb " + q(kb_) + " --problem gelu -o " + q(out) + " --allow-predicted");
  ASSERT_EQ(r.code, 0) << r;
  ASSERT_TRUE(fs::exists(out));
  EXPECT_NE(r.out.find("2 specialization"), std::string::npos) << r;
  const auto h = read(out);
  for (const char* s : {"#pragma once", "namespace soltune_gelu", "inline cudaError_t gelu_f32(",
                        "inline cudaError_t gelu_bf16(", "gelu_f32_can_implement(", "gelu_bf16_can_implement(",
                        "gelu_tanh<float,", "gelu_tanh<__nv_bfloat16,", "predicted"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
  EXPECT_FALSE(fs::exists(tmp_ / "gelu.cuh.tmp"));

  // The export of an unknown problem is an error that names it.
  r = soltune("export --kb " + q(kb_) + " --problem gelux -o " + q(tmp_ / "x.cuh") + " --allow-predicted");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("gelux"), std::string::npos) << r;
}

fs::path find_nvcc() {
  if (const char* home = std::getenv("CUDA_HOME"); home && *home && fs::exists(fs::path(home) / "bin" / "nvcc"))
    return fs::path(home) / "bin" / "nvcc";
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return {};
}

TEST_F(Cli, ExportedHeaderCompilesWithNvcc) {
  const auto nvcc = find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc: neither $CUDA_HOME/bin/nvcc nor /usr/local/cuda/bin/nvcc exists";
  ASSERT_EQ(tune_gelu().code, 0);
  const auto header = tmp_ / "gelu.cuh";
  const auto r = soltune("export --kb " + q(kb_) + " --problem gelu -o " + q(header) + " --allow-predicted");
  ASSERT_EQ(r.code, 0) << r;
  write(tmp_ / "use_gelu.cu", R"(#include "gelu.cuh"
#include <cuda_bf16.h>

// Calls every function the header promises; compiled only (no GPU here).
int run_all(float* xf, float* yf, __nv_bfloat16* xb, __nv_bfloat16* yb, long long n, cudaStream_t s) {
  cudaError_t a = soltune_gelu::gelu_f32(xf, yf, n);
  cudaError_t b = soltune_gelu::gelu_bf16(xb, yb, n, s);
  const bool f = soltune_gelu::gelu_f32_can_implement(n, 132, 90, 232448, 52428800);
  const bool g = soltune_gelu::gelu_bf16_can_implement(n, 132, 90, 232448, 52428800);
  return (a == cudaSuccess) + (b == cudaSuccess) + f + g;
}
)");
  const auto c = shell("cd " + q(tmp_) + " && " + q(nvcc) + " -std=c++17 -arch=sm_90 -c use_gelu.cu -o use_gelu.o >" +
                       q(tmp_ / "stdout.txt") + " 2>" + q(tmp_ / "stderr.txt"));
  EXPECT_EQ(c.code, 0) << c;
  EXPECT_TRUE(fs::exists(tmp_ / "use_gelu.o"));
}

TEST_F(Cli, MalformedConfigNamesFileAndLine) {
  write(tmp_ / "bad.yaml", "problem: gelu\nshapes: [{n: 10}\nbudget: {evals: 4}\n");
  auto r = soltune("tune bad.yaml --backend model");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(bad\.yaml:[23]:[0-9]+: malformed YAML)"))) << r;
  EXPECT_FALSE(fs::exists(tmp_ / "soltune-nvidia-h200.sqlite"));

  // A mistake deeper in: an unknown key on line 3.
  write(tmp_ / "bad.yaml", "problem: gelu\nshapes: [{n: 10}]\nbudgett: {evals: 4}\n");
  r = soltune("tune bad.yaml --backend model");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("bad.yaml:3:1: unknown key 'budgett'"), std::string::npos) << r;

  // A missing config file.
  r = soltune("tune nowhere.yaml --backend model");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("nowhere.yaml"), std::string::npos) << r;
}

TEST_F(Cli, ForeignKnowledgeBaseIsRefusedAndLeftUnchanged) {
  const auto foreign = tmp_ / "notes.db";
  std::string bytes = "these are my notes, not a database\n";
  for (int i = 0; i < 200; ++i) bytes += "line " + std::to_string(i) + "\n";
  write(foreign, bytes);
  auto r = soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals 4 --kb " + q(foreign));
  EXPECT_NE(r.code, 0) << r;
  EXPECT_NE(r.err.find("notes.db"), std::string::npos) << r;
  EXPECT_EQ(read(foreign), bytes);
  for (const char* side : {"-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(foreign.string() + side)) << side;
  // Export reads it and refuses it the same way.
  r = soltune("export --kb " + q(foreign) + " --problem gelu -o " + q(tmp_ / "g.cuh") + " --allow-predicted");
  EXPECT_NE(r.code, 0) << r;
  EXPECT_NE(r.err.find("notes.db"), std::string::npos) << r;
  EXPECT_EQ(read(foreign), bytes);
  EXPECT_FALSE(fs::exists(tmp_ / "g.cuh"));
}

TEST_F(Cli, UsageErrorsExitWithTwo) {
  auto r = soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --bogus");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r;
  r = soltune("tune");  // no config
  EXPECT_EQ(r.code, 2) << r;
  r = soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --evals many");
  EXPECT_EQ(r.code, 2) << r;
  r = soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --backend opencl --evals 1");
  EXPECT_EQ(r.code, 2) << r;
  r = soltune("export --problem gelu");  // no --kb, no -o
  EXPECT_EQ(r.code, 2) << r;
  r = soltune("devices --frobnicate");
  EXPECT_EQ(r.code, 2) << r;
  r = soltune("frobnicate");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r;
  r = soltune("");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("usage"), std::string::npos) << r;
}

TEST_F(Cli, Help) {
  auto r = soltune("--help");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("usage: soltune"), std::string::npos) << r;
  for (const char* cmd : {"tune", "export", "devices"}) EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
  r = soltune("tune --help");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("--evals"), std::string::npos) << r;
  r = soltune("export --help");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("--allow-predicted"), std::string::npos) << r;
}

TEST_F(Cli, DevicesWithoutAGpu) {
  const auto r = soltune("devices");
  EXPECT_EQ(r.code, 0) << r;
  if (fs::exists("/dev/nvidiactl") && r.out.find("device 0:") != std::string::npos)
    GTEST_SKIP() << "this machine has a CUDA device:\n" << r.out;
  EXPECT_NE(r.out.find("no CUDA device"), std::string::npos) << r;
  EXPECT_NE(r.out.find("model backend"), std::string::npos) << r;
  EXPECT_NE(r.out.find("H200"), std::string::npos) << r;
}

TEST_F(Cli, TemplateThatDoesNotCompileFailsTheRun) {
  fs::create_directories(tmp_ / "mytemplates");
  fs::copy(kSource / "templates" / "gelu", tmp_ / "mytemplates" / "gelu", fs::copy_options::recursive);
  const auto cu = tmp_ / "mytemplates" / "gelu" / "vectorized.cu";
  write(cu, read(cu) + "\nint broken_on_purpose = ;\n");
  fs::create_directories(tmp_ / "cfg");
  write(tmp_ / "cfg" / "broken.yaml",
        "problem: gelu\n"
        "templates: ../mytemplates\n"
        "dtypes: [f32]\n"
        "shapes: [{n: 100000}]\n"
        "budget: {evals: 4}\n"
        "backend: model\n"
        "kb: broken.sqlite\n");
  const auto r = soltune("tune cfg/broken.yaml");
  EXPECT_NE(r.code, 0) << r;
  EXPECT_NE(r.err.find("vectorized.cu"), std::string::npos) << r;
  EXPECT_NE(r.err.find("error"), std::string::npos) << r;
  // The compile log comes with it: the line that broke.
  EXPECT_NE(r.err.find("broken_on_purpose"), std::string::npos) << r;

  // The same copy, unbroken, tunes fine (the failure above is the template's, not the setup's).
  fs::copy(kSource / "templates" / "gelu" / "vectorized.cu", cu, fs::copy_options::overwrite_existing);
  const auto ok = soltune("tune cfg/broken.yaml");
  EXPECT_EQ(ok.code, 0) << ok;
  EXPECT_TRUE(fs::exists(tmp_ / "cfg" / "broken.sqlite"));
}

}  // namespace
}  // namespace soltune
