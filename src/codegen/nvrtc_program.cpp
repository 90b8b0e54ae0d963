#include "codegen/nvrtc_program.hpp"

#include <cuda.h>  // CUDA_VERSION

#include <algorithm>
#include <atomic>

#include "core/error.hpp"

namespace soltune {

void nvrtc_check(nvrtcResult r, const char* call) {
  if (r != NVRTC_SUCCESS) throw Error(std::string(call) + ": " + nvrtcGetErrorString(r));
}

NvrtcProgram::NvrtcProgram(const std::string& source, const std::string& name) {
  nvrtc_check(nvrtcCreateProgram(&prog_, source.c_str(), name.c_str(), 0, nullptr, nullptr),
              "nvrtcCreateProgram");
}

NvrtcProgram::~NvrtcProgram() {
  if (prog_) nvrtcDestroyProgram(&prog_);  // nothing useful to do with a failure here
}

void NvrtcProgram::add_name_expression(const std::string& expr) {
  nvrtc_check(nvrtcAddNameExpression(prog_, expr.c_str()), "nvrtcAddNameExpression");
}

nvrtcResult NvrtcProgram::compile(const std::vector<std::string>& options) {
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(prog_, static_cast<int>(argv.size()), argv.data());
  if (r == NVRTC_SUCCESS || r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION) return r;
  // Out of memory, a missing builtins library...: not the source's fault. Keep the log for context.
  std::string msg = std::string("nvrtcCompileProgram: ") + nvrtcGetErrorString(r);
  try {
    if (const std::string l = log(); !l.empty()) msg += "\n" + l;
  } catch (const Error&) {
  }
  throw Error(msg);
}

std::string NvrtcProgram::log() const {
  size_t n = 0;
  nvrtc_check(nvrtcGetProgramLogSize(prog_, &n), "nvrtcGetProgramLogSize");
  std::string s(n, '\0');
  if (n) nvrtc_check(nvrtcGetProgramLog(prog_, s.data()), "nvrtcGetProgramLog");
  while (!s.empty() && s.back() == '\0') s.pop_back();  // the size counts the terminator
  // ptxas's messages may follow the front end's own terminated log: text, not a NUL, between them.
  std::replace(s.begin(), s.end(), '\0', '\n');
  return s;
}

std::vector<char> NvrtcProgram::cubin() const {
  size_t n = 0;
  nvrtc_check(nvrtcGetCUBINSize(prog_, &n), "nvrtcGetCUBINSize");
  std::vector<char> v(n);
  if (n) nvrtc_check(nvrtcGetCUBIN(prog_, v.data()), "nvrtcGetCUBIN");
  return v;
}

std::string NvrtcProgram::lowered_name(const std::string& expr) const {
  const char* lowered = nullptr;
  nvrtc_check(nvrtcGetLoweredName(prog_, expr.c_str(), &lowered),
              ("nvrtcGetLoweredName(" + expr + ")").c_str());
  if (!lowered) throw Error("nvrtcGetLoweredName: no name for '" + expr + "'");
  return lowered;  // owned by the program: copied before it is destroyed
}

bool NvrtcProgram::grow_pch_heap_if_exhausted() const {
#if CUDA_VERSION >= 12080
  static std::atomic<bool> resized{false};
  constexpr size_t kMaxHeap = size_t(2) << 30;  // beyond this, compile without a PCH
  if (resized.load() || nvrtcGetPCHCreateStatus(prog_) != NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) return false;
  size_t need = 0, have = 0;
  if (nvrtcGetPCHHeapSizeRequired(prog_, &need) != NVRTC_SUCCESS || nvrtcGetPCHHeapSize(&have) != NVRTC_SUCCESS ||
      need > kMaxHeap || resized.exchange(true))
    return false;
  // The heap may be full of other templates' headers rather than too small for this one's: double
  // it at least. Resizing drops what it holds; later compiles create their PCH again.
  return nvrtcSetPCHHeapSize(std::min(kMaxHeap, std::max(2 * have, need + need / 4))) == NVRTC_SUCCESS;
#else
  return false;
#endif
}

}  // namespace soltune
