#pragma once
// DeviceInfo's limits and the cudaDeviceProp fields they are read from, listed once: the runtime's
// properties fill a DeviceInfo (eval/cuda_devices.cpp), and a DeviceInfo fills the properties that
// CUDA's occupancy calculator reads (eval/candidates.cpp), which must also work on a recorded GPU.
#include <driver_types.h>

#include <tuple>
#include <type_traits>
#include <utility>

#include "core/device.hpp"
#include "core/fields.hpp"

namespace soltune {

inline constexpr std::tuple kDeviceProps{
    std::pair{&DeviceInfo::cc_major, &cudaDeviceProp::major},
    std::pair{&DeviceInfo::cc_minor, &cudaDeviceProp::minor},
    std::pair{&DeviceInfo::sms, &cudaDeviceProp::multiProcessorCount},
    std::pair{&DeviceInfo::l2_bytes, &cudaDeviceProp::l2CacheSize},
    std::pair{&DeviceInfo::mem_bytes, &cudaDeviceProp::totalGlobalMem},
    std::pair{&DeviceInfo::smem_per_sm, &cudaDeviceProp::sharedMemPerMultiprocessor},
    std::pair{&DeviceInfo::smem_per_block, &cudaDeviceProp::sharedMemPerBlock},
    std::pair{&DeviceInfo::smem_per_block_optin, &cudaDeviceProp::sharedMemPerBlockOptin},
    std::pair{&DeviceInfo::regs_per_sm, &cudaDeviceProp::regsPerMultiprocessor},
    std::pair{&DeviceInfo::regs_per_block, &cudaDeviceProp::regsPerBlock},
    std::pair{&DeviceInfo::max_threads_per_sm, &cudaDeviceProp::maxThreadsPerMultiProcessor},
    std::pair{&DeviceInfo::max_threads_per_block, &cudaDeviceProp::maxThreadsPerBlock},
    std::pair{&DeviceInfo::max_blocks_per_sm, &cudaDeviceProp::maxBlocksPerMultiProcessor},
    std::pair{&DeviceInfo::warp_size, &cudaDeviceProp::warpSize}};

// Copies every listed field from one side to the other, converting the integer type.
inline void read_props(DeviceInfo& d, const cudaDeviceProp& p) {
  for_each_field(kDeviceProps, [&](const auto& f) {
    d.*f.first = static_cast<std::remove_cvref_t<decltype(d.*f.first)>>(p.*f.second);
  });
}
inline void write_props(cudaDeviceProp& p, const DeviceInfo& d) {
  for_each_field(kDeviceProps, [&](const auto& f) {
    p.*f.second = static_cast<std::remove_cvref_t<decltype(p.*f.second)>>(d.*f.first);
  });
}

}  // namespace soltune
