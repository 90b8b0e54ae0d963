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

// The cuda backend on device `device`; throws Error when there is no CUDA device. It holds the
// device's lock (eval/gpu_lock.hpp) while it lives: with `wait_for_gpu` it waits for another run
// that holds it, else throws at once.
std::unique_ptr<Evaluator> make_cuda_evaluator(const RunConfig& cfg, int device, const Compiler& c, uint64_t seed,
                                               double timeout_cap, bool wait_for_gpu = true);
// backend: auto | cuda | model | replay (replay answers from `landscapes`, which must outlive it).
// Only cuda takes a lock: model and replay never touch a GPU.
std::unique_ptr<Evaluator> make_evaluator(const std::string& backend, const RunConfig& cfg, int device,
                                          const Compiler& c, uint64_t seed, double timeout_cap,
                                          const std::vector<Landscape>& landscapes = {}, bool wait_for_gpu = true);

}  // namespace soltune::cli
