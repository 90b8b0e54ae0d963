#include "eval/gpu_lock.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/error.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

std::string sys_error(const std::string& what, const fs::path& p) {
  return what + " " + p.string() + ": " + std::strerror(errno);
}

// Sticky and writable by everyone, as /tmp: every user's runs must meet at the same files.
void make_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);  // a failure shows at mkdir, with its reason
  if (::mkdir(dir.c_str(), 01777) == 0) {
    (void)::chmod(dir.c_str(), 01777);  // mkdir's mode went through the umask
    return;
  }
  if (errno != EEXIST) throw Error(sys_error("cannot create the GPU lock folder", dir));
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0) throw Error(sys_error("cannot read the GPU lock folder", dir));
  if (!S_ISDIR(st.st_mode)) throw Error("the GPU lock folder " + dir.string() + " is not a folder");
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int take() { return std::exchange(fd, -1); }
};

// O_CLOEXEC: workers and compilers this process starts must not hold the lock after it ends.
// O_NOFOLLOW: the folder is shared; a link planted there must not redirect what the holder writes.
int open_lock_file(const fs::path& p, bool& writable) {
  constexpr int kFlags = O_CLOEXEC | O_NOFOLLOW;
  for (int attempt = 1;; ++attempt) {
    // An existing file is opened without O_CREAT: fs.protected_regular refuses O_CREAT on another
    // user's file in a sticky folder.
    Fd f{::open(p.c_str(), O_RDWR | kFlags)};
    writable = f.fd >= 0;
    if (f.fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
      f.fd = ::open(p.c_str(), O_RDONLY | kFlags);  // flock works on a read-only file too
    if (f.fd < 0 && errno == ENOENT) {
      f.fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | kFlags, 0666);
      if (f.fd >= 0) {
        (void)::fchmod(f.fd, 0666);  // open's mode went through the umask; other users lock it too
        writable = true;
      } else if ((errno == EEXIST || errno == EACCES) && attempt < 3) {
        continue;  // created by another process meanwhile: open it as an existing file
      } else {
        throw Error(sys_error("cannot create the GPU lock file", p));
      }
    }
    if (f.fd < 0) throw Error(sys_error("cannot open the GPU lock file", p));
    struct stat st{};
    if (::fstat(f.fd, &st) != 0) throw Error(sys_error("cannot read the GPU lock file", p));
    if (!S_ISREG(st.st_mode)) throw Error("the GPU lock file " + p.string() + " is not a regular file");
    if (st.st_nlink != 1) writable = false;  // a file with other names is locked, never written
    return f.take();
  }
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  char buf[64];
  if (!gmtime_r(&t, &tm) || std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) return "";
  return buf;
}

std::string user_name() {
  const uid_t uid = ::geteuid();
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) return pw.pw_name;
  return "uid " + std::to_string(uid);
}

// One line: NULs between arguments and any control character become spaces.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  std::string c = s.str();
  for (auto& ch : c)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
  while (!c.empty() && c.back() == ' ') c.pop_back();
  if (c.size() > 1000) c = c.substr(0, 1000) + "...";
  return c;
}

// What the holder writes after taking the lock: "key value" lines.
std::string identity() {
  return "pid " + std::to_string(::getpid()) + "\nuser " + user_name() + "\nsince " + utc_now() + "\ncommand " +
         command_line() + "\n";
}

// "pid 4242 of alice (soltune tune ...), since 2026-12-01 20:01:02 UTC", from the holder's file.
// A file that is empty (a holder that could not write it, or has not yet), unreadable, or names a
// process that no longer exists (left by a holder that was killed) says nothing reliable.
std::string describe_holder(int fd) {
  const std::string unknown = "another process";
  char buf[4096];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  if (n <= 0) return unknown;
  std::istringstream in(std::string(buf, static_cast<size_t>(n)));
  long pid = 0;
  std::string line, user, since, command;
  while (std::getline(in, line)) {
    const auto sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const auto key = line.substr(0, sp), value = line.substr(sp + 1);
    if (key == "pid") pid = std::strtol(value.c_str(), nullptr, 10);
    if (key == "user") user = value;
    if (key == "since") since = value;
    if (key == "command") command = value;
  }
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) return unknown;
  std::string s = "pid " + std::to_string(pid);
  if (!user.empty()) s += " of " + user;
  if (!command.empty()) s += " (" + command + ")";
  if (!since.empty()) s += ", since " + since;
  return s;
}

// True when taken, false when another open file holds it.
bool lock(int fd, const fs::path& p, bool block) {
  for (;;) {
    if (::flock(fd, block ? LOCK_EX : LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    if (!block && errno == EWOULDBLOCK) return false;
    throw Error(sys_error("cannot lock the GPU lock file", p));
  }
}

}  // namespace

fs::path GpuLock::folder() {
  if (const char* env = std::getenv("SOLTUNE_LOCK_DIR"); env && *env) {
    fs::path p = fs::path(env).lexically_normal();
    if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();  // "dir/"
    return p;
  }
  return "/tmp/soltune-locks";
}

fs::path GpuLock::file_for(const std::string& key) {
  std::string slug = key.empty() ? "unknown" : key;
  for (auto& c : slug)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return folder() / (slug + ".lock");
}

GpuLock GpuLock::acquire(const std::string& key, const std::string& label, bool wait, const Notice& notice) {
  make_folder(folder());
  const auto p = file_for(key);
  bool writable = false;
  Fd f{open_lock_file(p, writable)};
  if (!lock(f.fd, p, false)) {
    const std::string what = (label.empty() ? "GPU " + key : label) + " is in use by " + describe_holder(f.fd);
    if (!wait) throw Error(what + "; without --no-wait this run would wait for it");
    const std::string msg = "soltune: " + what + "; waiting for it (--no-wait fails at once instead)";
    if (notice) {
      notice(msg);
    } else {
      std::fprintf(stderr, "%s\n", msg.c_str());
      std::fflush(stderr);  // seen before the wait, whatever stderr's buffering
    }
    lock(f.fd, p, true);
  }
  GpuLock held(f.take(), p);  // from here on released (and its file emptied) however this ends
  held.writable_ = writable;
  if (writable) {
    const std::string id = identity();
    if (::ftruncate(held.fd_, 0) != 0) throw Error(sys_error("cannot write the GPU lock file", p));
    const ssize_t n = ::pwrite(held.fd_, id.data(), id.size(), 0);
    if (n < 0) throw Error(sys_error("cannot write the GPU lock file", p));
    if (static_cast<size_t>(n) != id.size()) throw Error("cannot write the GPU lock file " + p.string() + ": short write");
  }
  return held;
}

GpuLock::GpuLock(GpuLock&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), writable_(o.writable_), path_(std::move(o.path_)) {}

GpuLock& GpuLock::operator=(GpuLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::exchange(o.fd_, -1);
    writable_ = o.writable_;
    path_ = std::move(o.path_);
  }
  return *this;
}

GpuLock::~GpuLock() { release(); }

void GpuLock::release() noexcept {
  if (fd_ < 0) return;
  if (writable_) (void)!::ftruncate(fd_, 0);  // still held: a waiter reading it next finds no stale holder
  ::close(fd_);                               // drops the lock
  fd_ = -1;
}

std::string gpu_label(int index, const DeviceInfo& d) {
  return "GPU " + std::to_string(index) + " (" + d.name + ", " + d.uuid + ")";
}

}  // namespace soltune
