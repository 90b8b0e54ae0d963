#include "core/frames.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "core/fd_io.hpp"

namespace soltune::wire {

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
  return write_all(fd, bytes.data(), bytes.size());
}

}  // namespace soltune::wire
