// The export plan (run/export_plan.hpp) over a knowledge base written here through its API: which
// result serves each tuned shape, what the user is warned of, and when nothing may be exported.
#include "run/export_plan.hpp"
#include "run/export_earlier.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "../kb/kb_fixture.hpp"
#include "codegen/content_hash.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFast = "BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0";
constexpr const char* kSlow = "BLOCK=128,VEC=8,EPT=2,GRID_STRIDE=1,BLOCKS_PER_SM=4,FAST_TANH=1,CACHE_HINT=1";

class ExportPlanTest : public test::KbFixture {
 protected:
  ExportPlanTest() : KbFixture("export_plan_") {}
  void SetUp() override {
    KbFixture::SetUp();
    gelu_ = load_problem(fs::path(SOLTUNE_SOURCE_DIR) / "templates", "gelu");
    today_ = content_hash(gelu_.variant("vectorized").source);
  }
  // A result of today's GELU text (or of `source`) on `device`, timed `us` as `kind`.
  void add(KnowledgeBase& kb, const DeviceInfo& device, const char* key, int64_t n, double us,
           TimeKind kind = TimeKind::measured, const std::string& source = "") {
    RunInfo info;
    info.config_path = "configs/gelu.yaml";
    info.problem = "gelu";
    const int64_t run = kb.begin_run(info, kb.gpu_id(device, kind));
    kb.store_source(source.empty() ? today_ : source, "text");
    EvalResult r = untimed_result(key, Status::ok, kind);
    r.time.median_us = us;
    r.time.reps = 10;
    kb.record(run, task("vectorized", DType::f32, n, &gelu_), source.empty() ? today_ : source, r,
              {us, 4 * us, us / 4, 0.7, 0.8, false, true});
    kb.finish_run(run, "finished");
  }
  ExportOptions options() const {
    ExportOptions o;
    o.kb_path = (dir_ / "kb.sqlite").string();
    o.templates = fs::path(SOLTUNE_SOURCE_DIR) / "templates";
    o.source_only = true;  // no cubins: nothing here compiles
    return o;
  }
  // What plan_export refused, or nullopt where it made a plan.
  std::optional<ExportRefused> refusal(const KnowledgeBase& kb, const ExportOptions& o) const {
    try {
      plan_export(kb, "gelu", o);
    } catch (const ExportRefused& e) {
      return e;
    }
    return std::nullopt;
  }
  static bool says(const std::vector<std::string>& warnings, const std::string& phrase) {
    return std::any_of(warnings.begin(), warnings.end(), [&](const auto& w) { return w.find(phrase) != std::string::npos; });
  }
  ProblemSpec gelu_;
  std::string today_;
};

TEST_F(ExportPlanTest, TheFastestMeasuredResultServesEachShapeAndTheUnauditedAreNamed) {
  auto kb = KnowledgeBase::open(dir_ / "kb.sqlite");
  add(kb, real_, kSlow, 1 << 28, 300.0);
  add(kb, real_, kFast, 1 << 28, 250.0);
  add(kb, real_, kSlow, 1000003, 9.0, TimeKind::predicted);  // a prediction alone at its shape
  const auto plan = plan_export(kb, "gelu", options());
  const auto tuned = std::count_if(plan.specs.begin(), plan.specs.end(), [](const auto& s) { return !s.fallback; });
  ASSERT_EQ(tuned, 1) << "the prediction is not exported without allow_predicted";
  EXPECT_EQ(plan.records.front().config_key, kFast);
  EXPECT_EQ(plan.records.front().time_us, 250.0);
  EXPECT_EQ(plan.specs.front().shape.key(), "n=268435456");
  EXPECT_EQ(plan.gpu, real_.name);
  EXPECT_EQ(plan.specs.size(), plan.records.size());
  EXPECT_TRUE(says(plan.warnings, "not audited under compute-sanitizer")) << plan.warnings.size();
  EXPECT_TRUE(std::none_of(plan.warnings.begin(), plan.warnings.end(), [](const auto& w) { return w.ends_with("\n"); }));

  auto o = options();
  o.allow_predicted = true;
  const auto with_predicted = plan_export(kb, "gelu", o);
  EXPECT_EQ(std::count_if(with_predicted.specs.begin(), with_predicted.specs.end(), [](const auto& s) { return !s.fallback; }), 2);
  EXPECT_TRUE(says(with_predicted.warnings, "have predicted times only"));
}

