#pragma once
// Runtime compilation of kernel sources to CUBIN with NVRTC, with a content-addressed disk cache.
// Only NVRTC is used (no CUDA runtime or driver), so compiling works on machines without a GPU.
// A rejected source is a value (ok=false with the log); only infrastructure failures throw Error.
#include <chrono>
#include <filesystem>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "core/measure.hpp"

namespace soltune {

struct CompileRequest {
  std::string source;                         // full CUDA C++ source
  std::string source_name;                    // for logs, e.g. "vectorized.cu"
  std::vector<std::string> name_expressions;  // e.g. {"gelu_tanh<float, 256, 4, 4, 0, 0, 0>"}
  std::string arch = "sm_90";                 // real arch: compile straight to CUBIN
  std::vector<std::string> extra_options;     // passed as a vector, never split on spaces
  // The run's budget ends here: a compile still running then is stopped (in a worker process; an
  // in-process compile runs on) and its result is `abandoned`. Not part of the cache key.
  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt;
};

struct CompiledKernel {
  std::string name_expression, lowered_name;
  Resources res;  // from the ptxas -v report; parsed=false if the report did not name the kernel
};

struct CompileResult {
  bool ok = false;
  std::string log;                      // NVRTC log, kept even on success (ptxas -v report, warnings)
  std::vector<char> cubin;
  std::vector<CompiledKernel> kernels;  // same order as name_expressions (empty when !ok)
  double ms = 0;                        // compile time, or cache load time on a hit
  bool cache_hit = false;
  // The compile missed its time limit twice (the second time at twice the limit): the machine's load
  // or the source, unknown; never cached, and the candidate's status is `timeout`, not compile_error.
  bool timed_out = false;
  bool abandoned = false;  // stopped at the request's deadline: says nothing of the source; not cached
  std::string key;                      // hex of the cache hash (computed even without a disk cache)
};

struct CompilerOptions {
  std::vector<std::string> include_dirs;  // default: <cuda>/include and <cuda>/include/cccl
  std::filesystem::path cache_dir;        // empty = no disk cache
  // NVRTC can hang (or take minutes) on pathological code. With a limit and a helper command, cache
  // misses compile in persistent worker processes (nvrtc_worker_pool.hpp), one per concurrent
  // compile; a worker that misses the limit is killed and the compile retried once at twice the
  // limit; missing that too, the result is ok=false and timed_out, with a log that says so, and is
  // not cached. The limit grows with what compiles take here: at least 10 times the longest that
  // succeeded, so that a loaded machine's slow compiles are not mistaken for hangs. Workers use NVRTC's automatic precompiled headers (-pch, NVRTC 12.8+),
  // which is what keeping them buys. Otherwise NVRTC runs in-process.
  double timeout_s = 0;                            // 0 = no limit
  std::vector<std::string> isolate_command = {};  // e.g. {"/proc/self/exe", "nvrtc-worker"}
};

// Include dirs from env CUDA_HOME / CUDA_PATH, else the toolkit found at build time, else
// /usr/local/cuda/include. Cache dir from env SOLTUNE_CACHE_DIR ("off" disables), else
// $XDG_CACHE_HOME/soltune/nvrtc, else $HOME/.cache/soltune/nvrtc. No time limit.
CompilerOptions default_compiler_options();

class NvrtcCache;
class NvrtcWorkerPool;

class Compiler {
 public:
  explicit Compiler(CompilerOptions o);
  ~Compiler();
  Compiler(Compiler&&) noexcept;
  Compiler& operator=(Compiler&&) noexcept;

  const CompilerOptions& options() const { return opts_; }

  // Thread-safe. Throws Error only on infrastructure failures.
  CompileResult compile(const CompileRequest& r) const;
  // Compiles in parallel (TBB); results in input order. The first infrastructure Error (by index)
  // is rethrown after all tasks finished.
  std::vector<CompileResult> compile_all(const std::vector<CompileRequest>& rs) const;

  // The full NVRTC option list for a request, in the order passed to nvrtcCompileProgram.
  std::vector<std::string> nvrtc_options(const CompileRequest& r) const;

  // Compile worker processes started so far (0 when NVRTC runs in-process).
  size_t compile_workers_started() const;

  static int nvrtc_version();                         // e.g. 13000 for 13.0
  static bool supports_auto_pch();                    // NVRTC (built and loaded) is 12.8 or later
  static std::vector<std::string> supported_archs();  // "sm_75", ..., "sm_90", ...

 private:
  CompilerOptions opts_;
  std::unique_ptr<NvrtcCache> cache_;      // null without a cache dir
  std::unique_ptr<NvrtcWorkerPool> pool_;  // null when NVRTC runs in-process
};

}  // namespace soltune
