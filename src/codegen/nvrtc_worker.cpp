#include "codegen/nvrtc_worker.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <new>
#include <thread>

#include "codegen/nvrtc_cache.hpp"
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

void remove_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

// A hung NVRTC must not outlive a parent that was killed: its end of our output pipe closing is
// the sign (poll reports POLLERR on a pipe without readers, whatever the events asked for). Nobody
// else removes our temp dir (~180 MB of PCH per template) then, nor on SIGTERM or SIGHUP: this
// thread does, then exits. SIGINT is ignored: Ctrl-C reaches the whole process group, and the
// parent decides what it means (it closes our input, or dies, or kills us).
void exit_when_orphaned(int out_fd, std::filesystem::path tmpdir) {
  ::signal(SIGINT, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before the thread starts: every thread blocks them
  const int sig_fd = ::signalfd(-1, &set, SFD_CLOEXEC);
  std::thread([out_fd, sig_fd, tmpdir = std::move(tmpdir)] {
    pollfd p[2] = {{out_fd, 0, 0}, {sig_fd, POLLIN, 0}};
    for (;;) {
      const int r = ::poll(p, sig_fd >= 0 ? 2 : 1, -1);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return;
      if (p[0].revents & (POLLERR | POLLHUP)) {
        remove_dir(tmpdir);
        _exit(3);
      }
      if (p[1].revents & POLLIN) {
        signalfd_siginfo info{};
        const ssize_t n = ::read(sig_fd, &info, sizeof info);
        remove_dir(tmpdir);
        _exit(128 + (n == sizeof info ? static_cast<int>(info.ssi_signo) : SIGTERM));
      }
    }
  }).detach();
}

}  // namespace

std::string encode_compile_request(const CompileRequest& r, const std::vector<std::string>& options) {
  std::string msg = wire::frame(r.source_name) + wire::frame(r.source) + wire::frame(r.arch);
  add_list(msg, r.name_expressions);
  add_list(msg, options);
  return msg;
}

bool read_compile_request(int fd, CompileRequest& r, std::vector<std::string>& options) {
  if (!wire::read_frame(fd, r.source_name)) return false;  // end of input: done
  if (!wire::read_frame(fd, r.source) || !wire::read_frame(fd, r.arch) || !read_list(fd, r.name_expressions) ||
      !read_list(fd, options))
    throw Error("nvrtc-worker: truncated request");
  return true;
}

bool answer_compile_request(int fd, const CompileRequest& r, const std::vector<std::string>& options) {
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
  return wire::write_frame(fd, status) && wire::write_frame(fd, body);
}

std::filesystem::path worker_tmpdir(pid_t parent, pid_t worker) {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  return base / ("soltune-nvrtc-" + std::to_string(parent) + "-" + std::to_string(worker));
}

std::filesystem::path use_worker_tmpdir() {
  const auto dir = worker_tmpdir(::getppid(), ::getpid());
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  if (!std::filesystem::is_directory(dir, ec)) return {};  // NVRTC's default then
  ::setenv("TMPDIR", dir.c_str(), 1);
  return dir;
}

int nvrtc_worker_main(int in_fd, int out_fd) {
  const auto tmpdir = use_worker_tmpdir();
  exit_when_orphaned(out_fd, tmpdir);
  int code = 0;
  try {
    for (;;) {
      CompileRequest r;
      std::vector<std::string> options;
      if (!read_compile_request(in_fd, r, options)) break;  // end of input: done
      if (!answer_compile_request(out_fd, r, options)) {
        code = 1;
        break;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soltune %s\n", e.what());
    code = 1;
  }
  remove_dir(tmpdir);  // the parent may be gone (its end closed our input), or not wait for us
  return code;
}

}  // namespace soltune
