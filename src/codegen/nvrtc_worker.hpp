#pragma once
// NVRTC in a child process (`soltune nvrtc-worker`), so that a compile that hangs can be killed
// and cost its candidate only. The protocol is frames (core/frames.hpp) of plain strings:
//   request: source_name, source, arch, N, N name expressions, M, M NVRTC options
//   answer:  "ok" and the result in the cache-entry encoding (nvrtc_cache.hpp, key ""), or
//            "error" and the message of an infrastructure failure (rethrown by the parent)
// A worker serves requests one after another until end of input (the pool in
// nvrtc_worker_pool.hpp keeps it for the next compile, so NVRTC's automatic precompiled headers,
// which live in the process, are reused).
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"

namespace soltune {

// A compile helper's main: serves requests from in_fd until end of input, answering on out_fd.
// Exits at once when the reader of out_fd goes away (its parent died). Returns the exit code.
int nvrtc_worker_main(int in_fd, int out_fd);

// Internal to src/codegen (and the tests' fake helper).

// NVRTC in this process; throws Error only on infrastructure failures.
CompileResult nvrtc_compile(const CompileRequest& r, const std::vector<std::string>& options);

std::string encode_compile_request(const CompileRequest& r, const std::vector<std::string>& options);
// One request from fd: false at end of input before it; throws Error on a truncated or malformed one.
bool read_compile_request(int fd, CompileRequest& r, std::vector<std::string>& options);
// Compiles r here and writes the answer to fd; false when the reader of fd has gone.
bool answer_compile_request(int fd, const CompileRequest& r, const std::vector<std::string>& options);

// A worker's temp dir, where NVRTC writes its automatic PCH files (up to ~180 MB per template):
// the worker points TMPDIR there at start (use_worker_tmpdir), and the parent removes it when the
// worker has ended, so a killed worker leaves nothing behind. Named by both pids.
std::filesystem::path worker_tmpdir(pid_t parent, pid_t worker);
// Creates this worker's dir and sets TMPDIR to it; returns it, or empty when it cannot be made.
std::filesystem::path use_worker_tmpdir();

}  // namespace soltune
