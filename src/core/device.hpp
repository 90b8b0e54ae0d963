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

SOLTUNE_FIELDS(Ceilings, mem_bw, fp32, tensor_16, source, read_bw, tensor_8, tensor_16_probe, tensor_8_probe);

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
SOLTUNE_FIELDS(DeviceInfo, name, uuid, cc_major, cc_minor, sms, l2_bytes, mem_bytes, smem_per_sm, smem_per_block,
               smem_per_block_optin, regs_per_sm, regs_per_block, max_threads_per_sm, max_threads_per_block,
               max_blocks_per_sm, warp_size, clock_khz, driver_version, runtime_version, nvrtc_version, datasheet);

// Datasheet figures of GPUs the model backend can predict for (dense rates, SXM parts where both).
const std::vector<DeviceInfo>& known_gpus();
// Finds a table entry by a case-insensitive name fragment ("H200", "a100"), or by the name the
// driver reports ("NVIDIA H200"). nullopt when nothing matches.
std::optional<DeviceInfo> find_known_gpu(const std::string& name);
std::string known_gpu_names();

}  // namespace soltune
