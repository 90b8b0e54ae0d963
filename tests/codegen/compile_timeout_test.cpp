// The per-compile time limit: compiles in a helper process (fake_nvrtc_worker.cpp) that is killed
// at the limit, so a hung NVRTC costs its own request only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

#include "codegen/compiler.hpp"
#include "core/error.hpp"

#include "../support/scale_kernel.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

using test::kScale;

CompileRequest scale_request(const std::string& extra_source = "") {
  return {kScale + extra_source, "scale.cu", {"scale<float, 3>", "scale<double, 7>"}, "sm_90", {}};
}
// The fake helper misbehaves on this one only; a real helper compiles it fine.
CompileRequest trigger_request() { return scale_request("// SOLTUNE_FAKE_TRIGGER\n"); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

class CompileTimeoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("soltune_timeout_" + std::string(info->name()) + "_" +
                                             std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A compiler whose misses run in `fake_nvrtc_worker [mode]`.
  Compiler isolated(const std::string& mode, double timeout_s, bool cache = false) const {
    CompilerOptions o = default_compiler_options();
    o.cache_dir = cache ? dir_ / "cache" : fs::path();
    o.timeout_s = timeout_s;
    o.isolate_command = {FAKE_NVRTC_WORKER};
    if (!mode.empty()) o.isolate_command.push_back(mode);
    return Compiler(o);
  }
  size_t cache_files() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_ / "cache")) n += e.is_regular_file() ? 1 : 0;
    return n;
  }
  fs::path dir_;
};

TEST_F(CompileTimeoutTest, IsolatedCompileMatchesInProcess) {
  CompilerOptions o = default_compiler_options();
  o.cache_dir.clear();
  const CompileResult local = Compiler(o).compile(scale_request());
  const CompileResult remote = isolated("", 60).compile(scale_request());
  ASSERT_TRUE(local.ok) << local.log;
  ASSERT_TRUE(remote.ok) << remote.log;
  // Workers add NVRTC's automatic PCH options (the only difference, hence another cache key).
  auto options = Compiler(o).nvrtc_options(scale_request());
  if (Compiler::supports_auto_pch())
    options.insert(options.begin() + 4 + (Compiler::nvrtc_version() >= 12090),  // after --no-cache
                   {"-pch", "-pch-messages=false", "-pch-verbose=false"});
  EXPECT_EQ(isolated("", 60).nvrtc_options(scale_request()), options);
  EXPECT_EQ(remote.key == local.key, !Compiler::supports_auto_pch());
  EXPECT_EQ(remote.cubin, local.cubin);
  EXPECT_TRUE(contains(remote.log, "Compiling entry function")) << "the ptxas report comes back";
  ASSERT_EQ(remote.kernels.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto &a = local.kernels[i], &b = remote.kernels[i];
    EXPECT_EQ(b.name_expression, a.name_expression);
    EXPECT_EQ(b.lowered_name, a.lowered_name);
    EXPECT_TRUE(b.res.parsed);
    EXPECT_EQ(b.res.registers, a.res.registers);
    EXPECT_EQ(b.res.spill_stores, a.res.spill_stores);
    EXPECT_EQ(b.res.stack, a.res.stack);
    EXPECT_EQ(b.res.smem_static, a.res.smem_static);
    EXPECT_EQ(b.res.cmem, a.res.cmem);
  }
}

TEST_F(CompileTimeoutTest, RejectedSourceIsAnOrdinaryCachedValue) {
  const CompileRequest bad{"template <int N> __global__ void k(float* x) { static_assert(N % 2 == 0, \"even\"); }",
                           "odd.cu", {"k<3>"}, "sm_90", {}};
  const CompileResult first = isolated("", 60, true).compile(bad);
  EXPECT_FALSE(first.ok);
  EXPECT_TRUE(contains(first.log, "even")) << first.log;
  EXPECT_FALSE(contains(first.log, "did not finish")) << first.log;
  EXPECT_TRUE(isolated("", 60, true).compile(bad).cache_hit);
}

