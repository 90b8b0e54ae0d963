#pragma once
// Length-prefixed frames ("%016zx\n" then the bytes): the framing of soltune's pipe protocols (the
// GPU worker, the NVRTC compile helper). Frames are bytes; what they hold is the protocol's business.
#include <cstddef>
#include <string>

namespace soltune::wire {

std::string frame(const std::string& payload);
constexpr size_t kHeader = 17;
// Parses a frame header; throws Error on garbage (a peer that answers nonsense).
size_t frame_length(const std::string& header);

// Blocking frame I/O on file descriptors (the child's side). False at end of input.
bool read_frame(int fd, std::string& payload);
bool write_frame(int fd, const std::string& payload);

}  // namespace soltune::wire
