#include "codegen/nvrtc_worker_pool.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

#include "codegen/nvrtc_cache.hpp"
#include "codegen/nvrtc_worker.hpp"
#include "core/child_process.hpp"
#include "core/error.hpp"
#include "core/frames.hpp"

namespace soltune {
namespace {

std::string seconds(double s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

CompileResult failed(const std::string& log) {
  CompileResult r;
  r.log = log + "\n";
  return r;
}

}  // namespace

// A worker process; on destruction it is killed (unless it has ended) and reaped, then its temp
// dir (NVRTC's PCH files) is removed.
class NvrtcWorkerPool::Worker {
 public:
  explicit Worker(const std::vector<std::string>& command) : proc(command) {}
  ~Worker() {
    proc.kill();
    std::error_code ec;
    std::filesystem::remove_all(worker_tmpdir(::getpid(), proc.pid()), ec);
  }
  // True when the process has ended (not reaped here: ChildProcess does that).
  bool ended() const {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(proc.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == proc.pid();
  }
  ChildProcess proc;
};

NvrtcWorkerPool::NvrtcWorkerPool(std::vector<std::string> command, double timeout_s)
    : command_(std::move(command)), timeout_s_(timeout_s) {}

NvrtcWorkerPool::~NvrtcWorkerPool() {
  // End of input ends a worker; NVRTC then removes its own PCH files. All at once, then wait.
  for (auto& w : idle_) w->proc.close_input();
  for (auto& w : idle_) w->proc.exit_text(2.0);
  idle_.clear();
}

std::vector<pid_t> NvrtcWorkerPool::idle_pids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<pid_t> out;
  for (const auto& w : idle_) out.push_back(w->proc.pid());
  return out;
}

std::unique_ptr<NvrtcWorkerPool::Worker> NvrtcWorkerPool::take(bool& reused) {
  for (;;) {
    std::unique_ptr<Worker> w;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (idle_.empty()) break;
      w = std::move(idle_.back());
      idle_.pop_back();
    }
    if (!w->ended()) {
      reused = true;
      return w;
    }
    // Ended while idle (killed from outside, out of memory): dropped here, reaped and cleaned up.
  }
  reused = false;
  auto w = std::make_unique<Worker>(command_);
  ++started_;
  return w;
}

void NvrtcWorkerPool::put_back(std::unique_ptr<Worker> w) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(w));
}

IsolatedCompile NvrtcWorkerPool::compile(const CompileRequest& r, const std::vector<std::string>& options,
                                         double timeout_s) {
  using Clock = ChildProcess::Clock;
  using IoStatus = ChildProcess::IoStatus;
  const double limit = timeout_s > 0 ? timeout_s : limit_s();
  const auto began = Clock::now();
  const auto deadline = began + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit));
  const std::string msg = encode_compile_request(r, options);

  bool reused = false;
  auto w = take(reused);
  IoStatus st = w->proc.write_all(msg, deadline);
  if (st == IoStatus::closed && reused) {
    // It died after its last answer, before reading this request: not this request's doing.
    w = take(reused);
    st = w->proc.write_all(msg, deadline);
  }
  ChildProcess& child = w->proc;

  auto timed_out = [&] {
    w.reset();  // killed
    return IsolatedCompile{failed("NVRTC did not finish within " + seconds(limit) +
                                  " s: compile abandoned (the compile process was killed)"),
                           false, true};
  };
  auto died = [&] {
    const std::string exit = child.exit_text();
    if (exit == "exit code 127")  // exec failed: a broken setup, not this candidate's fault
      throw Error("cannot start the NVRTC compile helper '" + command_[0] + "' (" + exit + ")");
    return IsolatedCompile{failed("the NVRTC compile process died (" + exit + ")"), false};
  };
  auto garbage = [&](const std::string& what) {
    w.reset();  // killed
    return IsolatedCompile{failed("the NVRTC compile process answered garbage (" + what + "): it was killed"), false};
  };
  // One frame before the deadline; false with st set otherwise. Throws Error on a garbage header.
  auto read_frame = [&](std::string& payload) {
    std::string head;
    st = child.read_exact(wire::kHeader, head, deadline);
    if (st == IoStatus::ok) st = child.read_exact(wire::frame_length(head), payload, deadline);
    return st == IoStatus::ok;
  };
  std::string status, body;
  try {
    if (st == IoStatus::ok && read_frame(status)) read_frame(body);
  } catch (const Error& e) {
    return garbage(e.what());
  }
  if (st == IoStatus::timeout) return timed_out();
  if (st == IoStatus::closed) return died();
  if (status == "error") {  // a well-formed answer: the worker is fine, the failure is reported
    put_back(std::move(w));
    throw Error(body);
  }
  auto res = status == "ok" ? decode_cache_entry(body, "") : std::nullopt;
  if (!res) return garbage("an undecodable result");
  put_back(std::move(w));
  if (res->ok) {  // what a compile takes here: the limit follows it
    const double s = std::chrono::duration<double>(Clock::now() - began).count();
    for (double seen = longest_ok_s_.load(); s > seen && !longest_ok_s_.compare_exchange_weak(seen, s);) {
    }
  }
  return {std::move(*res), true};
}

}  // namespace soltune