// Killed at the limit, then retried once at twice the limit (a loaded machine is not a hang) before
// the result says timed_out.
TEST_F(CompileTimeoutTest, HungCompileIsKilledAtTheLimitAndRetriedOnce) {
  const auto t0 = Clock::now();
  const CompileResult r = isolated("hang", 1).compile(trigger_request());
  const double s = seconds_since(t0);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(contains(r.log, "NVRTC did not finish within 1 s: compile abandoned")) << r.log;
  EXPECT_TRUE(contains(r.log, "NVRTC did not finish within 2 s: compile abandoned")) << r.log;
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_GE(s, 2.9);
  EXPECT_LT(s, 8);
  EXPECT_FALSE(isolated("crash", 60).compile(trigger_request()).timed_out) << "a crash is no timeout";
}

TEST_F(CompileTimeoutTest, HungCompileCostsItselfOnlyInABatch) {
  // Real compiles take well under a second; the margin is for a busy machine.
  const std::vector<CompileRequest> rs = {scale_request(), trigger_request(), scale_request("// other\n")};
  const auto out = isolated("hang", 3).compile_all(rs);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].ok) << out[0].log;
  EXPECT_FALSE(out[1].ok);
  EXPECT_TRUE(out[1].timed_out);
  EXPECT_TRUE(contains(out[1].log, "did not finish within")) << out[1].log;
  EXPECT_TRUE(out[2].ok) << out[2].log;
  EXPECT_EQ(out[2].kernels.at(0).lowered_name, "_Z5scaleIfLi3EEvPT_S0_i");
}

TEST_F(CompileTimeoutTest, TimedOutCompileIsNotCached) {
  EXPECT_FALSE(isolated("hang", 1, true).compile(trigger_request()).ok);
  EXPECT_EQ(cache_files(), 0u);
  const CompileResult second = isolated("", 60, true).compile(trigger_request());  // a working helper
  EXPECT_TRUE(second.ok) << second.log;
  EXPECT_FALSE(second.cache_hit);
  EXPECT_TRUE(isolated("hang", 1, true).compile(trigger_request()).cache_hit) << "hits never start a helper";
}

TEST_F(CompileTimeoutTest, CrashedHelperNamesItsEndAndIsNotCached) {
  const CompileResult r = isolated("crash", 60, true).compile(trigger_request());
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.log, "the NVRTC compile process died (killed by signal 6")) << r.log;
  EXPECT_EQ(cache_files(), 0u);
}

TEST_F(CompileTimeoutTest, GarbageAnswerIsAFailedCompile) {
  const CompileResult r = isolated("garbage", 60).compile(trigger_request());
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.log, "answered garbage")) << r.log;
}

TEST_F(CompileTimeoutTest, HelperThatNeverReadsCannotBlockTheRequest) {
  // Far more than a pipe holds: writing it must give up at the limit too.
  const CompileRequest big = scale_request("// " + std::string(1 << 20, 'x') + "\n");
  const auto t0 = Clock::now();
  const CompileResult r = isolated("deaf", 1).compile(big);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.log, "did not finish within 1 s")) << r.log;
  EXPECT_LT(seconds_since(t0), 8);
}

TEST_F(CompileTimeoutTest, NoLimitCompilesInProcess) {
  const CompileResult r = isolated("deaf", 0).compile(scale_request());  // the helper is never used
  EXPECT_TRUE(r.ok) << r.log;
}

TEST_F(CompileTimeoutTest, MissingHelperIsAnInfrastructureError) {
  CompilerOptions o = default_compiler_options();
  o.cache_dir.clear();
  o.timeout_s = 5;
  o.isolate_command = {(dir_ / "no-such-helper").string()};
  try {
    Compiler(o).compile(scale_request());
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "cannot start the NVRTC compile helper")) << e.what();
  }
}

}  // namespace
}  // namespace soltune
