// Every shipped problem has a kernel of last resort legal at every shape it is probed at, on the
// H200 and the A100; a fallback's mistakes are refused with the file and line.
#include "core/fallback.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "../support/files.hpp"
#include "refused.hpp"
#include "core/device.hpp"
#include "core/run_config.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;
const fs::path kTemplates = SOLTUNE_SOURCE_DIR "/templates";

TEST(Fallback, EveryShippedProblemHasOneLegalAtEveryProbeShape) {
  for (const auto& name : list_problems(kTemplates)) {
    const auto p = load_problem(kTemplates, name);
    const VariantSpec* v = p.fallback_variant();
    ASSERT_NE(v, nullptr) << name << " has no fallback";
    for (const char* gpu : {"H200", "A100"}) {
      const auto dev = *find_known_gpu(gpu);
      for (auto dt : p.dtypes) {
        SCOPED_TRACE(name + " " + std::string(dtype_name(dt)) + " " + gpu);
        ASSERT_TRUE(v->serves(dt)) << v->name << " does not serve every dtype";
        EXPECT_EQ(fallback_gap(p, dt, dev), "");
        EXPECT_GT(fallback_probe_shapes(p, dt).size(), 10u);
      }
    }
  }
}

TEST(Fallback, ValuesFollowTheDtypeAndComeFirstAmongThePresets) {
  const auto p = load_problem(kTemplates, "gelu");
  const auto& v = *p.fallback_variant();
  ASSERT_EQ(v.presets.front().name, "fallback");
  const Space space(v, Bindings{});
  EXPECT_EQ(space.key(*fallback_config(v, DType::f32)), "BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=1,BLOCKS_PER_SM=8,FAST_TANH=0,CACHE_HINT=0");
  EXPECT_EQ(space.key(*fallback_config(v, DType::bf16)), "BLOCK=256,VEC=8,EPT=1,GRID_STRIDE=1,BLOCKS_PER_SM=8,FAST_TANH=0,CACHE_HINT=0");
  // The searches measure it: the first preset the space offers at a shape.
  const Task t{&p, &v, DType::f32, Shape{{{"n", 1000003}}}};
  const Space here(v, t.fixed(*find_known_gpu("H200")));
  ASSERT_FALSE(here.presets().empty());
  EXPECT_EQ(here.presets().front().first, "fallback");
}

// A fallback that compiles a listed size in (matmul's tiled, trans_b) is one kernel per value of it:
// tune measures each (a fallback-only task where the run's tasks do not), so that export has a
// kernel of last resort for NN and NT alike. GELU's compiles no size in: one shape.
TEST(Fallback, AFallbackIsMeasuredInEveryLayoutItCompilesIn) {
  const auto matmul = load_problem(kTemplates, "matmul");
  const Shape nn{{{"m", 64}, {"n", 64}, {"k", 64}, {"trans_b", 0}}};
  const auto shapes = fallback_shapes(matmul, DType::bf16, nn);
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].key(), "m=64,n=64,k=64,trans_b=0");
  EXPECT_EQ(shapes[1].key(), "m=64,n=64,k=64,trans_b=1");
  const auto& tiled = *matmul.fallback_variant();
  const auto cfg = *fallback_config(tiled, DType::bf16);
  EXPECT_NE(fallback_class(matmul, tiled, cfg, shapes[0]), fallback_class(matmul, tiled, cfg, shapes[1]));
  const auto gelu = load_problem(kTemplates, "gelu");
  EXPECT_EQ(fallback_shapes(gelu, DType::f32, Shape{{{"n", 8}}}).size(), 1u);

  test::TempDir tmp("fallback-layouts");
  const auto cfg_path = tmp.path() / "gemm.yaml";
  auto tasks_of = [&](const std::string& variants, const std::string& shape_list) {
    test::write_file(cfg_path, "problem: matmul\ntemplates: " + kTemplates.string() + "\n" + variants +
                                   "dtypes: [bf16]\nshapes: " + shape_list + "\nbudget: {evals: 4}\n");
    std::vector<std::string> out;
    const auto run = load_run_config(cfg_path);  // the tasks point into it
    for (const auto& t : config_tasks(run))
      out.push_back(t.variant->name + (t.fallback_only ? " fallback " : " ") + t.shape.key());
    return out;
  };
  const std::string big = "{m: 256, n: 256, k: 256}", small = "{m: 64, n: 64, k: 64}";
  // The fallback's variant left out: it is measured at the smallest shape, NN and NT.
  EXPECT_EQ(tasks_of("variants: [mma_sync]\n", "[" + big + ", " + small + "]"),
            (std::vector<std::string>{"mma_sync m=256,n=256,k=256,trans_b=0", "mma_sync m=64,n=64,k=64,trans_b=0",
                                      "tiled fallback m=64,n=64,k=64,trans_b=0", "tiled fallback m=64,n=64,k=64,trans_b=1"}));
  // In the run at NN shapes only: its own tasks measure NN; NT gets a fallback-only task.
  const auto all = tasks_of("", "[" + small + "]");
  EXPECT_EQ(std::count(all.begin(), all.end(), "tiled m=64,n=64,k=64,trans_b=0"), 1);
  EXPECT_EQ(std::count(all.begin(), all.end(), "tiled fallback m=64,n=64,k=64,trans_b=1"), 1);
  EXPECT_EQ(all.back(), "tiled fallback m=64,n=64,k=64,trans_b=1");
  // In the run at both layouts: nothing to add.
  const auto both = tasks_of("", "[" + small + ", {m: 64, n: 64, k: 64, trans_b: 1}]");
  EXPECT_EQ(std::count_if(both.begin(), both.end(), [](const std::string& t) { return t.find(" fallback ") != std::string::npos; }), 0);
}

