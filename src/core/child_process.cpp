#include "core/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace soltune {

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error("child process: empty command");
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    ::close(to_child[0]);
    ::close(to_child[1]);
    throw Error(std::string("pipe: ") + std::strerror(errno));
  }
  const std::string cannot = "soltune: cannot start " + argv[0] + "\n";  // built before fork
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until exec.
    dup2(to_child[0], STDIN_FILENO);
    dup2(from_child[1], STDOUT_FILENO);
    execvp(args[0], args.data());
    (void)!::write(STDERR_FILENO, cannot.data(), cannot.size());
    _exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  in_ = to_child[1];
  out_ = from_child[0];
  fcntl(in_, F_SETFL, fcntl(in_, F_GETFL) | O_NONBLOCK);  // so that writes can honour a deadline
  signal(SIGPIPE, SIG_IGN);  // a dead child must be an error value on write, not our death
}

ChildProcess::~ChildProcess() { kill(); }

void ChildProcess::close_fds() {
  if (in_ >= 0) ::close(in_);
  if (out_ >= 0) ::close(out_);
  in_ = out_ = -1;
}

bool ChildProcess::write_all(const std::string& bytes) {
  return write_all(bytes, Clock::time_point::max()) == IoStatus::ok;
}

ChildProcess::IoStatus ChildProcess::write_all(const std::string& bytes, Clock::time_point deadline) {
  if (in_ < 0) return IoStatus::closed;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(in_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {  // the pipe is full: wait for room
      int wait_ms = 1000;
      if (deadline != Clock::time_point::max()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return IoStatus::timeout;
        wait_ms = static_cast<int>(std::min<long long>(left, 1000));
      }
      pollfd p{in_, POLLOUT, 0};
      if (::poll(&p, 1, wait_ms) < 0 && errno != EINTR) return IoStatus::closed;
      continue;
    }
    if (n <= 0) return IoStatus::closed;
    done += static_cast<size_t>(n);
  }
  return IoStatus::ok;
}

void ChildProcess::close_input() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

ChildProcess::IoStatus ChildProcess::read_exact(size_t n, std::string& out, Clock::time_point deadline) {
  out.clear();
  out.reserve(n);
  char buf[65536];
  while (out.size() < n) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadStatus::timeout;
    pollfd p{out_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ReadStatus::closed;
    if (r == 0) continue;
    const ssize_t got = ::read(out_, buf, std::min(sizeof buf, n - out.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return ReadStatus::closed;
    out.append(buf, static_cast<size_t>(got));
  }
  return ReadStatus::ok;
}

void ChildProcess::kill() {
  close_fds();
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    status_ = st;
  }
}

std::string ChildProcess::exit_text(double grace_s) {
  if (pid_ > 0 && !status_) {
    int st = 0;
    // Give a child that closed its pipe a moment to finish exiting, then force it.
    for (int i = 0; i < static_cast<int>(grace_s * 50); ++i) {
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        status_ = st;
        break;
      }
      usleep(20000);
    }
    if (!status_) kill();
  }
  if (!status_) return "not started";
  const int st = *status_;
  if (WIFEXITED(st)) return "exit code " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) return "killed by signal " + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) + ")";
  return "ended (status " + std::to_string(st) + ")";
}

}  // namespace soltune
