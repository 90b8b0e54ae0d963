// The `soltune` binary end to end, on a machine without a GPU: a model-backend tune recorded in a
// knowledge base, an export whose header nvcc compiles, and bad input refused with useful errors.
#include <gtest/gtest.h>

#include "../support/files.hpp"
#include <stdlib.h>
#include <dlfcn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <dlfcn.h>

#include <chrono>

#include "cli_fixture.hpp"
#include "kb/knowledge_base.hpp"
#include "kb/result_columns.hpp"

namespace soltune {
namespace {

TEST_F(Cli, ModelBackendTuneEndToEnd) {
  const auto r = tune_gelu();
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("backend model"), std::string::npos) << r;
  EXPECT_NE(r.out.find("prediction"), std::string::npos) << r;
  EXPECT_NE(r.out.find("(predicted)"), std::string::npos) << r;
  EXPECT_NE(r.out.find("summary"), std::string::npos) << r;
  for (const char* id : {"gelu/vectorized/f32/n=268435456", "gelu/vectorized/bf16/n=1000003"})
    EXPECT_NE(r.out.find(id), std::string::npos) << id << "\n" << r;
  // The CPU side's account: every candidate was compiled in this run or came from the cache.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("compiles: (none|[0-9]+) in this run.*, ([0-9]+) from the on-disk cache")))
      << r;
  EXPECT_EQ((m[1] == "none" ? 0 : std::stoi(m[1])) + std::stoi(m[2]), 16) << m[0];
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
  EXPECT_NE(r.out.find("4 specialization(s) and 2 fallback(s)"), std::string::npos) << r;
  const auto h = read(out);
  for (const char* s : {"#pragma once", "namespace soltune_gelu", "inline cudaError_t gelu_f32(",
                        "inline cudaError_t gelu_bf16(", "gelu_f32_can_implement(", "gelu_bf16_can_implement(",
                        "gelu_tanh<float,", "gelu_tanh<__nv_bfloat16,", "predicted"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
  EXPECT_FALSE(fs::exists(tmp_ / "gelu.cuh.tmp"));
  // The cubins NVRTC builds for the tuned GPU travel in the header, each checked against the tuned
  // build's register count; --source-only leaves them out.
  for (const char* s : {"cudaLibraryLoadData", "if (p.cc == 90)", "binary: sm_90 cubin by NVRTC", "SOLTUNE_SOURCE_ONLY"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
  EXPECT_EQ(r.err.find("registers, the timed build had"), std::string::npos) << r;
  const std::regex regs("([0-9]+) registers \\(the timed build: ([0-9]+)\\)");
  int checked = 0;
  for (auto it = std::sregex_iterator(h.begin(), h.end(), regs); it != std::sregex_iterator(); ++it, ++checked)
    EXPECT_EQ((*it)[1], (*it)[2]) << (*it)[0];
  EXPECT_EQ(checked, 6);  // the four tuned kernels and each dtype's fallback
  r = soltune("export --kb " + q(kb_) + " --problem gelu -o " + q(out) + " --allow-predicted --source-only");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(read(out).find("cudaLibraryLoadData"), std::string::npos);

  // Results of an edited template are not exported with today's source: refused until re-tuned.
  const auto edited = tmp_ / "templates";
  fs::create_directories(edited);
  fs::copy(kSource / "templates" / "gelu", edited / "gelu", fs::copy_options::recursive);
  write(edited / "gelu" / "vectorized.cu", read(edited / "gelu" / "vectorized.cu") + "\n// edited\n");
  r = soltune("export --kb " + q(kb_) + " --problem gelu --templates " + q(edited) + " -o " + q(tmp_ / "e.cuh") +
              " --allow-predicted");
  expect_run(r, 1, {"other versions of its templates"});
  EXPECT_FALSE(fs::exists(tmp_ / "e.cuh"));

  // The export of an unknown problem is an error that names it.
  r = soltune("export --kb " + q(kb_) + " --problem gelux -o " + q(tmp_ / "x.cuh") + " --allow-predicted");
  expect_run(r, 1, {"gelux"});
}

// A budget smaller than the run's tasks (softmax.yaml: 32) still measures the fallback of each
// dtype first, so that the export has its kernel of last resort and serves every shape.
TEST_F(Cli, ABudgetSmallerThanTheTasksStillMeasuresEachFallback) {
  auto r = soltune("tune " + q(kSource / "configs" / "softmax.yaml") + " --backend model --evals 8 -q --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  r = soltune("export --kb " + q(kb_) + " --problem softmax --allow-predicted -o " + q(tmp_ / "softmax.cuh"));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("and 2 fallback(s)"), std::string::npos) << r;
  EXPECT_EQ(r.err.find("no measurement of the fallback"), std::string::npos) << r;
}

TEST_F(Cli, ExportedHeaderCompilesWithNvcc) {
  const auto nvcc = test::nvcc_path();
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
  expect_run(r, 1, {"bad.yaml:3:1: unknown key 'budgett'"});

  // A missing config file.
  r = soltune("tune nowhere.yaml --backend model");
  expect_run(r, 1, {"nowhere.yaml"});
}

// A shape whose buffers exceed the device's memory stops the run before anything is recorded.
TEST_F(Cli, AShapeTooLargeForTheDeviceIsRefused) {
  write(tmp_ / "huge.yaml", "problem: gelu\ntemplates: " + (kSource / "templates").string() +
                                "\ndtypes: [f32]\nshapes: [{n: 1000003}, {n: 68719476736}]\nbudget: {evals: 4}\n"
                                "backend: model\nmodel_gpu: H200\n");
  const auto r = soltune("tune huge.yaml --kb " + q(kb_));
  expect_run(r, 1, {"huge.yaml: shapes too large for the NVIDIA H200", "n=68719476736 f32 needs 1536.0 GiB"});
  EXPECT_EQ(r.err.find("n=1000003 f32"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(kb_));
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
  const std::string config = q(kSource / "configs" / "gelu.yaml");
  // Each command line, and what its error must say ("": only the exit code is checked).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tune " + config + " --bogus", "--bogus"},
      {"tune", ""},  // no config
      {"tune " + config + " --evals many", ""},
      {"tune " + config + " --backend opencl --evals 1", ""},
      {"export --problem gelu", ""},  // no --kb, no -o
      {"devices --frobnicate", ""},
      {"frobnicate", "unknown command 'frobnicate'"},
      {"", "usage"}};
  for (const auto& [args, says] : cases) {
    SCOPED_TRACE("soltune " + args);
    const auto r = soltune(args);
    EXPECT_EQ(r.code, 2) << r;
    if (!says.empty()) {
      EXPECT_NE(r.err.find(says), std::string::npos) << r;
    }
  }
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

TEST_F(Cli, Version) {
  for (const char* flag : {"--version", "version"}) {
    const auto r = soltune(flag);
    EXPECT_EQ(r.code, 0) << r;
    EXPECT_EQ(r.out.rfind(std::string("soltune ") + SOLTUNE_VERSION + " (NVRTC ", 0), 0u) << r;
  }
}

TEST_F(Cli, DevicesWithoutAGpu) {
  const auto r = soltune("devices");
  EXPECT_EQ(r.code, 0) << r;
  if (fs::exists("/dev/nvidiactl") && r.out.find("device 0:") != std::string::npos)
    GTEST_SKIP() << "this machine has a CUDA device:\n" << r.out;
  // Without the driver's library, that is what is said (the runtime's own words would be "the driver
  // version is insufficient", as if a driver were there).
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver) {
    dlclose(driver);
    EXPECT_NE(r.out.find("no CUDA device"), std::string::npos) << r;
  } else {
    EXPECT_NE(r.out.find("no NVIDIA driver (libcuda.so.1 not found)"), std::string::npos) << r;
    EXPECT_EQ(r.out.find("insufficient"), std::string::npos) << r;
    const auto tune = soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --evals 4 --kb " + q(kb_));
    EXPECT_NE(tune.err.find("no NVIDIA driver (libcuda.so.1 not found); using the model backend"), std::string::npos) << tune;
  }
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

// --- soltune kb ---

// Parses a command's stdout as JSON; a parse failure fails the test with the output.
nlohmann::json parse_json(const Result& r) {
  try {
    return nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "):\n" << r;
    return {};
  }
}

TEST_F(Cli, KbListBestShowAsJson) {
  ASSERT_EQ(tune_gelu(8).code, 0);
  auto r = soltune("kb list --kb " + q(kb_) + " --json");
  ASSERT_EQ(r.code, 0) << r;
  auto j = parse_json(r);
  ASSERT_EQ(j["runs"].size(), 1u) << r;
  EXPECT_EQ(j["runs"][0]["id"], 1);
  EXPECT_EQ(j["runs"][0]["problem"], "gelu");
  EXPECT_EQ(j["runs"][0]["status"], "finished");
  EXPECT_EQ(j["runs"][0]["backend"], "model");
  EXPECT_EQ(j["runs"][0]["gpu"], "NVIDIA H200");
  EXPECT_EQ(j["runs"][0]["results"], 8);
  EXPECT_TRUE(j["runs"][0]["finished_at"].is_string());
  ASSERT_EQ(j["problems"].size(), 1u) << r;
  EXPECT_EQ(j["problems"][0]["problem"], "gelu");
  EXPECT_EQ(j["problems"][0]["results"], 8);
  ASSERT_EQ(j["gpus"].size(), 1u) << r;
  EXPECT_EQ(j["gpus"][0]["kind"], "predicted");
  EXPECT_EQ(j["gpus"][0]["runs"], 1);

  r = soltune("kb list --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  for (const char* s : {"1 run", "gelu", "finished", "NVIDIA H200", "predicted"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r;

  const auto best = KnowledgeBase::open(kb_).best("gelu");
  ASSERT_FALSE(best.empty());
  r = soltune("kb best --kb " + q(kb_) + " --problem gelu --json");
  ASSERT_EQ(r.code, 0) << r;
  j = parse_json(r);
  ASSERT_EQ(j["best"].size(), best.size()) << r;
  for (size_t i = 0; i < best.size(); ++i) {
    EXPECT_EQ(j["best"][i]["config_key"], best[i].config_key);
    EXPECT_EQ(j["best"][i]["shape"], best[i].shape_key);
    EXPECT_EQ(j["best"][i]["kind"], "predicted");
    EXPECT_EQ(j["best"][i]["gpu"], "NVIDIA H200");
    EXPECT_DOUBLE_EQ(j["best"][i]["time_us"].get<double>(), best[i].time_us);
    EXPECT_TRUE(j["best"][i]["sol_score"].is_number());
    // A result's JSON carries its whole row (the log only where asked for): one list of columns.
    for (const auto& c : kb::result_columns())
      EXPECT_EQ(j["best"][i].contains(c.json), std::string_view(c.name) != "log") << c.json;
  }
  r = soltune("kb best --kb " + q(kb_) + " --problem gelu --gpu a100 --json");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(parse_json(r)["best"].empty()) << r;
  r = soltune("kb best --kb " + q(kb_) + " --problem gelu --gpu h200");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find(best[0].config_key), std::string::npos) << r;

  r = soltune("kb show 1 --kb " + q(kb_) + " --json");
  ASSERT_EQ(r.code, 0) << r;
  j = parse_json(r);
  EXPECT_EQ(j["run"]["id"], 1);
  EXPECT_EQ(j["run"]["seed"], 42);
  EXPECT_EQ(j["run"]["gpu"]["name"], "NVIDIA H200");
  ASSERT_EQ(j["results"].size(), 8u) << r;
  int64_t counted = 0, last_id = 0;
  for (const auto& [status, n] : j["status_counts"].items()) counted += n.get<int64_t>();
  EXPECT_EQ(counted, 8);
  for (const auto& x : j["results"]) {
    EXPECT_GT(x["id"].get<int64_t>(), last_id) << "results out of order";
    last_id = x["id"].get<int64_t>();
  }
  EXPECT_FALSE(j["best"].empty());
  EXPECT_EQ(j["baselines"].size(), 4u);
  r = soltune("kb show 1 --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  for (const char* s : {"run 1: gelu", "best per task", "results in order"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r;

  r = soltune("kb show 99 --kb " + q(kb_));
  expect_run(r, 1, {"no run 99"});
}

TEST_F(Cli, KbReadingAMissingKnowledgeBaseIsAnErrorAndCreatesNothing) {
  const auto missing = tmp_ / "missing.sqlite";
  for (const std::string cmd : {"list", "best --problem gelu", "show 1", "export-json -o out.json"}) {
    const auto r = soltune("kb " + cmd + " --kb " + q(missing));
    EXPECT_EQ(r.code, 1) << cmd << "\n" << r;
    EXPECT_NE(r.err.find("missing.sqlite"), std::string::npos) << cmd << "\n" << r;
    EXPECT_FALSE(fs::exists(missing)) << cmd;
  }
  EXPECT_FALSE(fs::exists(tmp_ / "out.json"));
}

TEST_F(Cli, KbUsageErrorsExitWithTwo) {
  for (const std::string cmd : {"kb", "kb frobnicate", "kb list", "kb list --kb x.sqlite --bogus",
                                "kb best --kb x.sqlite", "kb show --kb x.sqlite", "kb show one --kb x.sqlite",
                                "kb export-json --kb x.sqlite", "kb import-json --kb x.sqlite",
                                "kb import-json a.json", "kb gc --older-than -1", "kb gc --older-than soon"}) {
    const auto r = soltune(cmd);
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r;
  }
  EXPECT_FALSE(fs::exists(tmp_ / "x.sqlite"));
  auto r = soltune("kb --help");
  EXPECT_EQ(r.code, 0) << r;
  for (const char* s : {"list", "best", "show", "export-json", "import-json", "gc"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  r = soltune("kb gc --help");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("--older-than"), std::string::npos) << r;
  r = soltune("--help");
  EXPECT_NE(r.out.find("kb SUBCOMMAND"), std::string::npos) << r;
}

TEST_F(Cli, KbExportImportJsonCarriesResults) {
  ASSERT_EQ(tune_gelu(8).code, 0);
  const auto doc = tmp_ / "out" / "kb.json";
  fs::create_directories(doc.parent_path());
  auto r = soltune("kb export-json --kb " + q(kb_) + " -o " + q(doc));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(fs::directory_iterator(doc.parent_path())->path(), doc);  // no temp file left
  const auto j = nlohmann::json::parse(read(doc));
  EXPECT_EQ(j["format"], "soltune-kb");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["results"].size(), 8u);

  const auto copy = tmp_ / "elsewhere" / "copy.sqlite";
  r = soltune("kb import-json --kb " + q(copy) + " " + q(doc) + " --json");
  ASSERT_EQ(r.code, 0) << r;
  auto s = parse_json(r);
  EXPECT_EQ(s["created"], true);
  EXPECT_EQ(s["results"]["added"], 8);
  r = soltune("kb import-json --kb " + q(copy) + " " + q(doc) + " --json");
  ASSERT_EQ(r.code, 0) << r;
  s = parse_json(r);
  EXPECT_EQ(s["results"]["added"], 0);
  EXPECT_EQ(s["results"]["present"], 8);
  EXPECT_EQ(s["runs"]["added"], 0);
  {
    auto a = KnowledgeBase::open(kb_);
    auto b = KnowledgeBase::open(copy);
    ASSERT_EQ(b.runs().size(), 1u);
    EXPECT_EQ(b.results(b.runs()[0].id).size(), 8u);
    const auto ba = a.best("gelu"), bb = b.best("gelu");
    ASSERT_EQ(ba.size(), bb.size());
    for (size_t i = 0; i < ba.size(); ++i) EXPECT_EQ(ba[i].config_key, bb[i].config_key);
  }
  r = soltune("kb best --kb " + q(copy) + " --problem gelu");
  EXPECT_EQ(r.code, 0) << r;

  // A truncated file and a foreign one: refused, naming the file; the target is left as it was.
  const std::string bytes = read(copy);
  const std::string text = read(doc);
  write(tmp_ / "cut.json", text.substr(0, text.size() / 3));
  write(tmp_ / "package.json", R"({"name": "left-pad", "version": "1.3.0"})");
  for (const char* bad : {"cut.json", "package.json"}) {
    r = soltune("kb import-json --kb " + q(copy) + " " + bad);
    EXPECT_EQ(r.code, 1) << r;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r;
    EXPECT_NE(r.err.find("soltune-kb"), std::string::npos) << r;
    EXPECT_EQ(read(copy), bytes);
  }
  r = soltune("kb import-json --kb " + q(tmp_ / "new.sqlite") + " cut.json");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_FALSE(fs::exists(tmp_ / "new.sqlite"));
}

// Sets a file's access and modification times to `age` ago.
void set_age(const fs::path& p, std::chrono::seconds mtime_age, std::chrono::seconds atime_age) {
  fs::last_write_time(p, fs::file_time_type::clock::now() - mtime_age);
  const auto at = std::chrono::system_clock::now() - atime_age;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
  const struct timespec times[2] = {{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)},
                                    {0, UTIME_OMIT}};
  ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << p;
}

TEST_F(Cli, KbGcRemovesOnlyStaleCacheEntries) {
  using std::chrono::hours;
  const auto dir = tmp_ / "cache";  // SOLTUNE_CACHE_DIR: the default of `kb gc`
  fs::create_directories(dir);
  const std::string entry_bytes = std::string("SOLNVRTC") + std::string(92, 'x');  // 100 bytes
  const std::string h1(32, 'a'), h2(32, 'b'), h3(32, 'c'), h4(32, 'd');
  const auto old_entry = dir / (h1 + ".nvrtc"), fresh_entry = dir / (h2 + ".nvrtc");
  const auto read_lately = dir / (h3 + ".nvrtc");  // written long ago, but read yesterday
  const auto impostor = dir / (h4 + ".nvrtc");     // named like an entry, but is not one
  const auto old_temp = dir / (".tmp." + h1 + ".1234.5678.0"), fresh_temp = dir / (".tmp." + h2 + ".1234.5678.1");
  const std::vector<fs::path> unrelated = {dir / "notes.txt", dir / "abc.nvrtc", dir / (h1 + ".nvrtc.bak"),
                                           dir / (".tmp." + h1), dir / (std::string(32, 'A') + ".nvrtc")};
  for (const auto& p : {old_entry, fresh_entry, read_lately}) write(p, entry_bytes);
  write(impostor, "my own file, not a cache entry\n");
  write(old_temp, std::string(50, 't'));
  write(fresh_temp, std::string(7, 't'));
  for (const auto& p : unrelated) write(p, "keep me\n");
  fs::create_directories(dir / (std::string(32, 'e') + ".nvrtc"));  // a folder named like an entry
  const auto days40 = hours(24 * 40);
  for (const auto& p : unrelated) set_age(p, days40, days40);
  set_age(dir / (std::string(32, 'e') + ".nvrtc"), days40, days40);
  set_age(old_entry, days40, days40);
  set_age(impostor, days40, days40);
  set_age(read_lately, days40, hours(20));
  set_age(old_temp, hours(2), hours(2));

  // A dry run removes nothing, and does not make what it looked at look used.
  auto r = soltune("kb gc --dry-run");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("would remove " + h1 + ".nvrtc"), std::string::npos) << r;
  EXPECT_NE(r.out.find("would free 150 bytes"), std::string::npos) << r;
  for (const auto& p : {old_entry, fresh_entry, read_lately, impostor, old_temp, fresh_temp})
    EXPECT_TRUE(fs::exists(p)) << p;

  // Older than 50 days: no entry is; the leftover temp file goes all the same.
  r = soltune("kb gc --older-than 50");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(fs::exists(old_entry));
  EXPECT_FALSE(fs::exists(old_temp)) << r;
  EXPECT_NE(r.out.find("freed 50 bytes"), std::string::npos) << r;

  r = soltune("kb gc --cache-dir " + q(dir));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(fs::exists(old_entry)) << r;
  EXPECT_NE(r.out.find("removed 1 cache entry"), std::string::npos) << r;
  EXPECT_NE(r.out.find("freed 100 bytes"), std::string::npos) << r;
  for (const auto& p : {fresh_entry, read_lately, impostor, fresh_temp}) EXPECT_TRUE(fs::exists(p)) << p << "\n" << r;
  for (const auto& p : unrelated) EXPECT_EQ(read(p), "keep me\n") << p;
  EXPECT_TRUE(fs::is_directory(dir / (std::string(32, 'e') + ".nvrtc")));
  EXPECT_EQ(read(impostor), "my own file, not a cache entry\n");

  r = soltune("kb gc --cache-dir " + q(tmp_ / "no-such-cache"));
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("nothing to remove"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(tmp_ / "no-such-cache"));
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

TEST_F(Cli, ExportAsJsonForFrameworks) {
  ASSERT_EQ(tune_gelu().code, 0);
  const auto out = tmp_ / "gelu.json";
  const auto r = soltune("export --kb " + q(kb_) + " --problem gelu -o " + q(out) + " --allow-predicted --format json");
  ASSERT_EQ(r.code, 0) << r;
  const auto j = nlohmann::json::parse(read(out));
  EXPECT_EQ(j["format"], "soltune-export");
  EXPECT_EQ(j["problem"], "gelu");
  ASSERT_EQ(j["specializations"].size(), 6u);  // f32 and bf16, two shapes each, and each one's fallback
  int fallbacks = 0;
  for (const auto& s : j["specializations"]) fallbacks += s.at("fallback").get<bool>();
  EXPECT_EQ(fallbacks, 2);
  // Each kernel's result as the knowledge base holds it (kb best --json gives the same row).
  const auto best = nlohmann::json::parse(soltune("kb best --kb " + q(kb_) + " --problem gelu --json").out);
  std::set<std::string> keys;
  for (const auto& b : best.at("best")) keys.insert(b.at("config_key").get<std::string>() + " " + b.at("shape").get<std::string>());
  for (const auto& s : j["specializations"]) {
    EXPECT_EQ(s["time_kind"], "predicted");
    EXPECT_GT(s["time_us"].get<double>(), 0);
    for (const char* key : {"config_key", "t_ref_us", "t_sol_us", "sol_score", "sol_execbench", "source_hash", "measured_at"})
      EXPECT_TRUE(s.contains(key)) << key << " in " << s.dump().substr(0, 400);
    EXPECT_GT(s["t_ref_us"].get<double>(), s["t_sol_us"].get<double>());
    EXPECT_EQ(s["source_hash"].get<std::string>().size(), 32u) << s["source_hash"];
    std::string shape;
    for (const auto& [dim, value] : s["shape"].items()) shape += (shape.empty() ? "" : ",") + dim + "=" + value.dump();
    if (!s["fallback"].get<bool>()) {
      EXPECT_TRUE(keys.count(s["config_key"].get<std::string>() + " " + shape)) << shape;
    }
    EXPECT_NE(s["name_expression"].get<std::string>().find("gelu_tanh<"), std::string::npos);
    EXPECT_EQ(s["knobs"].size(), 7u);
  }
  EXPECT_NE(j["variants"]["vectorized"]["source"].get<std::string>().find("__global__"), std::string::npos);
  // Each specialization carries the cubin soltune timed, base64: an ELF file for sm_90.
  for (const auto& s : j["specializations"]) {
    ASSERT_TRUE(s.contains("cubin")) << s.dump();
    EXPECT_EQ(s["cubin"]["compute_capability"], 90);
    EXPECT_EQ(s["cubin"]["kernel"].get<std::string>().rfind("_Z", 0), 0u);
    const auto b64 = s["cubin"]["base64"].get<std::string>();
    EXPECT_EQ(b64.size() % 4, 0u);
    EXPECT_EQ(b64.substr(0, 4), "f0VM");  // "\x7fELF"
  }
  EXPECT_FALSE(j["variants"]["vectorized"]["constraints"].empty());
  EXPECT_EQ(soltune("export --kb " + q(kb_) + " --problem gelu -o " + q(out) + " --format xml").code, 2);
}

}  // namespace
}  // namespace soltune
