#pragma once
// What a run checks before it measures or records anything: each failure stops it with an Error
// naming every task it concerns. `soltune tune --check` runs them without a device.
#include <chrono>
#include <optional>

#include "codegen/compiler.hpp"
#include "core/run_config.hpp"

namespace soltune {

// Every argument given as a file holds the dtype and the element count each task needs of it.
void check_given_data(const RunConfig& cfg);
// Every shape's buffers fit the device, with a tenth left for the L2 flush, a candidate's scratch and
// the runtime.
void check_device_memory(const RunConfig& cfg, const DeviceInfo& d);
// Each variant's kernels take what it passes them, checked once per dtype on a legal configuration of
// its first task, all at once. A check still compiling at `deadline` (the run's budget's end:
// Budget::deadline) is stopped unfinished: the run has no time left to tune anything.
void check_kernel_signatures(const RunConfig& cfg, const Compiler& compiler, const DeviceInfo& device,
                             std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

}  // namespace soltune
