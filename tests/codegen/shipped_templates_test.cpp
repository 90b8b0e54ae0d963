// Every shipped template compiles with NVRTC for sm_90 and sm_80: its reference, its baseline, and
// sampled legal configurations of every variant and dtype, drawn over the shapes of its config.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "codegen/compiler.hpp"
#include "core/run_config.hpp"
#include "core/space.hpp"

namespace soltune {
namespace {

const std::filesystem::path kRoot = SOLTUNE_SOURCE_DIR;

std::vector<Shape> shapes_of(const std::string& problem) {
  const auto cfg = kRoot / "configs" / (problem + ".yaml");
  if (std::filesystem::exists(cfg)) return load_run_config(cfg).shapes;
  return {};
}

// One test per problem, so that ctest spreads them over the cores.
class ShippedTemplates : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedTemplates, CompileForSm90AndSm80) {
  const Compiler c(default_compiler_options());
  const auto& name = GetParam();
  const auto p = load_problem(kRoot / "templates", name);
  const auto shapes = shapes_of(name);
  ASSERT_FALSE(shapes.empty()) << name << " has no configs/" << name << ".yaml to take shapes from";
  for (const auto& [arch, gpu] : {std::pair{"sm_90", "H200"}, std::pair{"sm_80", "A100"}}) {
    const auto dev = *find_known_gpu(gpu);
    for (auto dt : p.dtypes) {
      std::vector<int> served(shapes.size());  // variants with a legal configuration at each shape
      for (const auto& v : p.variants) {
        if (!v.serves(dt) || !why_variant_cannot_run(v, dev).empty()) continue;
        // Every shape a variant has a legal configuration at, then kSamples configurations drawn
        // from those shapes in turn: the knobs vary more than the shapes' sizes, which are only
        // the kernel's arguments, so a sample per shape would compile much the same code again.
        constexpr int kSamples = 4;
        std::vector<Task> tasks;
        for (size_t i = 0; i < shapes.size(); ++i) {
          const Task t{&p, &v, dt, shapes[i]};
          const Space space(v, t.fixed(dev));
          Rng probe(Rng::mix(17, std::hash<std::string>{}(t.id() + arch)));
          // A variant may have nothing legal at a shape of its config (rows too long for it to
          // hold: another variant serves them, as the check below requires).
          if (!space.sample(probe).has_value()) continue;
          ++served[i];
          tasks.push_back(t);
        }
        std::vector<CompileRequest> reqs;
        for (int k = 0; k < kSamples && !tasks.empty(); ++k) {
          const Task& t = tasks[static_cast<size_t>(k) % tasks.size()];
          const Space space(v, t.fixed(dev));
          Rng rng(Rng::mix(17 + k, std::hash<std::string>{}(t.id() + arch)));
          const auto cfg = space.sample(rng);
          ASSERT_TRUE(cfg.has_value()) << t.id() << ": no legal configuration";
          // Every kernel of the plan (before, main, after), as the evaluator compiles them.
          std::vector<std::string> names;
          for (const auto* l : v.all_launches()) names.push_back(name_expression(*l, dt, space.bind(*cfg)));
          reqs.push_back(CompileRequest{v.source, v.source_path.filename().string(), names, variant_arch(v, arch),
                                        define_options(v, dt, space.bind(*cfg))});
        }
        const auto results = c.compile_all(reqs);
        for (size_t i = 0; i < results.size(); ++i)
          EXPECT_TRUE(results[i].ok) << v.name << " " << dtype_name(dt) << " " << arch << ":\n" << results[i].log;
      }
      for (size_t i = 0; i < shapes.size(); ++i)
        EXPECT_GT(served[i], 0) << name << " " << dtype_name(dt) << " " << arch << ": no variant serves " << shapes[i].key();
    }
    // The reference and every baseline launch, per dtype.
    for (auto dt : p.dtypes) {
      const Task t{&p, &p.variants.front(), dt, shapes.front()};
      const auto b = t.fixed(dev);
      std::vector<std::string> names;
      for (const auto& l : p.baseline) names.push_back(name_expression(l, dt, b));
      const auto ref = c.compile(CompileRequest{p.reference_source, "reference.cu", {name_expression(p.reference, dt, b)}, arch, {}});
      EXPECT_TRUE(ref.ok) << name << " reference " << arch << ":\n" << ref.log;
      const auto base = c.compile(CompileRequest{p.baseline_source, "baseline.cu", names, arch, {}});
      EXPECT_TRUE(base.ok) << name << " baseline " << arch << ":\n" << base.log;
    }
  }
}

std::string problem_name(const ::testing::TestParamInfo<std::string>& p) { return p.param; }
INSTANTIATE_TEST_SUITE_P(EveryProblem, ShippedTemplates, ::testing::ValuesIn(list_problems(kRoot / "templates")),
                         problem_name);

}  // namespace
}  // namespace soltune
