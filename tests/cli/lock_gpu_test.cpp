// GPU test (label gpu): one measuring run per GPU. While a real tune holds the device, a second
// with --no-wait fails at once naming it, and one without says who holds the GPU and waits: it
// measures only after the first has ended.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "../eval/gpu_fixture.hpp"
#include "../support/files.hpp"
#include "eval/gpu_lock.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// `sh -c "exec CMD"`: the returned pid is the command's own.
pid_t spawn(const std::string& cmd) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

bool running(pid_t pid) {
  int st = 0;
  return waitpid(pid, &st, WNOHANG) == 0;
}

// Polls until `done` holds or the time is up.
template <class F>
bool eventually(F done, std::chrono::seconds limit) {
  for (const auto end = Clock::now() + limit; Clock::now() < end; std::this_thread::sleep_for(50ms))
    if (done()) return true;
  return done();
}

TEST(LockGpu, ASecondTuneOnTheSameGpuFailsWithNoWaitAndOtherwiseWaitsForTheFirst) {
  SOLTUNE_REQUIRE_GPU();
  const auto dev = cuda_devices().devices.front();
  std::string t = (fs::temp_directory_path() / "soltune-lock-gpu-XXXXXX").string();
  ASSERT_NE(mkdtemp(t.data()), nullptr);
  const fs::path tmp = t;
  // A lock folder of the test's own: a run of someone else on this GPU neither blocks nor sees it.
  ASSERT_EQ(setenv("SOLTUNE_LOCK_DIR", (tmp / "locks").c_str(), 1), 0);
  ASSERT_EQ(setenv("SOLTUNE_CACHE_DIR", (tmp / "cache").c_str(), 1), 0);
  const auto lock_file = GpuLock::file_for(dev.uuid);
  const auto tune = [&](const std::string& name, int evals, const std::string& extra) {
    return q(test::soltune_binary()) + " tune " + q(test::source_dir() / "configs" / "gelu.yaml") +
           " --backend cuda --device 0 --evals " + std::to_string(evals) + " --kb " + q(tmp / (name + ".sqlite")) + extra +
           " >" + q(tmp / (name + ".out")) + " 2>" + q(tmp / (name + ".err"));
  };
  std::vector<pid_t> started;
  struct Reap {
    std::vector<pid_t>& pids;
    ~Reap() {
      for (pid_t p : pids)
        if (running(p)) {
          kill(p, SIGKILL);
          waitpid(p, nullptr, 0);
        }
    }
  } reap{started};

  // The first: a budget large enough to still be measuring while the other two start.
  const pid_t first = spawn(tune("first", 24, ""));
  ASSERT_GT(first, 0);
  started.push_back(first);
  const std::string holder = "in use by pid " + std::to_string(first);
  ASSERT_TRUE(eventually([&] { return test::read_file(lock_file).find("pid " + std::to_string(first) + "\n") == 0 ||
                                      !running(first); },
                         120s));
  ASSERT_TRUE(running(first)) << "the first tune ended before the test could start another:\n"
                              << test::read_file(tmp / "first.err");

  // --no-wait: refused at once, naming the holder and its command.
  const auto began = Clock::now();
  const int st = std::system(tune("nowait", 8, " --no-wait").c_str());
  const double took_s = std::chrono::duration<double>(Clock::now() - began).count();
  const auto nowait_err = test::read_file(tmp / "nowait.err");
  EXPECT_EQ(exit_code(st), 1) << nowait_err;
  EXPECT_NE(nowait_err.find(holder), std::string::npos) << nowait_err;
  EXPECT_NE(nowait_err.find("first.sqlite"), std::string::npos) << "the holder's command line:\n" << nowait_err;
  EXPECT_NE(nowait_err.find(dev.uuid), std::string::npos) << nowait_err;
  EXPECT_LT(took_s, 30) << "--no-wait should not wait";
  EXPECT_FALSE(fs::exists(tmp / "nowait.sqlite")) << "a refused run should not touch its knowledge base";
  ASSERT_TRUE(running(first)) << "the first tune ended too soon for the rest of the test:\n"
                              << test::read_file(tmp / "first.err");

  // Without it: says once who holds the GPU, waits, and runs once the first has ended.
  const pid_t second = spawn(tune("second", 8, ""));
  ASSERT_GT(second, 0);
  started.push_back(second);
  EXPECT_TRUE(eventually([&] { return test::read_file(tmp / "second.err").find("waiting for it") != std::string::npos; },
                         60s))
      << test::read_file(tmp / "second.err");
  const bool first_still_running = running(first);
  int first_st = 0;
  ASSERT_EQ(waitpid(first, &first_st, 0), first);
  started.erase(started.begin());
  EXPECT_TRUE(first_still_running) << "the first tune ended before the second printed its message";
  EXPECT_EQ(exit_code(first_st), 0) << test::read_file(tmp / "first.err");
  EXPECT_TRUE(running(second)) << "the second tune should measure only after the first has ended";
  int second_st = 0;
  ASSERT_EQ(waitpid(second, &second_st, 0), second);
  started.clear();
  const auto second_err = test::read_file(tmp / "second.err");
  EXPECT_EQ(exit_code(second_st), 0) << second_err;
  EXPECT_NE(second_err.find("soltune: GPU 0 (" + dev.name + ", " + dev.uuid + ") is " + holder), std::string::npos)
      << second_err;
  EXPECT_NE(second_err.find("(--no-wait fails at once instead)"), std::string::npos) << second_err;
  EXPECT_NE(test::read_file(tmp / "second.out").find("summary"), std::string::npos) << test::read_file(tmp / "second.out");
  // Released with the run: the file no longer names a holder.
  EXPECT_EQ(test::read_file(lock_file), "");
  unsetenv("SOLTUNE_LOCK_DIR");
  unsetenv("SOLTUNE_CACHE_DIR");
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace soltune
