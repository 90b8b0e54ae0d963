#pragma once
// RAII ownership of one nvrtcProgram, with every NVRTC call checked. Internal to src/codegen.
#include <nvrtc.h>

#include <string>
#include <vector>

namespace soltune {

// Throws Error("<call>: <nvrtcGetErrorString>") unless r is NVRTC_SUCCESS.
void nvrtc_check(nvrtcResult r, const char* call);

class NvrtcProgram {
 public:
  NvrtcProgram(const std::string& source, const std::string& name);
  ~NvrtcProgram();
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;

  void add_name_expression(const std::string& expr);
  // Returns NVRTC's verdict: SUCCESS, or COMPILATION / INVALID_OPTION for a rejected source or
  // option (the log says why). Any other code is an infrastructure failure and throws.
  nvrtcResult compile(const std::vector<std::string>& options);
  std::string log() const;
  std::vector<char> cubin() const;  // empty when NVRTC produced none (a virtual arch)
  std::string lowered_name(const std::string& expr) const;

  // After a compile with -pch (NVRTC 12.8+): when the PCH heap was too small to hold this
  // program's precompiled header, grows the heap to what it needed, once per process (the next
  // compile then creates it). A larger need, or a second one, leaves it without (slower, same code).
  // Single-threaded use only: resizing frees the heap. Returns true when it resized.
  bool grow_pch_heap_if_exhausted() const;

 private:
  nvrtcProgram prog_ = nullptr;
};

}  // namespace soltune
