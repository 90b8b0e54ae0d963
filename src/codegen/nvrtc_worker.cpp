#include "codegen/nvrtc_worker.hpp"

#include <poll.h>
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

// A hung NVRTC must not outlive a parent that was killed: its end of our output pipe closing is
// the sign (poll reports POLLERR on a pipe without readers, whatever the events asked for). Nobody
// else will remove its temp dir then.
void exit_when_orphaned(int out_fd, std::filesystem::path tmpdir) {
  std::thread([out_fd, tmpdir = std::move(tmpdir)] {
    pollfd p{out_fd, 0, 0};
    for (;;) {
      const int r = ::poll(&p, 1, -1);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return;
      if (p.revents & (POLLERR | POLLHUP)) {
        std::error_code ec;
        if (!tmpdir.empty()) std::filesystem::remove_all(tmpdir, ec);
        _exit(3);
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
  exit_when_orphaned(out_fd, use_worker_tmpdir());
  try {
    for (;;) {
      CompileRequest r;
      std::vector<std::string> options;
      if (!read_compile_request(in_fd, r, options)) return 0;
      if (!answer_compile_request(out_fd, r, options)) return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soltune %s\n", e.what());
    return 1;
  }
}

}  // namespace soltune
