#pragma once
// One measuring run per GPU at a time: timings taken while another run loads the same GPU are
// disturbed, and two runs on one knowledge base would measure the same configurations twice.
// A GpuLock is an flock(2) on a file per GPU (keyed by its UUID) in a folder every user of the
// machine shares; the kernel drops it when its holder ends, however it ends (SIGKILL included).
// flock belongs to the open file, so two GpuLocks of one process exclude each other as well.
#include <filesystem>
#include <functional>
#include <string>

#include "core/device.hpp"

namespace soltune {

class GpuLock {
 public:
  using Notice = std::function<void(const std::string&)>;

  // Takes the lock on `key` (a device's UUID). When another process holds it: with `wait`, tells
  // `notice` once who holds it (default: a line on stderr) and blocks until it is free; without,
  // throws Error naming the holder. `label` names the GPU in those messages ("GPU 0 (NVIDIA H200,
  // GPU-...)"). Every failing system call throws Error naming the file.
  static GpuLock acquire(const std::string& key, const std::string& label, bool wait, const Notice& notice = {});

  GpuLock(GpuLock&& o) noexcept;
  GpuLock& operator=(GpuLock&& o) noexcept;
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;
  ~GpuLock();

  const std::filesystem::path& path() const { return path_; }

  // $SOLTUNE_LOCK_DIR, else /tmp/soltune-locks.
  static std::filesystem::path folder();
  // The lock file of `key` in folder(): the key with every character outside [A-Za-z0-9._-] as '_'.
  static std::filesystem::path file_for(const std::string& key);

 private:
  GpuLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  void release() noexcept;

  int fd_ = -1;
  bool writable_ = false;  // opened read-write: the holder's identity is written into the file
  std::filesystem::path path_;
};

// How the lock messages name device `index`: "GPU 0 (NVIDIA H200, GPU-1234...)".
std::string gpu_label(int index, const DeviceInfo& d);

}  // namespace soltune
