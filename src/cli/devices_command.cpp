#include <cstdio>
#include <string>

#include "cli/options.hpp"
#include "cli/tune_command.hpp"
#include "eval/cuda_devices.hpp"
#include "eval/worker_evaluator.hpp"

namespace po = boost::program_options;

namespace soltune::cli {
namespace {

// The figure T_SOL divides a problem's FLOPs by, per compute ceiling (problem.yaml `compute:`), and why.
std::string tensor_why(double probe, double datasheet) {
  char buf[96];
  if (probe <= 0) return "the datasheet's (not measured)";
  if (probe > datasheet) std::snprintf(buf, sizeof buf, "the probe's, above the datasheet's %.0f", datasheet / 1e12);
  else std::snprintf(buf, sizeof buf, "the datasheet's; the best probe reached %.0f", probe / 1e12);
  return buf;
}

void print_sol_ceilings(const DeviceInfo& d) {
  const Ceilings& c = d.ceilings();
  std::printf("  T_SOL uses: %.0f GB/s (%s), %.1f TFLOP/s fp32 (%s)\n", c.sol_bw() / 1e9,
              d.measured ? (c.read_bw > c.mem_bw ? "the read probe" : "the copy") : "datasheet",
              c.fp32 / 1e12, d.measured ? "the FMA probe" : "datasheet");
  std::printf("              %.0f TFLOP/s tensor_16 (%s)\n", c.tensor_16 / 1e12,
              tensor_why(c.tensor_16_probe, d.datasheet.tensor_16).c_str());
  if (c.tensor_8 > 0)
    std::printf("              %.0f TFLOP/s tensor_8 (%s)\n", c.tensor_8 / 1e12,
                tensor_why(c.tensor_8_probe, d.datasheet.tensor_8).c_str());
  else
    std::printf("              tensor_8: no 8-bit tensor cores; 8-bit problems count against tensor_16\n");
}

}  // namespace


int devices_command(const std::vector<std::string>& args) {
  po::options_description desc("soltune devices options");
  desc.add_options()("help,h", "this text")("no-measure", "skip measuring bandwidth, FP32 and tensor rates")(
      "no-wait", "fail at once when another run holds a GPU, instead of waiting for it");
  const auto parsed = parse_command(desc, args, "devices", "[options]");
  if (!parsed) return 0;
  const auto& [vm, positional] = *parsed;
  if (!positional.empty()) throw UsageError("devices takes no arguments");
  const auto list = cuda_devices();
  if (list.devices.empty()) {
    std::printf("%s\nthe model backend can predict for: %s\n", list.why_none.c_str(), known_gpu_names().c_str());
    return 0;
  }
  Compiler compiler(compiler_options());
  for (size_t i = 0; i < list.devices.size(); ++i) {
    DeviceInfo d = list.devices[i];
    if (!vm.count("no-measure")) {
      // Measured in a worker process, like every GPU run: this process holds no CUDA context.
      // Measuring is GPU work: it waits for (or refuses) a run that holds the device.
      auto o = worker_options(static_cast<int>(i), d, vm.count("no-wait") == 0);
      o.templates = ".";
      d = WorkerEvaluator(compiler, o).device();
    }
    std::printf("device %zu: %s (%s), %s\n", i, d.name.c_str(), d.arch().c_str(), d.uuid.c_str());
    std::printf("  %d SMs at %.0f MHz, %.1f GiB memory, %.0f MiB L2, %d KiB shared memory per block (opt-in)\n", d.sms,
                d.clock_khz / 1000.0, static_cast<double>(d.mem_bytes) / (1 << 30),
                static_cast<double>(d.l2_bytes) / (1 << 20), d.smem_per_block_optin / 1024);
    std::printf("  driver %d.%d, runtime %d.%d, NVRTC %d.%d\n", d.driver_version / 1000, d.driver_version % 1000 / 10,
                d.runtime_version / 1000, d.runtime_version % 1000 / 10, d.nvrtc_version / 1000,
                d.nvrtc_version % 1000 / 10);
    std::printf("  datasheet: %.0f GB/s, %.1f TFLOP/s FP32, %.0f TFLOP/s 16-bit tensor, %.0f TFLOP/s 8-bit tensor\n",
                d.datasheet.mem_bw / 1e9, d.datasheet.fp32 / 1e12, d.datasheet.tensor_16 / 1e12,
                d.datasheet.tensor_8 / 1e12);
    if (d.measured)
      std::printf("  measured:  %.0f GB/s copy (read + write), %.0f GB/s read, %.1f TFLOP/s FP32 FMA\n  (%s)\n",
                  d.measured->mem_bw / 1e9, d.measured->read_bw / 1e9, d.measured->fp32 / 1e12, d.measured->source.c_str());
    print_sol_ceilings(d);
  }
  return 0;
}

}  // namespace soltune::cli
