#include "eval/nvml_clock.hpp"

#include <dlfcn.h>

#include <cmath>

namespace soltune {
namespace {
constexpr int kClockSm = 1;  // NVML_CLOCK_SM
}

SmClock::SmClock(const std::string& uuid) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;
  auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
  auto by_uuid = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByUUID"));
  clock_info_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
  shutdown_ = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlShutdown"));
  if (!init || !by_uuid || !clock_info_ || !shutdown_ || init() != 0) {
    shutdown_ = nullptr;
    return;
  }
  void* dev = nullptr;
  if (by_uuid(uuid.c_str(), &dev) == 0) device_ = dev;
}

SmClock::~SmClock() {
  if (shutdown_) shutdown_();
  if (lib_) dlclose(lib_);
}

std::optional<unsigned> SmClock::mhz() const {
  unsigned v = 0;
  if (!device_ || clock_info_(device_, kClockSm, &v) != 0) return std::nullopt;
  return v;
}

std::string clock_note(std::optional<unsigned> before, std::optional<unsigned> after) {
  if (!before || !after) return "SM clock unknown (no NVML)";
  std::string s = "SM clock " + std::to_string(*before) + " -> " + std::to_string(*after) + " MHz";
  if (std::fabs(double(*after) - double(*before)) > 0.02 * double(*before)) s += " (moved during the measurement)";
  return s;
}

}  // namespace soltune
