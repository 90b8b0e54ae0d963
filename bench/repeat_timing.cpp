// Bench (not a test): times the same configuration several times in one run, through the same GPU
// worker soltune uses, and reports the spread between repeats: how far two timings of one kernel
// may differ, the noise floor under any claim that one candidate beats another.
//   repeat_timing SOLTUNE_BIN CONFIG DTYPE SHAPE_N "KEY" REPEATS
#include <algorithm>
#include <cstdio>
#include <string>

#include "core/run_config.hpp"
#include "eval/worker_evaluator.hpp"

using namespace soltune;

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: repeat_timing SOLTUNE_BIN CONFIG DTYPE N KEY REPEATS\n");
    return 2;
  }
  try {
    const auto cfg = load_run_config(argv[2]);
    const Task t{&cfg.spec, &cfg.spec.variants.front(), parse_dtype(argv[3]), Shape{{{"n", std::stoll(argv[4])}}}};
    Compiler compiler(default_compiler_options());
    WorkerOptions o;
    o.command = {argv[1], "worker"};
    o.templates = cfg.templates_dir;
    o.eval.slow_factor = 1e9;
    WorkerEvaluator ev(compiler, o);
    const Space space(*t.variant, t.fixed(ev.device()));
    const Config c = space.parse_key(argv[5]);
    const int repeats = std::stoi(argv[6]);
    std::printf("%s %s on %s\n%-8s %12s %12s %12s %6s\n", t.id().c_str(), argv[5], ev.device().name.c_str(), "repeat",
                "median us", "q1 us", "q3 us", "reps");
    std::vector<double> medians;
    const auto b = ev.baseline(t);
    for (int i = 0; i < repeats; ++i) {
      const auto r = ev.evaluate(t, {c}).front();
      if (r.status != Status::ok) {
        std::printf("repeat %d: %s: %s\n", i, std::string(status_name(r.status)).c_str(), r.log.c_str());
        return 1;
      }
      medians.push_back(r.time.median_us);
      std::printf("%-8d %12.2f %12.2f %12.2f %6d\n", i + 1, r.time.median_us, r.time.q1_us, r.time.q3_us, r.time.reps);
    }
    const auto b2 = ev.baseline(t);
    const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
    std::printf("spread of the medians over %d repeats: %.2f%% (max/min - 1); T_ref twice: %.1f and %.1f us (%.2f%%)\n",
                repeats, 100 * (*hi / *lo - 1), b.t_ref_us, b2.t_ref_us,
                100 * (std::max(b.t_ref_us, b2.t_ref_us) / std::min(b.t_ref_us, b2.t_ref_us) - 1));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "repeat_timing: %s\n", e.what());
    return 1;
  }
}
