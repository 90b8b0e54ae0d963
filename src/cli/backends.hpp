#pragma once
// The evaluators a command can run on: cuda (a GPU worker), model (predictions), replay (recorded
// landscapes), and auto (cuda where a device exists, else model, said out loud).
#include <memory>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"
#include "core/landscape.hpp"
#include "core/run_config.hpp"

namespace soltune::cli {

// What a measurement depends on besides the GPU and the source: results are reused only under it.
std::string toolchain(const DeviceInfo& d);

// The cuda backend on device `device`; throws Error when there is no CUDA device.
std::unique_ptr<Evaluator> make_cuda_evaluator(const RunConfig& cfg, int device, const Compiler& c, uint64_t seed,
                                               double timeout_cap);
// backend: auto | cuda | model | replay (replay answers from `landscapes`, which must outlive it).
std::unique_ptr<Evaluator> make_evaluator(const std::string& backend, const RunConfig& cfg, int device,
                                          const Compiler& c, uint64_t seed, double timeout_cap,
                                          const std::vector<Landscape>& landscapes = {});

}  // namespace soltune::cli
