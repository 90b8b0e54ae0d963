#pragma once
// Whole reads and writes on a blocking file descriptor, retried on EINTR and short counts: what the
// pipe protocols' framing and the output files share.
#include <cstddef>

namespace soltune {

// False (errno set, or 0 at end of input) when the first failing call returns.
bool read_all(int fd, char* p, size_t n);
bool write_all(int fd, const char* p, size_t n);

}  // namespace soltune
