// Every shipped template compiles with NVRTC for sm_90 and sm_80: its reference, its baseline, and
// sampled legal configurations of every variant and dtype, at every shape of its config.
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

TEST(ShippedTemplates, CompileForSm90AndSm80) {
  const Compiler c(default_compiler_options());
  const auto problems = list_problems(kRoot / "templates");
  ASSERT_FALSE(problems.empty());
  for (const auto& name : problems) {
    const auto p = load_problem(kRoot / "templates", name);
    const auto shapes = shapes_of(name);
    ASSERT_FALSE(shapes.empty()) << name << " has no configs/" << name << ".yaml to take shapes from";
    for (const auto& [arch, gpu] : {std::pair{"sm_90", "H200"}, std::pair{"sm_80", "A100"}}) {
      const auto dev = *find_known_gpu(gpu);
      for (auto dt : p.dtypes)
        for (const auto& shape : shapes) {
          int served = 0;  // variants with a legal configuration at this shape
          for (const auto& v : p.variants) {
            if (!v.serves(dt) || !why_variant_cannot_run(v, dev).empty()) continue;
            const Task t{&p, &v, dt, shape};
            const Space space(v, t.fixed(dev));
            Rng rng(Rng::mix(17, std::hash<std::string>{}(t.id() + arch)));
            // A variant may have nothing legal at a shape of its config (rows too long for it to
            // hold: another variant serves them, as the check after this loop requires); nothing to
            // compile there.
            if (Rng probe = rng; !space.sample(probe).has_value()) continue;
            ++served;
            std::vector<CompileRequest> reqs;
            for (int k = 0; k < 4; ++k) {
              const auto cfg = space.sample(rng);
              ASSERT_TRUE(cfg.has_value()) << t.id() << ": no legal configuration";
              // Every kernel of the plan (before, main, after), as the evaluator compiles them.
              std::vector<std::string> names;
              for (const auto* l : v.all_launches()) names.push_back(name_expression(*l, dt, space.bind(*cfg)));
              reqs.push_back(CompileRequest{v.source, v.source_path.filename().string(), names, variant_arch(v, arch),
                                            define_options(v, dt, space.bind(*cfg))});
            }
            for (const auto& r : c.compile_all(reqs)) EXPECT_TRUE(r.ok) << t.id() << " " << arch << ":\n" << r.log;
          }
          EXPECT_GT(served, 0) << name << " " << dtype_name(dt) << " " << arch << ": no variant serves " << shape.key();
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
}

}  // namespace
}  // namespace soltune
