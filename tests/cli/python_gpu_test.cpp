// GPU: the Python package of a real tune (softmax, gelu, l1norm with its workspace, layernorm and
// rmsnorm with their weights, attention with its two outputs and scratch, matmul with its tensor
// maps and fallback), checked from PyTorch by tests/python/check_package.py: against PyTorch's operations at 30 shapes per problem and dtype,
// with out=, under torch.compile(fullgraph=True), in a captured CUDA graph, bad arguments refused,
// and the host time per call printed. Skips without a GPU, nvcc or PyTorch.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>

#include "../eval/gpu_fixture.hpp"
#include "../support/files.hpp"
#include "core/cuda_tools.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

using test::q;
using test::run;

TEST(PythonPackageGpu, TheFunctionsMatchPyTorchCompileAndCapture) {
  SOLTUNE_REQUIRE_GPU();
  if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "no nvcc: the package's kernels cannot be built";
  if (run("python3 -c 'import torch; assert torch.cuda.is_available()' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no PyTorch with CUDA for python3";
  const test::TempDir tmp("python-gpu");
  const fs::path kb = tmp.path() / "kb.sqlite", log = tmp.path() / "log.txt";
  const std::string soltune = q(test::soltune_binary()), to_log = " > " + q(log) + " 2>&1";
  // One shape each and a budget that reaches every task, the fallback-only ones included: the
  // package then serves every shape.
  for (const auto& [p, shape] : {std::pair{"softmax", "{rows: 1024, cols: 1000}"}, std::pair{"gelu", "{n: 1000003}"},
                                 std::pair{"l1norm", "{n: 1000003}"}, std::pair{"layernorm", "{rows: 1024, cols: 1000}"},
                                 std::pair{"rmsnorm", "{rows: 1024, cols: 1000}"},
                                 std::pair{"attention", "{b: 1, h: 4, h_kv: 2, s_q: 128, s_k: 256, d: 64}"},
                                 std::pair{"matmul", "{m: 256, n: 512, k: 384, trans_b: 1}"}}) {
    const auto cfg = tmp.path() / (std::string(p) + ".yaml");
    const bool sixteen = std::string(p) == "attention" || std::string(p) == "matmul";  // 16-bit inputs only
    const std::string dtypes = sixteen ? "[bf16, f16]" : "[f32, bf16]";
    ASSERT_TRUE(test::write_file(cfg, std::string("problem: ") + p + "\ndtypes: " + dtypes + "\nshapes: [" + shape +
                                          "]\nbudget: {evals: 24, seconds: 40}\nseed: 3\ntemplates: " +
                                          (test::source_dir() / "templates").string() + "\n"));
    ASSERT_EQ(run(soltune + " tune " + q(cfg) + " -q --kb " + q(kb) + to_log), 0) << test::read_file(log);
  }
  ASSERT_EQ(run(soltune + " export --kb " + q(kb) + " --problem softmax --problem gelu --problem l1norm --problem layernorm --problem rmsnorm "
                "--problem attention --problem matmul --format python --name tuned -o " +
                q(tmp.path() / "pkg") + to_log), 0)
      << test::read_file(log);
  const int code = run("python3 " + q(test::source_dir() / "tests" / "python" / "check_package.py") + " " +
                       q(tmp.path() / "pkg") + " tuned" + to_log);
  const auto out = test::read_file(log);
  std::printf("%s", out.c_str());
  EXPECT_EQ(code, 0) << out;
}

}  // namespace
}  // namespace soltune
