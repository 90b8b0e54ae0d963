#pragma once
// Persistent NVRTC compile workers (nvrtc_worker.hpp). Each compile takes an idle worker (or starts
// one: so there are never more workers than concurrent compiles), sends the request, reads the
// answer before the deadline and puts the worker back. A worker that misses the deadline, dies or
// answers garbage is killed and dropped: that costs its compile only (the result says why and is
// not cacheable), and a later compile starts a new worker. Keeping workers lets NVRTC reuse its
// automatic precompiled headers (-pch) across compiles, which live in the worker process. Internal
// to src/codegen. Thread-safe.
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"

namespace soltune {

struct IsolatedCompile {
  CompileResult res;
  bool cacheable = true;   // false when the worker was killed at the limit, died or answered garbage
  bool timed_out = false;  // killed at the limit
};

class NvrtcWorkerPool {
 public:
  NvrtcWorkerPool(std::vector<std::string> command, double timeout_s);
  ~NvrtcWorkerPool();  // closes the idle workers' input, waits for them briefly, then kills
  NvrtcWorkerPool(const NvrtcWorkerPool&) = delete;
  NvrtcWorkerPool& operator=(const NvrtcWorkerPool&) = delete;

  // Throws Error when a worker cannot be started (exec fails) or reports an infrastructure failure.
  // `timeout_s` > 0 replaces the pool's limit for this compile.
  IsolatedCompile compile(const CompileRequest& r, const std::vector<std::string>& options, double timeout_s = 0);

  size_t started() const { return started_.load(); }  // workers started so far
  // The limit a compile gets: the pool's, or 10 times the longest compile that succeeded, if longer.
  double limit_s() const { return std::max(timeout_s_, 10 * longest_ok_s_.load()); }
  std::vector<pid_t> idle_pids() const;                // for tests

 private:
  class Worker;
  std::unique_ptr<Worker> take(bool& reused);
  void put_back(std::unique_ptr<Worker> w);

  std::vector<std::string> command_;
  double timeout_s_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Worker>> idle_;
  std::atomic<size_t> started_{0};
  std::atomic<double> longest_ok_s_{0};
};

}  // namespace soltune
