#include "core/device.hpp"

#include <algorithm>
#include <cctype>

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace soltune {
namespace {

DeviceInfo make(std::string name, int ccM, int ccm, int sms, double l2_mb, double mem_gb, int smem_sm_kb,
                int smem_optin_kb, int max_threads_sm, int max_blocks_sm, int clock_mhz, double bw_tbs,
                double fp32_tflops, double tensor16_tflops, double tensor8_tflops) {
  DeviceInfo d;
  d.name = std::move(name);
  d.cc_major = ccM;
  d.cc_minor = ccm;
  d.sms = sms;
  d.l2_bytes = static_cast<int64_t>(l2_mb * 1024 * 1024);
  d.mem_bytes = static_cast<int64_t>(mem_gb * 1e9);
  d.smem_per_sm = smem_sm_kb * 1024;
  d.smem_per_block = 48 * 1024;
  d.smem_per_block_optin = smem_optin_kb * 1024;
  d.regs_per_sm = 65536;
  d.regs_per_block = 65536;
  d.max_threads_per_sm = max_threads_sm;
  d.max_threads_per_block = 1024;
  d.max_blocks_per_sm = max_blocks_sm;
  d.clock_khz = clock_mhz * 1000;
  d.datasheet = Ceilings{bw_tbs * 1e12, fp32_tflops * 1e12, tensor16_tflops * 1e12, "datasheet"};
  d.datasheet.tensor_8 = tensor8_tflops * 1e12;
  return d;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

constexpr EnumNames<ComputeUnit, 3> kComputeUnit{
    "compute ceiling", {{{ComputeUnit::fp32, "fp32"}, {ComputeUnit::tensor_16, "tensor_16"}, {ComputeUnit::tensor_8, "tensor_8"}}}};
}  // namespace

std::string_view compute_unit_name(ComputeUnit u) { return kComputeUnit.name(u); }
ComputeUnit parse_compute_unit(std::string_view s) { return kComputeUnit.parse(s); }

double Ceilings::rate(ComputeUnit u) const {
  switch (u) {
    case ComputeUnit::fp32: return fp32;
    case ComputeUnit::tensor_16: return tensor_16;
    case ComputeUnit::tensor_8: return tensor_8 > 0 ? tensor_8 : tensor_16;
  }
  return fp32;
}

const std::vector<DeviceInfo>& known_gpus() {
  // Vendor datasheet figures (dense, no sparsity, f32 accumulation); the smem column is the per-SM
  // carve-out maximum. The last column is FP8 (0: none).
  static const std::vector<DeviceInfo> table = {
      make("NVIDIA H200", 9, 0, 132, 60, 141, 228, 227, 2048, 32, 1980, 4.8, 66.9, 989.4, 1978.9),
      make("NVIDIA H100 80GB HBM3", 9, 0, 132, 50, 80, 228, 227, 2048, 32, 1980, 3.35, 66.9, 989.4, 1978.9),
      make("NVIDIA H100 PCIe", 9, 0, 114, 50, 80, 228, 227, 2048, 32, 1755, 2.0, 51.2, 756.0, 1513.0),
      make("NVIDIA A100-SXM4-80GB", 8, 0, 108, 40, 80, 164, 163, 2048, 32, 1410, 2.039, 19.5, 312.0, 0),
      make("NVIDIA L40S", 8, 9, 142, 96, 48, 100, 99, 1536, 24, 2520, 0.864, 91.6, 362.0, 733.0),
      make("NVIDIA GeForce RTX 4090", 8, 9, 128, 72, 24, 100, 99, 1536, 24, 2520, 1.008, 82.6, 165.2, 330.3),
  };
  return table;
}

std::optional<DeviceInfo> find_known_gpu(const std::string& name) {
  const auto want = lower(name);
  for (const auto& d : known_gpus())
    if (lower(d.name) == want) return d;
  for (const auto& d : known_gpus())
    if (lower(d.name).find(want) != std::string::npos) return d;
  // A driver name such as "NVIDIA H100 80GB HBM3 (MIG)" contains a table name.
  for (const auto& d : known_gpus())
    if (want.find(lower(d.name)) != std::string::npos) return d;
  return std::nullopt;
}

std::string known_gpu_names() {
  std::string s;
  for (const auto& d : known_gpus()) s += (s.empty() ? "" : ", ") + d.name;
  return s;
}

}  // namespace soltune
