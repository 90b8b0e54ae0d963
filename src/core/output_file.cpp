#include "core/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "core/fd_io.hpp"

namespace soltune {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const fs::path& out, const std::string& what, int err) {
  throw Error(out.string() + ": " + what + ": " + std::strerror(err));
}

// A FIFO or a character device: opened and written as `>` in a shell would, never replaced.
void write_into(const fs::path& out, const fs::path& target, const std::string& text) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail(out, "cannot open for writing", errno);
  const bool ok = write_all(fd, text.data(), text.size());
  const int err = errno;
  if (::close(fd) != 0 && ok) fail(out, "cannot write", errno);
  if (!ok) fail(out, "cannot write", err);
}

// A regular file (or a new one): a temporary beside the target, renamed over it. An existing file
// keeps its permissions (and, where this process may set it, its owner).
void replace_whole(const fs::path& out, const fs::path& target, const struct stat* old, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path tmp = dir / ("." + target.filename().string() + ".soltune-" + std::to_string(::getpid()) + "-" +
                              std::to_string(counter++));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // the umask applies
  if (fd < 0) fail(out, "cannot write (" + tmp.string() + ")", errno);
  bool ok = write_all(fd, text.data(), text.size());
  int err = errno;
  if (ok && old) {
    if (::fchmod(fd, old->st_mode & 07777) != 0) {
      ok = false;
      err = errno;
    }
    (void)!::fchown(fd, old->st_uid, old->st_gid);  // only root may; others keep their own files anyway
  }
  if (ok && ::fsync(fd) != 0) {  // a full disk may show only here
    ok = false;
    err = errno;
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), target.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    fail(out, "cannot write", err);
  }
}

}  // namespace

std::optional<int> own_descriptor(const fs::path& out) {
  const std::string s = out.string();
  if (s == "-" || s == "/dev/stdout") return 1;
  if (s == "/dev/stderr") return 2;
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"), "/proc/" + std::to_string(::getpid()) + "/fd/"}) {
    if (s.rfind(prefix, 0) != 0 || s.size() == prefix.size() || s.size() > prefix.size() + 9) continue;
    const std::string n = s.substr(prefix.size());
    if (n.find_first_not_of("0123456789") != std::string::npos) continue;
    return std::stoi(n);
  }
  return std::nullopt;
}

std::FILE* report_stream(const fs::path& out) { return own_descriptor(out) == std::optional<int>(1) ? stderr : stdout; }

bool is_stream_output(const fs::path& out) {
  if (own_descriptor(out)) return true;
  struct stat st {};
  return ::stat(out.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

void write_output_file(const fs::path& out, const std::string& text) {
  if (out.empty()) throw Error("an empty output path");
  if (const auto fd = own_descriptor(out)) {
    // Through the descriptor itself: reopening its path would start a regular file over (and renaming
    // a temporary over it would replace what the shell wrote there before).
    struct stat st {};
    if (::fstat(*fd, &st) != 0) fail(out, "not an open descriptor of soltune", errno);
    std::fflush(*fd == 2 ? stderr : stdout);  // what the command printed there comes first
    if (!write_all(*fd, text.data(), text.size())) fail(out, "cannot write", errno);
    return;
  }
  // Follow a chain of symbolic links to what they name: the links stay, their target is written.
  fs::path target = out;
  struct stat st {};
  bool exists = false;
  for (int hops = 0;; ++hops) {
    if (::lstat(target.c_str(), &st) != 0) {
      if (errno != ENOENT) fail(out, "cannot check", errno);
      break;  // a new file (also where a dangling link points)
    }
    if (!S_ISLNK(st.st_mode)) {
      exists = true;
      break;
    }
    if (hops >= 40) fail(out, "cannot follow", ELOOP);
    std::error_code ec;
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) throw Error(out.string() + ": cannot read the link: " + ec.message());
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  if (!exists) return replace_whole(out, target, nullptr, text);
  if (S_ISREG(st.st_mode)) return replace_whole(out, target, &st, text);
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return write_into(out, target, text);
  if (S_ISDIR(st.st_mode)) throw Error(out.string() + ": is a folder; -o takes a file name");
  throw Error(out.string() + ": not a regular file, a FIFO or a character device; not written");
}

}  // namespace soltune
