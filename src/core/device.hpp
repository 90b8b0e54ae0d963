#pragma once
// What soltune knows about a GPU: its identity, its limits, and the ceilings T_SOL is computed from.
// Filled from the driver by src/eval on a real device, or from the datasheet table below for the
// model backend (and, on a real device, reported beside the measured ceilings).
#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "core/fields.hpp"

namespace soltune {

// The compute ceiling a problem's FLOPs are counted against (problem.yaml `compute:`, per dtype):
// whatever unit a kernel uses, its distance from the hardware's limit is measured against the
// fastest unit that can compute the problem at that precision.
enum class ComputeUnit { fp32, tensor_16, tensor_8 };
std::string_view compute_unit_name(ComputeUnit u);  // "fp32", "tensor_16", "tensor_8"
ComputeUnit parse_compute_unit(std::string_view s);  // throws Error naming the choices

struct Ceilings {
  double mem_bw = 0;       // bytes/s, read + write (the copy: the copy's rate, %BW's reference)
  double fp32 = 0;         // FLOP/s, FMA = 2
  double tensor_16 = 0;    // FLOP/s, dense f16/bf16 tensor cores, f32 accumulation: the figure T_SOL uses
  std::string source;      // "datasheet" or what was measured
  double read_bw = 0;      // bytes/s, reading only; 0: not measured
  double tensor_8 = 0;     // FLOP/s, dense 8-bit float tensor cores; 0: the device has none
  // What the tensor probes reached (0: not measured). T_SOL takes the better of probe and datasheet:
  // a probe below the datasheet did not reach the limit, one above it ran at a higher clock.
  double tensor_16_probe = 0, tensor_8_probe = 0;
  // The bandwidth T_SOL is computed from: no kernel moves bytes faster than the better of the copy
  // and the read (a reduction, which writes nearly nothing, outruns the copy by about 5%).
  double sol_bw() const { return read_bw > mem_bw ? read_bw : mem_bw; }
  // FLOP/s of a unit. Without 8-bit tensor cores, 8-bit data is computed at best at the 16-bit rate.
  double rate(ComputeUnit u) const;
};

template <>
inline constexpr auto kFields<Ceilings> = std::tuple{
    Field{"mem_bw", &Ceilings::mem_bw},
    Field{"fp32", &Ceilings::fp32},
    Field{"tensor_16", &Ceilings::tensor_16},
    Field{"source", &Ceilings::source},
    Field{"read_bw", &Ceilings::read_bw},
    Field{"tensor_8", &Ceilings::tensor_8},
    Field{"tensor_16_probe", &Ceilings::tensor_16_probe},
    Field{"tensor_8_probe", &Ceilings::tensor_8_probe},
};

struct DeviceInfo {
  std::string name;        // as the driver reports it, or the table's name
  std::string uuid;        // "" for a model device
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int64_t l2_bytes = 0;
  int64_t mem_bytes = 0;
  int smem_per_sm = 0, smem_per_block = 0, smem_per_block_optin = 0;
  int regs_per_sm = 0, regs_per_block = 0;
  int max_threads_per_sm = 0, max_threads_per_block = 0, max_blocks_per_sm = 0;
  int warp_size = 32;
  int clock_khz = 0;
  int driver_version = 0, runtime_version = 0, nvrtc_version = 0;  // 13000 = 13.0
  Ceilings datasheet;
  std::optional<Ceilings> measured;

  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
  int cc() const { return cc_major * 10 + cc_minor; }
  const Ceilings& ceilings() const { return measured ? *measured : datasheet; }
};
// measured, optional, is carried beside the list.
template <>
inline constexpr auto kFields<DeviceInfo> = std::tuple{
    Field{"name", &DeviceInfo::name},
    Field{"uuid", &DeviceInfo::uuid},
    Field{"cc_major", &DeviceInfo::cc_major},
    Field{"cc_minor", &DeviceInfo::cc_minor},
    Field{"sms", &DeviceInfo::sms},
    Field{"l2_bytes", &DeviceInfo::l2_bytes},
    Field{"mem_bytes", &DeviceInfo::mem_bytes},
    Field{"smem_per_sm", &DeviceInfo::smem_per_sm},
    Field{"smem_per_block", &DeviceInfo::smem_per_block},
    Field{"smem_per_block_optin", &DeviceInfo::smem_per_block_optin},
    Field{"regs_per_sm", &DeviceInfo::regs_per_sm},
    Field{"regs_per_block", &DeviceInfo::regs_per_block},
    Field{"max_threads_per_sm", &DeviceInfo::max_threads_per_sm},
    Field{"max_threads_per_block", &DeviceInfo::max_threads_per_block},
    Field{"max_blocks_per_sm", &DeviceInfo::max_blocks_per_sm},
    Field{"warp_size", &DeviceInfo::warp_size},
    Field{"clock_khz", &DeviceInfo::clock_khz},
    Field{"driver_version", &DeviceInfo::driver_version},
    Field{"runtime_version", &DeviceInfo::runtime_version},
    Field{"nvrtc_version", &DeviceInfo::nvrtc_version},
    Field{"datasheet", &DeviceInfo::datasheet},
};

// Datasheet figures of GPUs the model backend can predict for (dense rates, SXM parts where both).
const std::vector<DeviceInfo>& known_gpus();
// Finds a table entry by a case-insensitive name fragment ("H200", "a100"), or by the name the
// driver reports ("NVIDIA H200"). nullopt when nothing matches.
std::optional<DeviceInfo> find_known_gpu(const std::string& name);
std::string known_gpu_names();

}  // namespace soltune
