#pragma once
// Reads the SM clock through NVML, loaded at run time (libnvidia-ml ships with the driver, not the
// toolkit): soltune records the clock with each measurement and never changes it. Without NVML
// every reading is empty and the measurements say so.
#include <optional>
#include <string>

namespace soltune {

class SmClock {
 public:
  explicit SmClock(const std::string& uuid);
  ~SmClock();
  SmClock(const SmClock&) = delete;
  SmClock& operator=(const SmClock&) = delete;
  std::optional<unsigned> mhz() const;
  bool available() const { return device_ != nullptr; }

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;
  int (*clock_info_)(void*, int, unsigned*) = nullptr;
  int (*shutdown_)() = nullptr;
};

// "SM clock 1980 -> 1980 MHz", with a warning when it moved by more than 2%.
std::string clock_note(std::optional<unsigned> before, std::optional<unsigned> after);

}  // namespace soltune
