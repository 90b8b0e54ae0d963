#include "core/frames.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "core/error.hpp"

namespace soltune::wire {
namespace {

bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

std::string frame(const std::string& payload) {
  char head[kHeader + 1];
  std::snprintf(head, sizeof head, "%016zx\n", payload.size());
  return std::string(head, kHeader) + payload;
}

size_t frame_length(const std::string& header) {
  if (header.size() != kHeader || header.back() != '\n') throw Error("protocol: malformed frame header");
  size_t v = 0;
  for (size_t i = 0; i + 1 < kHeader; ++i) {
    const char c = header[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
    if (d < 0) throw Error("protocol: malformed frame header");
    v = v * 16 + static_cast<size_t>(d);
  }
  if (v > (size_t(1) << 32)) throw Error("protocol: frame of " + std::to_string(v) + " bytes refused");
  return v;
}

bool read_frame(int fd, std::string& payload) {
  std::string head(kHeader, '\0');
  if (!read_all(fd, head.data(), kHeader)) return false;
  payload.assign(frame_length(head), '\0');
  return read_all(fd, payload.data(), payload.size());
}

bool write_frame(int fd, const std::string& payload) {
  const auto bytes = frame(payload);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace soltune::wire
