// The persistent compile workers: reused across compiles, never more than concurrent compiles,
// a hung, crashed or garbage-answering worker costs its compile only, and no process or PCH file
// outlives the pool. Helpers are fake_nvrtc_worker.cpp (the real worker without a mode).
#include "codegen/nvrtc_worker_pool.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "codegen/nvrtc_worker.hpp"

#include "../support/scale_kernel.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

using test::kScale;

CompileRequest scale_request(const std::string& extra_source = "") {
  return {kScale + extra_source, "scale.cu", {"scale<float, 3>"}, "sm_90", {}};
}
CompileRequest trigger_request() { return scale_request("// SOLTUNE_FAKE_TRIGGER\n"); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Compiler pooled(const std::string& mode, double timeout_s) {
  CompilerOptions o = default_compiler_options();
  o.cache_dir.clear();
  o.timeout_s = timeout_s;
  o.isolate_command = {FAKE_NVRTC_WORKER};
  if (!mode.empty()) o.isolate_command.push_back(mode);
  return Compiler(o);
}

std::vector<std::string> options_of(const CompileRequest& r) { return pooled("", 60).nvrtc_options(r); }

// Reaped: no such process (not even a zombie).
bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// Waits until pid has ended (a zombie: not reaped, so the pool still owns it).
void wait_ended(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL() << "process " << pid << " did not end";
}

TEST(NvrtcWorkerPool, SequentialCompilesShareOneWorker) {
  const Compiler c = pooled("", 60);
  for (int k = 0; k < 3; ++k) {
    const auto r = c.compile(scale_request("// " + std::to_string(k) + "\n"));
    EXPECT_TRUE(r.ok) << r.log;
  }
  EXPECT_EQ(c.compile_workers_started(), 1u);
}

TEST(NvrtcWorkerPool, AtMostOneWorkerPerConcurrentCompile) {
  const Compiler c = pooled("", 60);
  std::vector<CompileRequest> rs;
  for (int k = 0; k < 8; ++k) rs.push_back(scale_request("// " + std::to_string(k) + "\n"));
  tbb::task_arena arena(2);
  for (int batch = 0; batch < 2; ++batch)
    arena.execute([&] {
      for (const auto& r : c.compile_all(rs)) EXPECT_TRUE(r.ok) << r.log;
    });
  EXPECT_GE(c.compile_workers_started(), 1u);
  EXPECT_LE(c.compile_workers_started(), 2u);
}

TEST(NvrtcWorkerPool, InProcessCompilerStartsNoWorker) {
  CompilerOptions o = default_compiler_options();
  o.cache_dir.clear();
  const Compiler c(o);
  EXPECT_TRUE(c.compile(scale_request()).ok);
  EXPECT_EQ(c.compile_workers_started(), 0u);
}

// Each misbehaviour costs the one compile (with today's message), and the next compile works in a
// new worker.
// `workers`: started in all (a hung compile is retried once, in a worker of its own).
void expect_costs_one_compile(const std::string& mode, double timeout_s, const std::string& message, size_t workers = 2) {
  const Compiler c = pooled(mode, timeout_s);
  EXPECT_TRUE(c.compile(scale_request()).ok);
  const auto bad = c.compile(trigger_request());
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(contains(bad.log, message)) << bad.log;
  const auto next = c.compile(scale_request("// next\n"));
  EXPECT_TRUE(next.ok) << next.log;
  EXPECT_EQ(c.compile_workers_started(), workers);
}

TEST(NvrtcWorkerPool, HungWorkerCostsOneCompile) {
  // The limit is 2 s, or 10 times the first compile if that took longer; retried once at twice it.
  expect_costs_one_compile("hang", 2, "s: compile abandoned (the compile process was killed)", 3);
}
TEST(NvrtcWorkerPool, CrashedWorkerCostsOneCompile) {
  expect_costs_one_compile("crash", 60, "the NVRTC compile process died (killed by signal 6");
}
TEST(NvrtcWorkerPool, GarbageAnsweringWorkerCostsOneCompile) {
  expect_costs_one_compile("garbage", 60, "answered garbage");
}

TEST(NvrtcWorkerPool, WorkerKilledWhileIdleIsReplacedWithoutCostingACompile) {
  NvrtcWorkerPool pool({FAKE_NVRTC_WORKER}, 60);
  const auto r = scale_request();
  EXPECT_TRUE(pool.compile(r, options_of(r)).res.ok);
  ASSERT_EQ(pool.idle_pids().size(), 1u);
  const pid_t first = pool.idle_pids()[0];
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  wait_ended(first);
  const auto again = pool.compile(r, options_of(r));
  EXPECT_TRUE(again.res.ok) << again.res.log;
  EXPECT_TRUE(again.cacheable);
  EXPECT_EQ(pool.started(), 2u);
  EXPECT_TRUE(gone(first));
  ASSERT_EQ(pool.idle_pids().size(), 1u);
  EXPECT_NE(pool.idle_pids()[0], first);
}

TEST(NvrtcWorkerPool, KilledWorkerIsReapedAndItsTempDirRemoved) {
  NvrtcWorkerPool pool({FAKE_NVRTC_WORKER, "hang"}, 2);
  const auto r = scale_request();
  EXPECT_TRUE(pool.compile(r, options_of(r)).res.ok);
  const pid_t pid = pool.idle_pids().at(0);
  EXPECT_TRUE(fs::is_directory(worker_tmpdir(::getpid(), pid)));
  const auto t = trigger_request();
  EXPECT_FALSE(pool.compile(t, options_of(t)).cacheable);  // the same worker, killed at the limit
  EXPECT_TRUE(gone(pid));
  EXPECT_FALSE(fs::exists(worker_tmpdir(::getpid(), pid)));
  EXPECT_TRUE(pool.idle_pids().empty());
}

TEST(NvrtcWorkerPool, DestructionEndsWorkersAndRemovesTheirPchFiles) {
  std::vector<pid_t> pids;
  {
    NvrtcWorkerPool pool({FAKE_NVRTC_WORKER}, 120);
    // Headers, so that with -pch NVRTC writes a precompiled header into the worker's temp dir.
    const CompileRequest r{"#include <cuda_bf16.h>\n" + std::string(kScale), "bf.cu", {"scale<float, 1>"}, "sm_90", {}};
    const auto res = pool.compile(r, options_of(r));
    ASSERT_TRUE(res.res.ok) << res.res.log;
    pids = pool.idle_pids();
    ASSERT_EQ(pids.size(), 1u);
    const auto dir = worker_tmpdir(::getpid(), pids[0]);
    ASSERT_TRUE(fs::is_directory(dir));
    if (Compiler::supports_auto_pch()) {
      EXPECT_FALSE(fs::is_empty(dir)) << "no PCH written in " << dir;
    }
  }
  EXPECT_TRUE(gone(pids[0]));
  EXPECT_FALSE(fs::exists(worker_tmpdir(::getpid(), pids[0])));
}

TEST(NvrtcWorkerPool, WorkerIgnoresSigintAndRemovesItsPchFilesOnSigterm) {
  NvrtcWorkerPool pool({FAKE_NVRTC_WORKER}, 120);
  const CompileRequest r{"#include <cuda_bf16.h>\n" + std::string(kScale), "bf.cu", {"scale<float, 2>"}, "sm_90", {}};
  ASSERT_TRUE(pool.compile(r, options_of(r)).res.ok);
  const pid_t pid = pool.idle_pids().at(0);
  ASSERT_EQ(::kill(pid, SIGINT), 0);  // Ctrl-C reaches the whole process group: the parent decides
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(pool.compile(r, options_of(r)).res.ok);
  EXPECT_EQ(pool.started(), 1u);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  wait_ended(pid);
  EXPECT_FALSE(fs::exists(worker_tmpdir(::getpid(), pid))) << "not removed by the worker itself";
  EXPECT_TRUE(pool.compile(r, options_of(r)).res.ok);
  EXPECT_EQ(pool.started(), 2u);
}

}  // namespace
}  // namespace soltune
