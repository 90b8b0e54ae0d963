// prior_check KB [TEMPLATES] [GPU]: how well the model's prior (eval/model_predictor.hpp) ranks what
// a knowledge base measured, task by task: Spearman's rho over the correct results, and the measured
// time of the prior's top 1 and top 8 over the task's best. The knowledge base's configurations are
// a search's picks, not the whole space, so this checks the prior on data it was not fitted to (the
// recorded landscapes are, docs/FINDINGS.md). Reads only; results whose configuration no
// longer parses under today's templates are skipped.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "core/space.hpp"
#include "eval/model_predictor.hpp"
#include "kb/knowledge_base.hpp"

using namespace soltune;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using TaskKey = std::tuple<std::string, std::string, std::string, std::string>;  // problem, variant, dtype, shape

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: prior_check KB.sqlite [TEMPLATES (default ./templates)] [GPU (default H200)]\n");
    return 2;
  }
  const std::string templates = argc > 2 ? argv[2] : "templates", gpu = argc > 3 ? argv[3] : "H200";
  const auto dev = find_known_gpu(gpu);
  if (!dev) throw Error("unknown GPU '" + gpu + "' (known: " + known_gpu_names() + ")");
  if (!std::filesystem::exists(argv[1])) throw Error(std::string(argv[1]) + ": no such knowledge base");
  const auto kb = KnowledgeBase::open(argv[1]);
  // Per task and configuration, the fastest measurement (infinity for `slow`: it ranks last).
  std::map<TaskKey, std::map<std::string, double>> tasks;
  for (const auto& run : kb.runs())
    for (const auto& r : kb.results(run.id)) {
      if (r.time_kind != "measured" || (r.status != "ok" && r.status != "slow")) continue;
      if (r.gpu_name.find(gpu) == std::string::npos) continue;  // measured on that GPU only
      auto& t = tasks[{r.problem, r.variant, r.dtype, r.shape_key}][r.config_key];
      const double us = r.status == "ok" ? r.time_us : kInf;
      t = t == 0 ? us : std::min(t, us);
    }
  std::map<std::string, ProblemSpec> problems;
  double rho_sum = 0;
  int n = 0, top1 = 0, top8 = 0;
  std::printf("%-58s %5s %7s %7s %7s\n", "task", "n", "rho", "top1", "top8");
  for (const auto& [key, measured] : tasks) {
    const auto& [problem, variant, dtype, shape] = key;
    if (!problems.count(problem)) problems.emplace(problem, load_problem(templates, problem));
    const auto& p = problems.at(problem);
    const Task task{&p, &p.variant(variant), parse_dtype(dtype), parse_shape(p, shape)};
    const Space space(*task.variant, task.fixed(*dev));
    std::vector<Config> configs;
    std::vector<double> times;
    for (const auto& [config, us] : measured) try {
        configs.push_back(space.parse_key(config));
        times.push_back(us);
      } catch (const Error&) {  // a knob the template no longer has
      }
    if (configs.size() < 30) continue;  // too few to say anything
    ModelPredictor prior(task, *dev);
    const auto r = rank_agreement(prior.predict(configs), times, {1, 8});
    std::printf("%-58s %5zu %7.3f %7.3f %7.3f\n", (problem + "/" + variant + "/" + dtype + "/" + shape).c_str(),
                configs.size(), r.rho, r.top_over_best[0], r.top_over_best[1]);
    rho_sum += r.rho;
    ++n;
    top1 += r.top_over_best[0] <= 1.05;
    top8 += r.top_over_best[1] <= 1.05;
  }
  std::printf("%d tasks: mean rho %.3f; the prior's top 1 within 5%% of the best in %d, its top 8 in %d\n", n,
              n ? rho_sum / n : 0.0, top1, top8);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "prior_check: %s\n", e.what());
  return 1;
}
