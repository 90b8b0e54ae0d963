#pragma once
// The ceilings T_SOL is computed from, measured on the device: copy and read bandwidth, the FP32
// FMA rate, and the tensor rates (mma.sync everywhere, wgmma on sm_90). The datasheet's figures
// stay beside them; a tensor figure is the better of the probe's and the datasheet's.
#include <string>

#include "codegen/compiler.hpp"
#include "core/device.hpp"

namespace soltune {

Ceilings measure_device_ceilings(const DeviceInfo& dev, const Compiler& compiler, const std::string& arch);

}  // namespace soltune
