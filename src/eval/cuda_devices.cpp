#include "eval/cuda_devices.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdio>

#include "eval/cuda_check.hpp"
#include "eval/device_props.hpp"

namespace soltune {
namespace {

// The driver's user-space library, which the statically linked runtime loads the same way.
bool driver_library_present() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h) return false;
  dlclose(h);
  return true;
}

std::string uuid_text(const cudaUUID_t& u) {
  std::string s = "GPU-";
  char buf[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(u.bytes[i]));
    s += buf;
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

}  // namespace

DeviceInfo cuda_device(int index) {
  cudaDeviceProp p{};
  SOLTUNE_CUDA(cudaGetDeviceProperties(&p, index));
  DeviceInfo d;
  d.name = p.name;
  d.uuid = uuid_text(p.uuid);
  read_props(d, p);
  SOLTUNE_CUDA(cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, index));
  SOLTUNE_CUDA(cudaDriverGetVersion(&d.driver_version));
  SOLTUNE_CUDA(cudaRuntimeGetVersion(&d.runtime_version));
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS) d.nvrtc_version = major * 1000 + minor * 10;
  if (auto known = find_known_gpu(d.name)) {
    d.datasheet = known->datasheet;
  } else {
    // An unknown part: no datasheet figures. T_SOL then rests on measured ceilings alone.
    d.datasheet.source = "unknown";
  }
  return d;
}

DeviceList cuda_devices() {
  DeviceList out;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    // Without the driver's library the runtime answers "driver version is insufficient", which
    // reads as an old driver; say what is the case.
    if (e == cudaErrorInsufficientDriver && !driver_library_present())
      out.why_none = "no NVIDIA driver (libcuda.so.1 not found)";
    else
      out.why_none = "no CUDA device: " + cuda_error_text(e);
    (void)cudaGetLastError();
    return out;
  }
  if (n == 0) {
    out.why_none = "no CUDA device: the driver reports none";
    return out;
  }
  for (int i = 0; i < n; ++i) out.devices.push_back(cuda_device(i));
  return out;
}

}  // namespace soltune