// Copies templates/gelu into `root` with `from` replaced by `to` in its problem.yaml; returns the
// line `from` stood on.
int copy_gelu_replacing(const fs::path& root, const std::string& from, const std::string& to) {
  fs::copy(kTemplates / "gelu", root / "gelu", fs::copy_options::recursive);
  return test::replace_in_file(root / "gelu" / "problem.yaml", from, to);
}

// Where a fallback breaks a constraint at some shape, the gap names the shape and the constraint.
TEST(Fallback, AGapNamesTheShapeAndTheConstraint) {
  const test::TempDir root("fallback");
  // One pass (no grid stride): a grid of cdiv(n, 256) blocks is legal at every probe shape, but 16
  // bytes per vector at VEC 8 is not for f32.
  copy_gelu_replacing(root.path(), "VEC: 16 / dtype_bytes, EPT: 1, GRID_STRIDE: 1", "VEC: 8, EPT: 1, GRID_STRIDE: 1");
  const auto p = load_problem(root.path(), "gelu");
  const auto dev = *find_known_gpu("H200");
  EXPECT_EQ(fallback_gap(p, DType::bf16, dev), "");
  const auto gap = fallback_gap(p, DType::f32, dev);
  EXPECT_NE(gap.find("n=1: "), std::string::npos) << gap;
  EXPECT_NE(gap.find("VEC * dtype_bytes <= 16"), std::string::npos) << gap;
}

// Loads a copy of gelu whose problem.yaml has `from` replaced by `to`: refused naming problem.yaml,
// the line and `phrase`.
void expect_refused(const std::string& from, const std::string& to, const std::string& phrase) {
  SCOPED_TRACE(to);
  const test::TempDir root("fallback-bad");
  const int line = copy_gelu_replacing(root.path(), from, to);
  test::expect_load_refused(root.path(), "gelu", {"problem.yaml:" + std::to_string(line) + ":", phrase});
}

TEST(Fallback, MistakesAreRefusedWithFileAndLine) {
  const std::string from = "knobs: {BLOCK: 256,";
  expect_refused(from, "knobs: {BLOCK: n,", "dtype_bytes only");
  expect_refused(from, "knobs: {BLOCK: sms,", "dtype_bytes only");
  expect_refused(from, "knobs: {WARPS: 2, BLOCK: 256,", "'WARPS' is not a knob of variant 'vectorized'");
  expect_refused("BLOCK: 256, VEC: 16 / dtype_bytes, EPT: 1, GRID_STRIDE", "BLOCK: 256, VEC: 16 / dtype_bytes, GRID_STRIDE",
                 "fallback gives no value for knob 'EPT'");
  expect_refused("fallback: {variant: vectorized,", "fallback: {variant: scalar,", "no variant 'scalar' (variants: vectorized)");
  expect_refused("fallback: {variant: vectorized,", "fallback: {variant: vectorized, grid: 1,", "unknown key 'grid'");
}

}  // namespace
}  // namespace soltune
