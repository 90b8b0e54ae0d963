// Bench (not a test): RMSNorm kernels timed in this process three ways, to find where soltune's
// figure parts from an outside harness's (docs/BENCHMARKS.md, session 11): by CudaRunner::run, as
// soltune's GPU worker times a candidate (correctness rounds, then the timed loop); by the same
// timed loop (time_launches) on a TaskState of its own; and by a bare loop on that TaskState (its
// flush, CUDA events and the launch, nothing else).
//   worker_conditions TEMPLATES ROWS COLS CEILINGS ROUNDS VARIANT:KEY...
// CEILINGS 1 measures the ceilings first, as the worker does at start (2 GiB buffers and probes).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "eval/candidates.hpp"
#include "eval/cuda_devices.hpp"
#include "eval/cuda_runner.hpp"
#include "eval/timing_loop.hpp"

using namespace soltune;

namespace {

// flush, start event, launch, end event, `reps` times queued, then one synchronisation.
double bare_median_us(TaskState& st, const std::function<cudaError_t(int)>& launch, int reps) {
  for (int i = 0; i < 3; ++i) SOLTUNE_CUDA(launch(0));
  SOLTUNE_CUDA(cudaStreamSynchronize(st.stream()));
  for (int r = 0; r < reps; ++r) {
    st.flush_l2();
    SOLTUNE_CUDA(cudaEventRecord(st.event(2 * r).get(), st.stream()));
    SOLTUNE_CUDA(launch(0));
    SOLTUNE_CUDA(cudaEventRecord(st.event(2 * r + 1).get(), st.stream()));
  }
  SOLTUNE_CUDA(cudaStreamSynchronize(st.stream()));
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    float ms = 0;
    SOLTUNE_CUDA(cudaEventElapsedTime(&ms, st.event(2 * r).get(), st.event(2 * r + 1).get()));
    us.push_back(ms * 1e3);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: worker_conditions TEMPLATES ROWS COLS CEILINGS ROUNDS VARIANT:KEY...\n");
    return 2;
  }
  try {
    const auto problem = load_problem(argv[1], "rmsnorm");
    const Shape shape{{{"rows", std::stoll(argv[2])}, {"cols", std::stoll(argv[3])}}};
    CudaEvalOptions o;
    o.measure_ceilings = std::stoi(argv[4]) != 0;
    const int rounds = std::stoi(argv[5]);
    Compiler compiler(default_compiler_options());
    const DeviceInfo dev = cuda_device(0);
    const std::string arch = dev.arch();
    CudaRunner runner(0, compiler, arch, o);

    struct Kernel {
      Task task;
      Candidate cand;
      CompileResult compiled;
    };
    std::vector<Kernel> ks;
    for (int i = 6; i < argc; ++i) {
      const std::string spec = argv[i];
      const auto colon = spec.find(':');
      const Task t{&problem, &problem.variant(spec.substr(0, colon)), DType::f32, shape};
      const Space space(*t.variant, t.fixed(dev));
      auto batch = prepare_candidates(t, dev, arch, {space.parse_key(spec.substr(colon + 1))});
      if (batch.requests.size() != 1) throw Error(spec + ": not a legal configuration here");
      Kernel k{t, batch.candidates.front(), compiler.compile(batch.requests.front())};
      if (!take_compile_result(k.cand, k.compiled)) throw Error(spec + ": " + k.cand.result.log);
      ks.push_back(std::move(k));
    }
    std::printf("rmsnorm f32 %sx%s on %s, ceilings %s; us: CudaRunner::run (median, reps) | time_launches on a "
                "TaskState of its own | bare loop (200 reps)\n",
                argv[2], argv[3], dev.name.c_str(), o.measure_ceilings ? "measured first" : "not measured");
    for (int round = 0; round < rounds; ++round) {
      for (auto& k : ks) {
        k.cand.result.time = {};
        runner.run(k.task, k.cand, k.compiled, 0);
        const auto run_us = k.cand.result.time.median_us;
        const int run_reps = k.cand.result.time.reps;
        TaskState st(k.task, dev, compiler, arch, 7 + round);
        LoadedModule mod;
        std::string log;
        SOLTUNE_CUDA(LoadedModule::load(k.compiled, mod, log));
        const cudaKernel_t h = mod.at(k.cand.name_expr);
        auto launch = [&](int set) {
          auto a = st.args(k.task.variant->launch, set, false);
          return launch_kernel(h, k.cand.result.geo, a.ptrs.data(), st.stream());
        };
        const auto loop = time_launches(st, o, launch, TimingPlan{});
        SOLTUNE_CUDA(loop.err);
        const double bare = bare_median_us(st, launch, 200);
        std::printf("round %d %-8s %-70s %8.2f (%3d) | %8.2f | %8.2f   [%s]\n", round + 1, k.task.variant->name.c_str(),
                    k.cand.result.key.c_str(), run_us, run_reps, loop.time.median_us, bare,
                    std::string(status_name(k.cand.result.status)).c_str());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "worker_conditions: %s\n", e.what());
    return 1;
  }
}
