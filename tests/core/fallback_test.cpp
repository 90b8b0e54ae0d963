// Every shipped problem has a kernel of last resort legal at every shape it is probed at, on the
// H200 and the A100; a fallback's mistakes are refused with the file and line.
#include "core/fallback.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../support/files.hpp"
#include "core/device.hpp"

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

// Where a fallback breaks a constraint at some shape, the gap names the shape and the constraint.
TEST(Fallback, AGapNamesTheShapeAndTheConstraint) {
  const auto root = fs::temp_directory_path() / ("soltune-fallback-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  fs::copy(kTemplates / "gelu", root / "gelu", fs::copy_options::recursive);
  const auto yaml = root / "gelu" / "problem.yaml";
  auto text = test::read_file(yaml);
  // One pass (no grid stride): a grid of cdiv(n, 256) blocks is legal at every probe shape, but 16
  // bytes per vector at VEC 8 is not for f32.
  const auto at = text.find("VEC: 16 / dtype_bytes, EPT: 1, GRID_STRIDE: 1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("VEC: 16 / dtype_bytes").size(), "VEC: 8");
  ASSERT_TRUE(test::write_file(yaml, text));
  const auto p = load_problem(root, "gelu");
  const auto dev = *find_known_gpu("H200");
  EXPECT_EQ(fallback_gap(p, DType::bf16, dev), "");
  const auto gap = fallback_gap(p, DType::f32, dev);
  EXPECT_NE(gap.find("n=1: "), std::string::npos) << gap;
  EXPECT_NE(gap.find("VEC * dtype_bytes <= 16"), std::string::npos) << gap;
  fs::remove_all(root);
}

// Loads a copy of gelu whose problem.yaml has `from` replaced by `to`: refused naming problem.yaml,
// the line and `phrase`.
void expect_refused(const std::string& from, const std::string& to, const std::string& phrase) {
  SCOPED_TRACE(to);
  const auto root = fs::temp_directory_path() / ("soltune-fallback-bad-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  fs::copy(kTemplates / "gelu", root / "gelu", fs::copy_options::recursive);
  const auto yaml = root / "gelu" / "problem.yaml";
  auto text = test::read_file(yaml);
  const auto pos = text.find(from);
  ASSERT_NE(pos, std::string::npos) << from;
  text.replace(pos, from.size(), to);
  ASSERT_TRUE(test::write_file(yaml, text));
  const std::string where = "problem.yaml:" + std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n')) + ":";
  try {
    load_problem(root, "gelu");
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(where), std::string::npos) << msg;
    EXPECT_NE(msg.find(phrase), std::string::npos) << msg;
  }
  fs::remove_all(root);
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
