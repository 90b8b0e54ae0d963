#pragma once
// A child process with pipes to its stdin and stdout (RAII: killed and reaped on destruction).
// The GPU worker runs in one, so that a kernel that faults, hangs or corrupts its context costs
// that process only: the tuner kills it and starts another. So does an isolated NVRTC compile.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace soltune {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ChildProcess(const std::vector<std::string>& argv);  // throws Error if it cannot start
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  enum class IoStatus { ok, timeout, closed };
  using ReadStatus = IoStatus;
  // Writes everything; false when the child has gone (broken pipe).
  bool write_all(const std::string& bytes);
  // The same, giving up at the deadline: a child that stopped reading cannot block us.
  IoStatus write_all(const std::string& bytes, Clock::time_point deadline);
  void close_input();  // the child reads end of input
  // Reads exactly n bytes before the deadline.
  ReadStatus read_exact(size_t n, std::string& out, Clock::time_point deadline);
  void kill();                 // SIGKILL and reap
  // "exit code 3", "killed by signal 9 (Killed)"; waits up to grace_s for the child to end, then kills it.
  std::string exit_text(double grace_s = 1.0);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;  // our ends: the child's stdin (write) and stdout (read)
  std::optional<int> status_;
  void close_fds();
};

}  // namespace soltune
