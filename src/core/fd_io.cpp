#include "core/fd_io.hpp"

#include <unistd.h>

#include <cerrno>

namespace soltune {
namespace {
// Calls io(fd, p, n) until n bytes have moved: EINTR retries, a short count goes on from there.
template <typename Char, typename Io>
bool move_all(int fd, Char* p, size_t n, Io io) {
  while (n > 0) {
    const ssize_t moved = io(fd, p, n);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) return false;
    p += moved;
    n -= static_cast<size_t>(moved);
  }
  return true;
}
}  // namespace

bool read_all(int fd, char* p, size_t n) { return move_all(fd, p, n, ::read); }
bool write_all(int fd, const char* p, size_t n) { return move_all(fd, p, n, ::write); }

}  // namespace soltune
