// The per-GPU lock on the CPU: in-process (flock belongs to the open file, so two locks of one
// process exclude each other), against forked holders (one killed with SIGKILL), and across exec.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "../support/files.hpp"
#include "core/error.hpp"
#include "eval/gpu_lock.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class GpuLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(setenv("SOLTUNE_LOCK_DIR", (tmp_ / "locks").c_str(), 1), 0);
  }
  void TearDown() override {
    unsetenv("SOLTUNE_LOCK_DIR");
  }

  // A no-wait acquire: the error's text when it is refused, "" when it got the lock (released at once).
  static std::string refusal(const std::string& key) {
    try {
      GpuLock::acquire(key, "GPU 0 (test, " + key + ")", false);
      return "";
    } catch (const Error& e) {
      return e.what();
    }
  }

  // A child that takes the lock on `key`, says so on a pipe, then sleeps until killed.
  static pid_t forked_holder(const std::string& key) {
    int p[2];
    if (pipe(p) != 0) return -1;
    const pid_t pid = fork();
    if (pid == 0) {
      ::close(p[0]);
      auto held = GpuLock::acquire(key, "", false);
      (void)!::write(p[1], "x", 1);
      for (;;) pause();
    }
    ::close(p[1]);
    char c = 0;
    const bool ok = ::read(p[0], &c, 1) == 1;
    ::close(p[0]);
    return ok ? pid : -1;
  }

  test::TempDir dir_{"lock"};
  const fs::path& tmp_ = dir_.path();
};

TEST_F(GpuLockTest, SecondLockOnTheSameGpuFailsNamingTheHolder) {
  auto first = GpuLock::acquire("GPU-aaaa", "GPU 0 (test, GPU-aaaa)", false);
  const auto why = refusal("GPU-aaaa");
  ASSERT_FALSE(why.empty()) << "the second lock on one GPU should be refused";
  EXPECT_NE(why.find("GPU 0 (test, GPU-aaaa) is in use by pid " + std::to_string(getpid())), std::string::npos) << why;
  EXPECT_NE(why.find("eval_test"), std::string::npos) << "the holder's command line: " << why;
  EXPECT_NE(why.find(" UTC"), std::string::npos) << "since when: " << why;
  EXPECT_NE(why.find("without --no-wait"), std::string::npos) << why;
  // The file lies in $SOLTUNE_LOCK_DIR, named by the key, readable by every user.
  EXPECT_EQ(first.path(), tmp_ / "locks" / "GPU-aaaa.lock");
  struct stat st{};
  ASSERT_EQ(stat(first.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  ASSERT_EQ(stat((tmp_ / "locks").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
}

TEST_F(GpuLockTest, OtherGpusDoNotBlockAndAReleasedLockIsFree) {
  std::optional<GpuLock> first = GpuLock::acquire("GPU-aaaa", "", false);
  EXPECT_EQ(refusal("GPU-bbbb"), "");
  EXPECT_NE(refusal("GPU-aaaa"), "");
  first.reset();
  EXPECT_EQ(refusal("GPU-aaaa"), "");
  // A moved lock is still held, and released once.
  auto a = GpuLock::acquire("GPU-aaaa", "", false);
  GpuLock b = std::move(a);
  EXPECT_NE(refusal("GPU-aaaa"), "");
  {
    GpuLock c = std::move(b);
  }
  EXPECT_EQ(refusal("GPU-aaaa"), "");
}

TEST_F(GpuLockTest, KeysBecomeSafeFileNames) {
  EXPECT_EQ(GpuLock::file_for("GPU-12ab/../x y"), tmp_ / "locks" / "GPU-12ab_.._x_y.lock");
  unsetenv("SOLTUNE_LOCK_DIR");
  EXPECT_EQ(GpuLock::folder(), fs::path("/tmp/soltune-locks"));
}

TEST_F(GpuLockTest, AWaiterSaysWhoHoldsTheGpuAndBlocksUntilItIsReleased) {
  std::optional<GpuLock> first = GpuLock::acquire("GPU-aaaa", "GPU 0 (test, GPU-aaaa)", false);
  std::mutex mu;
  std::vector<std::string> notices;
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto second = GpuLock::acquire("GPU-aaaa", "GPU 0 (test, GPU-aaaa)", true, [&](const std::string& m) {
      std::lock_guard lock(mu);
      notices.push_back(m);
    });
    got = true;
  });
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lock(mu);
      if (!notices.empty()) break;
    }
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(got) << "the waiter took a lock that was held";
  first.reset();
  waiter.join();
  EXPECT_TRUE(got);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].rfind("soltune: GPU 0 (test, GPU-aaaa) is in use by pid " + std::to_string(getpid()), 0), 0u)
      << notices[0];
  EXPECT_NE(notices[0].find("; waiting for it (--no-wait fails at once instead)"), std::string::npos) << notices[0];
}

