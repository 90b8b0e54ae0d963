#pragma once
// NVRTC in a child process (`soltune nvrtc-worker`), so that a compile that hangs can be killed
// and cost its candidate only. The protocol is frames (core/frames.hpp) of plain strings:
//   request: source_name, source, arch, N, N name expressions, M, M NVRTC options
//   answer:  "ok" and the result in the cache-entry encoding (nvrtc_cache.hpp, key ""), or
//            "error" and the message of an infrastructure failure (rethrown by the parent)
// The parent starts one child per compile and closes its input after the request.
#include <string>
#include <vector>

#include "codegen/compiler.hpp"

namespace soltune {

// A compile helper's main: serves requests from in_fd until end of input, answering on out_fd.
// Exits at once when the reader of out_fd goes away (its parent died). Returns the exit code.
int nvrtc_worker_main(int in_fd, int out_fd);

// Internal to src/codegen.

// NVRTC in this process; throws Error only on infrastructure failures.
CompileResult nvrtc_compile(const CompileRequest& r, const std::vector<std::string>& options);

struct IsolatedCompile {
  CompileResult res;
  bool cacheable = true;  // false when the child was killed at the limit, died or answered garbage
};
// Compiles in a child started with command, killed after timeout_s. Throws Error when the child
// cannot be started (exec fails) or reports an infrastructure failure.
IsolatedCompile nvrtc_compile_isolated(const std::vector<std::string>& command, double timeout_s,
                                       const CompileRequest& r, const std::vector<std::string>& options);

}  // namespace soltune
