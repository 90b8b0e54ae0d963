#pragma once
// CUDA devices as soltune sees them. Safe on a machine with no GPU and no driver: cudart is linked
// statically and finds libcuda at run time, so these calls answer "none" with a reason.
#include <string>
#include <vector>

#include "core/device.hpp"

namespace soltune {

struct DeviceList {
  std::vector<DeviceInfo> devices;
  std::string why_none;  // set when devices is empty: the driver's own words
};

DeviceList cuda_devices();
DeviceInfo cuda_device(int index);  // throws Error when the index is not a device

}  // namespace soltune
