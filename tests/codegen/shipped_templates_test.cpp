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

// A constraint on the device itself: its compute capability or its shared memory per block.
bool mentions_device_limit(const VariantSpec& v) {
  return std::any_of(v.constraints.begin(), v.constraints.end(), [](const Expr& e) {
    const auto& vars = e.variables();
    return std::find(vars.begin(), vars.end(), "cc") != vars.end() ||
           std::find(vars.begin(), vars.end(), "smem_optin") != vars.end();
  });
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
        for (const auto& shape : shapes)
          for (const auto& v : p.variants) {
            if (!v.serves(dt) || !why_variant_cannot_run(v, dev).empty()) continue;
            const Task t{&p, &v, dt, shape};
            const Space space(v, t.fixed(dev));
            Rng rng(Rng::mix(17, std::hash<std::string>{}(t.id() + arch)));
            // A variant for newer devices (a constraint on cc, e.g. clusters) or one whose row must fit
            // in shared memory (f32 50304-wide rows: 196 KiB, beyond A100's 163 KiB) may have nothing
            // legal on the older one: nothing to compile there. Any other empty space is a bug.
            if (Rng probe = rng; !space.sample(probe).has_value()) {
              ASSERT_TRUE(mentions_device_limit(v)) << t.id() << " " << arch << ": no legal configuration";
              continue;
            }
            std::vector<CompileRequest> reqs;
            for (int k = 0; k < 4; ++k) {
              const auto cfg = space.sample(rng);
              ASSERT_TRUE(cfg.has_value()) << t.id() << ": no legal configuration";
              reqs.push_back(CompileRequest{v.source, v.source_path.filename().string(),
                                            {name_expression(v.launch, dt, space.bind(*cfg))}, variant_arch(v, arch),
                                            define_options(v, dt, space.bind(*cfg))});
            }
            for (const auto& r : c.compile_all(reqs)) EXPECT_TRUE(r.ok) << t.id() << " " << arch << ":\n" << r.log;
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
