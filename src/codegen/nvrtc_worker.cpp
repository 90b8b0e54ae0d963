#include "codegen/nvrtc_worker.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <new>
#include <sstream>
#include <thread>

#include "codegen/nvrtc_cache.hpp"
#include "core/child_process.hpp"
#include "core/error.hpp"
#include "core/frames.hpp"

namespace soltune {
namespace {

constexpr size_t kMaxCount = 1 << 20;

void add_list(std::string& msg, const std::vector<std::string>& items) {
  msg += wire::frame(std::to_string(items.size()));
  for (const auto& s : items) msg += wire::frame(s);
}

bool read_list(int fd, std::vector<std::string>& items) {
  std::string count;
  if (!wire::read_frame(fd, count)) return false;
  if (count.empty() || count.size() > 7 || count.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(count) > kMaxCount)
    throw Error("nvrtc-worker: malformed count '" + count + "'");
  items.resize(std::stoul(count));
  for (auto& s : items)
    if (!wire::read_frame(fd, s)) return false;
  return true;
}

// A hung NVRTC must not outlive a parent that was killed: its end of our output pipe closing is
// the sign (poll reports POLLERR on a pipe without readers, whatever the events asked for).
void exit_when_orphaned(int out_fd) {
  std::thread([out_fd] {
    pollfd p{out_fd, 0, 0};
    for (;;) {
      const int r = ::poll(&p, 1, -1);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return;
      if (p.revents & (POLLERR | POLLHUP)) _exit(3);
    }
  }).detach();
}

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

int nvrtc_worker_main(int in_fd, int out_fd) {
  exit_when_orphaned(out_fd);
  try {
    for (;;) {
      CompileRequest r;
      std::vector<std::string> options;
      if (!wire::read_frame(in_fd, r.source_name)) return 0;  // end of input: done
      if (!wire::read_frame(in_fd, r.source) || !wire::read_frame(in_fd, r.arch) ||
          !read_list(in_fd, r.name_expressions) || !read_list(in_fd, options))
        throw Error("nvrtc-worker: truncated request");
      std::string status = "ok", body;
      try {
        body = encode_cache_entry(nvrtc_compile(r, options));
      } catch (const std::bad_alloc&) {
        status = "error";
        body = "compiling " + r.source_name + ": out of memory";
      } catch (const std::exception& e) {
        status = "error";
        body = e.what();
      }
      if (!wire::write_frame(out_fd, status) || !wire::write_frame(out_fd, body)) return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soltune %s\n", e.what());
    return 1;
  }
}

IsolatedCompile nvrtc_compile_isolated(const std::vector<std::string>& command, double timeout_s,
                                       const CompileRequest& r, const std::vector<std::string>& options) {
  using Clock = ChildProcess::Clock;
  using IoStatus = ChildProcess::IoStatus;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  ChildProcess child(command);
  std::string msg = wire::frame(r.source_name) + wire::frame(r.source) + wire::frame(r.arch);
  add_list(msg, r.name_expressions);
  add_list(msg, options);

  auto timed_out = [&] {
    child.kill();
    return IsolatedCompile{failed("NVRTC did not finish within " + seconds(timeout_s) +
                                  " s: compile abandoned (the compile process was killed)"),
                           false};
  };
  auto died = [&] {
    const std::string exit = child.exit_text();
    if (exit == "exit code 127")  // exec failed: a broken setup, not this candidate's fault
      throw Error("cannot start the NVRTC compile helper '" + command[0] + "' (" + exit + ")");
    return IsolatedCompile{failed("the NVRTC compile process died (" + exit + ")"), false};
  };
  auto garbage = [&](const std::string& what) {
    child.kill();
    return IsolatedCompile{failed("the NVRTC compile process answered garbage (" + what + "): it was killed"), false};
  };
  IoStatus st = child.write_all(msg, deadline);
  if (st == IoStatus::ok) child.close_input();  // one request per child
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
  if (status == "error") throw Error(body);
  auto res = status == "ok" ? decode_cache_entry(body, "") : std::nullopt;
  if (!res) return garbage("an undecodable result");
  return {std::move(*res), true};
}

}  // namespace soltune
