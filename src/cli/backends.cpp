#include "cli/backends.hpp"

#include <cstdio>

#include "cli/options.hpp"
#include "eval/cuda_devices.hpp"
#include "eval/model_evaluator.hpp"
#include "eval/replay_evaluator.hpp"
#include "eval/worker_evaluator.hpp"

namespace soltune::cli {

namespace {
std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

std::string toolchain(const DeviceInfo& d) {
  std::string s = "nvrtc " + version_text(Compiler::nvrtc_version());
  if (d.driver_version) s += ", driver " + version_text(d.driver_version) + ", runtime " + version_text(d.runtime_version);
  return s;
}

std::unique_ptr<Evaluator> make_cuda_evaluator(const RunConfig& cfg, int device, const Compiler& c, uint64_t seed,
                                               double timeout_cap, bool wait_for_gpu) {
  auto list = cuda_devices();
  if (list.devices.empty()) throw Error(list.why_none);
  if (device < 0 || device >= static_cast<int>(list.devices.size()))
    throw Error("--device " + std::to_string(device) + ": there are " + std::to_string(list.devices.size()) +
                " CUDA device(s)");
  WorkerOptions o = worker_options(device, list.devices[device], wait_for_gpu);
  o.templates = cfg.templates_dir;
  o.arch = cfg.arch;
  o.eval.seed = seed;
  o.eval.timing = cfg.timing;
  o.timeout_cap_s = timeout_cap;
  return std::make_unique<WorkerEvaluator>(c, o);
}

std::unique_ptr<Evaluator> make_evaluator(const std::string& backend, const RunConfig& cfg, int device,
                                          const Compiler& c, uint64_t seed, double timeout_cap,
                                          const std::vector<Landscape>& landscapes, bool wait_for_gpu) {
  if (backend == "replay") {
    if (landscapes.empty()) throw UsageError("--backend replay needs --landscape FILE (one or more)");
    std::vector<const Landscape*> ls;
    for (const auto& l : landscapes) ls.push_back(&l);
    return std::make_unique<ReplayEvaluator>(ls);
  }
  if (backend == "cuda") return make_cuda_evaluator(cfg, device, c, seed, timeout_cap, wait_for_gpu);
  if (backend == "auto") {
    auto list = cuda_devices();
    if (!list.devices.empty()) return make_cuda_evaluator(cfg, device, c, seed, timeout_cap, wait_for_gpu);
    std::fprintf(stderr, "soltune: %s; using the model backend: times are predictions for %s, not measurements\n",
                 list.why_none.c_str(), find_known_gpu(cfg.model_gpu)->name.c_str());
  }
  const auto gpu = *find_known_gpu(cfg.model_gpu);
  return std::make_unique<ModelEvaluator>(gpu, c, cfg.arch == "auto" ? gpu.arch() : cfg.arch);
}

}  // namespace soltune::cli
