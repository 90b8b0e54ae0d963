#pragma once
// Shared by the GPU tests: skip with the driver's reason where no device is present, and build
// template folders holding deliberately broken variants next to a copy of a shipped problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../support/files.hpp"
#include "core/rounds.hpp"
#include "eval/cuda_devices.hpp"
#include "eval/timing_loop.hpp"
#include "eval/worker_evaluator.hpp"

namespace soltune::test {

// The source tree: $SOLTUNE_SOURCE_DIR when set (a packed test binary run on another machine),
// else where this test was built.
inline std::filesystem::path source_dir() {
  if (const char* env = std::getenv("SOLTUNE_SOURCE_DIR")) return env;
  return SOLTUNE_SOURCE_DIR;
}

// The soltune program that serves as GPU worker: $SOLTUNE_BIN, else the one built with this test.
inline std::string soltune_binary() {
  if (const char* env = std::getenv("SOLTUNE_BIN")) return env;
  return SOLTUNE_BIN;
}

// Options of a worker-backed evaluator for a test: `soltune worker` loading problems from
// `templates`, short timed loops in which every correct candidate is timed however slow, no
// ceiling probes.
inline WorkerOptions worker_options(const std::filesystem::path& templates, double target_ms = 2, int min_reps = 3,
                                    int max_reps = 5, double timeout_cap_s = 60) {
  WorkerOptions o;
  o.command = {soltune_binary(), "worker"};
  o.templates = templates;
  o.eval.target_ms = target_ms;
  o.eval.min_reps = min_reps;
  o.eval.max_reps = max_reps;
  o.eval.measure_ceilings = false;
  o.eval.slow_factor = 1e9;
  o.timeout_cap_s = timeout_cap_s;
  return o;
}

inline bool skip_without_gpu() {
  static const DeviceList list = cuda_devices();
  if (list.devices.empty()) {
    std::printf("[  SKIPPED ] %s\n", list.why_none.c_str());
    return true;
  }
  return false;
}

#define SOLTUNE_REQUIRE_GPU() \
  if (::soltune::test::skip_without_gpu()) GTEST_SKIP() << "no CUDA device on this machine"

// A copy of templates/<problem> (and templates/common, which templates may include) in a fresh temp
// folder, to which a test adds variants.
// `also`: the problems whose templates it includes (matmul_epilogue's variants include matmul's).
inline std::filesystem::path copy_problem(const std::string& problem, const std::string& tag,
                                          std::vector<std::string> also = {}) {
  const auto root = std::filesystem::temp_directory_path() / ("soltune-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  also.push_back(problem);
  also.push_back("common");
  for (const auto& dir : also)
    std::filesystem::copy(source_dir() / "templates" / dir, root / dir, std::filesystem::copy_options::recursive);
  return root;
}

// Device code for kernels that misbehave only once timing starts: launch_number() numbers the
// kernel's launches (every block of one launch gets the same number; blocks of any shape).
inline std::string launch_counter_source() {
  return "__device__ unsigned calls;\n"
         "__device__ __forceinline__ unsigned launch_number() {\n"
         "  __shared__ unsigned n;\n"
         "  if (threadIdx.x == 0 && threadIdx.y == 0) n = atomicAdd(&calls, 1u) / (gridDim.x * gridDim.y);\n"
         "  __syncthreads();\n"
         "  return n;\n"
         "}\n";
}

// The number of a candidate's first timed launch (from 0): its correctness rounds and the launches
// before timing come first.
inline unsigned first_timed_launch(const ProblemSpec& p) {
  return static_cast<unsigned>(std::max(CudaEvalOptions{}.check_rounds, correctness_rounds(p)) + 3);
}

// A copy of `variant` in `dir` as `<variant>_<name>` (its YAML beside it) with the text `from`
// replaced by `to`: a kernel with one mistake. Tests write their mistakes before they require a GPU,
// so that an edit of a template that moves the text fails without one too.
inline ::testing::AssertionResult add_mistake(const std::filesystem::path& dir, const std::string& variant,
                                              const std::string& name, const std::string& from, const std::string& to) {
  std::string source = read_file(dir / (variant + ".cu"));
  const auto at = source.find(from);
  if (at == std::string::npos)
    return ::testing::AssertionFailure() << name << ": " << variant << ".cu no longer has the text it changes";
  source.replace(at, from.size(), to);
  write_file(dir / (variant + "_" + name + ".cu"), source);
  write_file(dir / (variant + "_" + name + ".yaml"), read_file(dir / (variant + ".yaml")));
  return ::testing::AssertionSuccess();
}

// Adds variant `name` to a copy of gelu at `gelu_dir`: `source`, whose kernel `kernel`<T, BLOCK> takes
// an element a thread in blocks of 256 (`launch_extra` adds to its launch, e.g. ", smem: 300000").
inline void add_gelu_variant(const std::filesystem::path& gelu_dir, const std::string& name, const std::string& source,
                             const std::string& kernel, const std::string& launch_extra = "") {
  write_file(gelu_dir / (name + ".cu"), source);
  write_file(gelu_dir / (name + ".yaml"), "kernel: " + kernel + "\ntemplate_args: [T, BLOCK]\nknobs: {BLOCK: [256]}\n"
                                          "launch: {grid: \"cdiv(n, BLOCK)\", block: BLOCK" + launch_extra + "}\n");
}

}  // namespace soltune::test
