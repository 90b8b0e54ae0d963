// soltune kb gc: remove NVRTC compile-cache entries (and leftover temp files) unused for a while.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "cli/kb_common.hpp"
#include "codegen/compiler.hpp"

namespace soltune::cli::kb_commands {
namespace {

namespace fs = std::filesystem;

bool is_hex32(std::string_view s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// An entry of codegen/nvrtc_cache: "<32 hex digits>.nvrtc".
bool entry_name(std::string_view n) {
  return n.size() == 38 && n.substr(32) == ".nvrtc" && is_hex32(n.substr(0, 32));
}

// A cache write in progress, or left by a crash: ".tmp.<32 hex>.<pid>.<thread>.<counter>".
bool temp_name(std::string_view n) {
  if (n.substr(0, 5) != ".tmp." || n.size() < 5 + 33 || !is_hex32(n.substr(5, 32)) || n[37] != '.') return false;
  std::string_view rest = n.substr(38);
  for (int i = 0; i < 3; ++i) {
    const size_t dot = rest.find('.');
    if (!is_digits(rest.substr(0, dot))) return false;
    if (i < 2 && dot == std::string_view::npos) return false;
    if (i == 2 && dot != std::string_view::npos) return false;
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  return true;
}

// Whether the file starts with the cache entry magic. Read without moving its access time (that
// is what says it was last used): O_NOATIME where permitted, else the old time is put back.
bool has_entry_magic(const fs::path& p, const struct stat& before) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  char head[8] = {};
  const ssize_t n = ::read(fd, head, sizeof head);
  const struct timespec times[2] = {before.st_atim, {0, UTIME_OMIT}};
  (void)::futimens(fd, times);
  ::close(fd);
  return n == 8 && std::memcmp(head, "SOLNVRTC", 8) == 0;
}

double seconds_of(const struct timespec& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9; }

}  // namespace

int gc_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune kb gc options");
  std::string dir_arg;
  double days = 30;
  desc.add_options()("cache-dir", po::value(&dir_arg),
                     "NVRTC cache folder (default: $SOLTUNE_CACHE_DIR, else $XDG_CACHE_HOME/soltune/nvrtc, else "
                     "~/.cache/soltune/nvrtc)")(
      "older-than", po::value(&days)->default_value(30), "remove entries neither read nor written for more than DAYS")(
      "dry-run,n", "only say what would be removed");
  const auto p = parse(desc, args, "gc", "[--cache-dir DIR] [--older-than DAYS] [--dry-run]");
  if (!p) return 0;
  if (!p->positional.empty()) throw UsageError("kb gc takes no arguments\n" + to_string(desc));
  if (!std::isfinite(days) || days < 0) throw UsageError("kb gc: --older-than must be a number of days >= 0");
  const bool dry = p->vm.count("dry-run") > 0;
  fs::path dir = dir_arg;
  if (dir.empty()) {
    dir = default_compiler_options().cache_dir;
    if (dir.empty()) throw Error("the NVRTC cache is off (SOLTUNE_CACHE_DIR=off): pass --cache-dir DIR");
  }
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (!fs::exists(st)) {
    std::printf("no NVRTC cache at %s: nothing to remove\n", dir.c_str());
    return 0;
  }
  if (!fs::is_directory(st)) throw Error(dir.string() + ": not a folder");

  // A temp file is a write in flight for milliseconds: one an hour old was left by a crash.
  constexpr double kTempAge = 3600;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double max_age = days * 86400;
  int64_t removed = 0, temps = 0, kept = 0, foreign = 0, failed = 0;
  uint64_t freed = 0;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot list: " + ec.message());
  std::vector<fs::path> paths;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(dir.string() + ": cannot list: " + ec.message());
    paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    const std::string name = path.filename().string();
    const bool entry = entry_name(name), temp = !entry && temp_name(name);
    struct stat sb {};
    if (!entry && !temp) continue;                                  // not ours: never touched
    if (::lstat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) {  // a link or a folder: not ours either
      ++foreign;
      continue;
    }
    const double age = now - std::max(seconds_of(sb.st_atim), seconds_of(sb.st_mtim));
    if (age <= (temp ? kTempAge : max_age)) {
      kept += entry;
      continue;
    }
    if (entry && !has_entry_magic(path, sb)) {
      ++foreign;
      std::printf("skipped %s: named like a cache entry, but is not one\n", name.c_str());
      continue;
    }
    if (!dry && ::unlink(path.c_str()) != 0) {
      std::fprintf(stderr, "soltune: cannot remove %s: %s\n", path.c_str(), std::strerror(errno));
      ++failed;
      continue;
    }
    std::printf("%s %s%s: %lld bytes, last used %.1f days ago\n", dry ? "would remove" : "removed",
                temp ? "leftover temp file " : "", name.c_str(), static_cast<long long>(sb.st_size), age / 86400);
    (temp ? temps : removed) += 1;
    freed += static_cast<uint64_t>(sb.st_size);
  }
  std::printf("%s %s and %s from %s, %s %llu bytes (%.1f MiB); kept %s used within %g days\n",
              dry ? "would remove" : "removed", plural(removed, "cache entry").c_str(),
              plural(temps, "temp file").c_str(), dir.c_str(), dry ? "would free" : "freed",
              static_cast<unsigned long long>(freed), static_cast<double>(freed) / (1 << 20),
              plural(kept, "entry").c_str(), days);
  return failed ? 1 : 0;
}

}  // namespace soltune::cli::kb_commands