TEST_F(GpuLockTest, AWaiterInAnotherProcessPrintsOnStderrAndGoesOnOnceFree) {
  // Forked before the lock is taken: a child forked later would share the holder's open file.
  const auto err = tmp_ / "stderr.txt";
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(go[1]);
    char c = 0;
    if (::read(go[0], &c, 1) != 1) _exit(4);
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) _exit(5);
    try {
      auto l = GpuLock::acquire("GPU-aaaa", "GPU 0 (test, GPU-aaaa)", true);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  ::close(go[0]);
  std::optional<GpuLock> first = GpuLock::acquire("GPU-aaaa", "GPU 0 (test, GPU-aaaa)", false);
  ASSERT_EQ(::write(go[1], "x", 1), 1);
  ::close(go[1]);
  for (int i = 0; i < 500 && test::read_file(err).find("waiting") == std::string::npos; ++i)
    std::this_thread::sleep_for(10ms);
  int st = 0;
  EXPECT_EQ(waitpid(child, &st, WNOHANG), 0) << "the waiter should still be waiting";
  first.reset();
  ASSERT_EQ(waitpid(child, &st, 0), child);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  const auto text = test::read_file(err);
  EXPECT_NE(text.find("is in use by pid " + std::to_string(getpid())), std::string::npos) << text;
  EXPECT_NE(text.find("waiting for it"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line: " << text;
}

TEST_F(GpuLockTest, AHolderKilledWithSigkillReleasesTheGpu) {
  const pid_t holder = forked_holder("GPU-aaaa");
  ASSERT_GT(holder, 0);
  const auto why = refusal("GPU-aaaa");
  EXPECT_NE(why.find("in use by pid " + std::to_string(holder)), std::string::npos) << why;
  ASSERT_EQ(kill(holder, SIGKILL), 0);
  int st = 0;
  ASSERT_EQ(waitpid(holder, &st, 0), holder);
  EXPECT_EQ(refusal("GPU-aaaa"), "");
}

TEST_F(GpuLockTest, AStaleHolderRecordIsNotNamed) {
  // A holder killed while it held the lock leaves its record; the next holder rewrites it, but a
  // waiter that reads a record of a process that is gone says "another process".
  const pid_t holder = forked_holder("GPU-aaaa");
  ASSERT_GT(holder, 0);
  ASSERT_EQ(kill(holder, SIGKILL), 0);
  int st = 0;
  ASSERT_EQ(waitpid(holder, &st, 0), holder);
  // Now hold it through another open file that does not write its record (read-only), so the
  // file still names the dead holder.
  const auto p = GpuLock::file_for("GPU-aaaa");
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  const auto why = refusal("GPU-aaaa");
  ::close(fd);
  EXPECT_NE(why.find("is in use by another process;"), std::string::npos) << why;
  EXPECT_EQ(why.find("pid"), std::string::npos) << why;
}

TEST_F(GpuLockTest, ProgramsTheHolderStartsDoNotInheritTheLock) {
  std::optional<GpuLock> held = GpuLock::acquire("GPU-aaaa", "", false);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(200ms);  // let it exec
  held.reset();
  // Had the sleeping program inherited the open file, it would hold the lock still.
  EXPECT_EQ(refusal("GPU-aaaa"), "");
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace soltune