TEST_F(ExportPlanTest, OnlyPredictionsAreRefusedUnlessAllowed) {
  auto kb = KnowledgeBase::open(dir_ / "kb.sqlite");
  add(kb, model_, kFast, 1 << 20, 12.0, TimeKind::predicted);
  const auto e = refusal(kb, options());
  ASSERT_TRUE(e.has_value()) << "a plan of predictions only";
  EXPECT_NE(std::string(e->what()).find("only model predictions for 'gelu'"), std::string::npos) << e->what();
  EXPECT_FALSE(e->usage);
}

TEST_F(ExportPlanTest, SeveralGpusAreTheUsersChoice) {
  auto kb = KnowledgeBase::open(dir_ / "kb.sqlite");
  DeviceInfo h100 = *find_known_gpu("H100");
  h100.uuid = "GPU-h100";
  add(kb, real_, kFast, 1 << 28, 250.0);
  add(kb, h100, kSlow, 1 << 28, 330.0);
  const auto e = refusal(kb, options());
  ASSERT_TRUE(e.has_value()) << "two GPUs and no choice";
  EXPECT_NE(std::string(e->what()).find("choose one with --gpu"), std::string::npos) << e->what();
  EXPECT_TRUE(e->usage);
  auto o = options();
  o.gpu = "H100";
  const auto plan = plan_export(kb, "gelu", o);
  EXPECT_EQ(plan.records.front().config_key, kSlow);
  EXPECT_EQ(plan.gpu, h100.name);
}

// Results of another text whose machine code cannot be checked (the knowledge base holds no source
// of it that compiles): refused, with the reason, and with what was found before.
TEST_F(ExportPlanTest, ResultsOfAnotherTextAloneAreRefusedWithTheReason) {
  auto kb = KnowledgeBase::open(dir_ / "kb.sqlite");
  add(kb, real_, kFast, 1 << 28, 250.0, TimeKind::measured, "0123456789abcdef0123456789abcdef");
  const auto e = refusal(kb, options());
  ASSERT_TRUE(e.has_value()) << "results of another text only";
  EXPECT_NE(std::string(e->what()).find("tuned with other versions of its templates"), std::string::npos) << e->what();
  EXPECT_FALSE(e->usage);
}

// A result of an earlier text of a variant that names its own target (wgmma_ws: sm_90a) counts where
// that text compiles, for that target, to today's machine code: compiled for the device's plain
// sm_90, wgmma does not build at all and no earlier result would ever count.
TEST_F(ExportPlanTest, AnEarlierTextOfAnArchSpecificVariantIsComparedForItsOwnTarget) {
  const auto matmul = load_problem(fs::path(SOLTUNE_SOURCE_DIR) / "templates", "matmul");
  const auto& v = matmul.variant("wgmma_ws");
  ASSERT_EQ(v.arch, "sm_90a");
  const std::string earlier = "// an earlier text: a comment more\n" + v.source, hash = content_hash(earlier);
  auto kb = KnowledgeBase::open(dir_ / "kb.sqlite");
  RunInfo info;
  info.config_path = "configs/matmul-models.yaml";
  info.problem = "matmul";
  const int64_t run = kb.begin_run(info, kb.gpu_id(real_, TimeKind::measured));  // an H200: sm_90
  kb.store_source(hash, earlier);
  Task t;
  t.problem = &matmul;
  t.variant = &v;
  t.dtype = DType::bf16;
  t.shape = parse_shape(matmul, "m=512,n=14336,k=4096,trans_b=1");
  EvalResult r = untimed_result("BM=128,BN=256,STAGES=3,CM=1,GROUP=8,EPI=1,SPARE=4", Status::ok, TimeKind::measured);
  r.time.median_us = 95;
  r.time.reps = 10;
  kb.record(run, t, hash, r, {95, 93, 61, 0.48, 0.49, true, false});
  kb.finish_run(run, "finished");
  const auto found = earlier_results_with_same_code(kb, matmul, kb.best("matmul"));
  EXPECT_EQ(found.checked, 1u) << found.note;
  ASSERT_EQ(found.same_code.size(), 1u) << found.note;
  EXPECT_EQ(found.same_code[0].config_key, r.key);
}

}  // namespace
}  // namespace soltune
