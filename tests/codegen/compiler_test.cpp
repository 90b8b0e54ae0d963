// Real NVRTC compiles (no GPU needed): CUBINs, lowered names, resources, failures as values, the
// disk cache and parallel compiles.
#include "codegen/compiler.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "codegen/nvrtc_program.hpp"
#include "core/error.hpp"

#include "../support/scale_kernel.hpp"
#include "../support/spill_kernel.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

using test::kScale;

const char* kChecked = R"(
template <int N>
__global__ void k(float* x) {
  static_assert(N % 2 == 0, "my message: N must be even");
  x[threadIdx.x] = N;
}
)";

// A register array too big for 24 registers spills; a static __shared__ array shows as smem.
const std::string kHeavy = test::kSpillMix + R"(
template <int N>
__global__ void spill(float* out, const float* in) {
  float r[N];
#pragma unroll
  for (int k = 0; k < N; ++k) r[k] = in[threadIdx.x * N + k];
  out[threadIdx.x] = spill_mix<N, 4>(r);
}
template <int B>
__global__ void shm(float* out, const float* in) {
  __shared__ float buf[B];
  __shared__ double d[3];
  buf[threadIdx.x] = in[threadIdx.x];
  if (threadIdx.x < 3) d[threadIdx.x] = 1.0;
  __syncthreads();
  out[threadIdx.x] = buf[B - 1 - threadIdx.x] + (float)d[threadIdx.x % 3];
}
)";

CompileRequest scale_request(const std::string& arch = "sm_90") {
  return {kScale, "scale.cu", {"scale<float, 3>", "scale<double, 7>"}, arch, {}};
}

bool is_elf(const std::vector<char>& b) {
  return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

// A fresh directory per test under gtest's temp dir, removed afterwards.
class CompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("soltune_codegen_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  CompilerOptions opts(const fs::path& cache) const {
    CompilerOptions o = default_compiler_options();
    o.cache_dir = cache;
    return o;
  }
  Compiler uncached() const { return Compiler(opts({})); }
  Compiler cached() const { return Compiler(opts(dir_ / "cache")); }
  size_t files_in(const fs::path& d) const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(d)) n += e.is_regular_file() ? 1 : 0;
    return n;
  }

  fs::path dir_;
};

TEST_F(CompilerTest, TemplateKernelForTwoArchs) {
  for (const std::string arch : {"sm_90", "sm_80"}) {
    SCOPED_TRACE(arch);
    const CompileResult r = uncached().compile(scale_request(arch));
    ASSERT_TRUE(r.ok) << r.log;
    EXPECT_FALSE(r.cache_hit);
    EXPECT_TRUE(is_elf(r.cubin));
    EXPECT_EQ(r.key.size(), 32u);
    EXPECT_GT(r.ms, 0);
    EXPECT_NE(r.log.find("Compiling entry function"), std::string::npos) << "ptxas -v report kept";
    ASSERT_EQ(r.kernels.size(), 2u);
    EXPECT_EQ(r.kernels[0].name_expression, "scale<float, 3>");
    EXPECT_EQ(r.kernels[1].name_expression, "scale<double, 7>");
    EXPECT_EQ(r.kernels[0].lowered_name, "_Z5scaleIfLi3EEvPT_S0_i");
    EXPECT_EQ(r.kernels[1].lowered_name, "_Z5scaleIdLi7EEvPT_S0_i");
    for (const auto& k : r.kernels) {
      EXPECT_TRUE(k.res.parsed) << k.lowered_name;
      EXPECT_GT(k.res.registers, 0);
      EXPECT_EQ(k.res.spill_stores, 0);
      EXPECT_EQ(k.res.smem_static, 0);
    }
    // ptxas reports cmem[0] only below sm_90.
    if (arch == "sm_80") {
      EXPECT_GT(r.kernels[0].res.cmem, 0);
    }
  }
}

TEST_F(CompilerTest, SpillsAndStaticSharedMemoryAreReported) {
  const CompileResult r = uncached().compile(
      {kHeavy, "heavy.cu", {"spill<64>", "shm<256>"}, "sm_90", {"--maxrregcount=16"}});
  ASSERT_TRUE(r.ok) << r.log;
  const Resources& s = r.kernels[0].res;
  EXPECT_TRUE(s.parsed);
  EXPECT_LE(s.registers, 24);  // ptxas raises 16 to sm_90's lower bound of 24
  EXPECT_GT(s.spill_stores, 0);
  EXPECT_GT(s.spill_loads, 0);
  EXPECT_GT(s.stack, 0);
  EXPECT_EQ(r.kernels[1].res.smem_static, 256 * 4 + 3 * 8);
}

TEST_F(CompilerTest, StaticAssertIsAValueWithItsMessage) {
  const CompileResult r = uncached().compile({kChecked, "checked.cu", {"k<2>", "k<3>"}, "sm_90", {}});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("my message"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("checked.cu"), std::string::npos) << "source_name names the file in the log";
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_TRUE(r.kernels.empty());
  // The same source is fine for an even argument.
  EXPECT_TRUE(uncached().compile({kChecked, "checked.cu", {"k<2>"}, "sm_90", {}}).ok);
}

// ptxas's refusal comes after NVRTC's own (empty) log and its terminator: the log soltune keeps is
// text, without the NUL byte that had hidden the reason from the progress line.
TEST_F(CompilerTest, APtxasErrorIsTextInTheLog) {
  const CompileResult r = uncached().compile(
      {"template <int N> __global__ void k(float* x) { __shared__ float s[N]; s[threadIdx.x] = x[threadIdx.x]; "
       "__syncthreads(); x[threadIdx.x] = s[N - 1 - threadIdx.x]; }",
       "big.cu", {"k<100000>"}, "sm_90", {}});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("too much shared data"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find('\0'), std::string::npos) << "a NUL byte in the log";
}

TEST_F(CompilerTest, SyntaxErrorAndBadOptionAreValues) {
  const CompileResult syntax = uncached().compile(
      {"template <int N> __global__ void k(float* x) { x[0] = N }", "bad.cu", {"k<1>"}, "sm_90", {}});
  EXPECT_FALSE(syntax.ok);
  EXPECT_NE(syntax.log.find("error"), std::string::npos) << syntax.log;

  CompileRequest opt = scale_request();
  opt.extra_options = {"--no-such-option"};
  const CompileResult bad_opt = uncached().compile(opt);
  EXPECT_FALSE(bad_opt.ok);
  EXPECT_NE(bad_opt.log.find("no-such-option"), std::string::npos) << bad_opt.log;

  const CompileResult bad_arch = uncached().compile(scale_request("sm_91"));
  EXPECT_FALSE(bad_arch.ok);
  EXPECT_FALSE(bad_arch.log.empty());

  const CompileResult bad_name = uncached().compile({kScale, "scale.cu", {"nothere<3>"}, "sm_90", {}});
  EXPECT_FALSE(bad_name.ok);
  EXPECT_NE(bad_name.log.find("nothere"), std::string::npos) << bad_name.log;
}

TEST_F(CompilerTest, ExtraOptionsAreNotSplitOnSpaces) {
  const CompileResult r = uncached().compile(
      {"static_assert(VAL == 3, \"VAL\");\n__global__ void k() {}\n", "val.cu", {"k"}, "sm_90", {"-DVAL=(1 + 2)"}});
  EXPECT_TRUE(r.ok) << r.log;
}

TEST_F(CompilerTest, ToolkitHeadersResolve) {
  const char* src = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda/std/cstdint>
template <typename T>
__global__ void conv(T* out, const float* in) { out[threadIdx.x] = T(in[threadIdx.x]); }
)";
  const CompileResult r =
      uncached().compile({src, "headers.cu", {"conv<__half>", "conv<__nv_bfloat16>"}, "sm_90", {}});
  EXPECT_TRUE(r.ok) << r.log;
}

TEST_F(CompilerTest, SecondCompileIsACacheHit) {
  const CompileResult first = cached().compile(scale_request());
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(fs::exists(dir_ / "cache" / (first.key + ".nvrtc")));

  const CompileResult second = cached().compile(scale_request());  // a fresh Compiler, same dir
  EXPECT_TRUE(second.cache_hit);
  EXPECT_TRUE(second.ok);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.log, first.log);
  ASSERT_EQ(second.kernels.size(), first.kernels.size());
  for (size_t i = 0; i < first.kernels.size(); ++i) {
    const auto &a = first.kernels[i], &b = second.kernels[i];
    EXPECT_EQ(a.name_expression, b.name_expression);
    EXPECT_EQ(a.lowered_name, b.lowered_name);
    EXPECT_EQ(a.res.registers, b.res.registers);
    EXPECT_EQ(a.res.spill_stores, b.res.spill_stores);
    EXPECT_EQ(a.res.spill_loads, b.res.spill_loads);
    EXPECT_EQ(a.res.stack, b.res.stack);
    EXPECT_EQ(a.res.smem_static, b.res.smem_static);
    EXPECT_EQ(a.res.cmem, b.res.cmem);
    EXPECT_EQ(a.res.parsed, b.res.parsed);
  }
  EXPECT_EQ(files_in(dir_ / "cache"), 1u) << "no temp files left behind";
}

TEST_F(CompilerTest, ChangedInputsMiss) {
  const Compiler c = cached();
  const CompileResult base = c.compile(scale_request());
  ASSERT_TRUE(base.ok);

  CompileRequest opt = scale_request();
  opt.extra_options = {"-DUNUSED=1"};
  CompileRequest arch = scale_request("sm_80");
  CompileRequest name = scale_request();
  name.source_name = "other.cu";
  CompileRequest exprs = scale_request();
  exprs.name_expressions.pop_back();
  CompileRequest source = scale_request();
  source.source += "\n// changed\n";
  std::set<std::string> keys = {base.key};
  for (const CompileRequest& r : {opt, arch, name, exprs, source}) {
    const CompileResult res = c.compile(r);
    EXPECT_TRUE(res.ok) << res.log;
    EXPECT_FALSE(res.cache_hit) << r.source_name << " " << r.arch;
    keys.insert(res.key);
  }
  EXPECT_EQ(keys.size(), 6u);
  EXPECT_TRUE(c.compile(opt).cache_hit);
}

TEST_F(CompilerTest, FailedCompileIsCached) {
  const CompileRequest req{kChecked, "checked.cu", {"k<3>"}, "sm_90", {}};
  const CompileResult first = cached().compile(req);
  ASSERT_FALSE(first.ok);
  const CompileResult second = cached().compile(req);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_FALSE(second.ok);
  EXPECT_NE(second.log.find("my message"), std::string::npos);
}

TEST_F(CompilerTest, CorruptEntryIsAMissAndIsRewritten) {
  const CompileResult first = cached().compile(scale_request());
  const fs::path entry = dir_ / "cache" / (first.key + ".nvrtc");
  const auto size = fs::file_size(entry);

  fs::resize_file(entry, size / 2);  // a truncated write
  const CompileResult second = cached().compile(scale_request());
  EXPECT_TRUE(second.ok);
  EXPECT_FALSE(second.cache_hit);
  EXPECT_EQ(second.cubin, first.cubin);
  // Rewritten in full: the entry reads back as a hit (its size may differ by the digits of the
  // compile time it records).
  EXPECT_GT(fs::file_size(entry), size / 2) << "rewritten in full";
  const CompileResult third = cached().compile(scale_request());
  EXPECT_TRUE(third.cache_hit);
  EXPECT_EQ(third.cubin, first.cubin);
  EXPECT_TRUE(cached().compile(scale_request()).cache_hit);

  {  // same length, one byte of the CUBIN changed: the checksum catches it
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 10));
    f.put('\x5a');
  }
  EXPECT_FALSE(cached().compile(scale_request()).cache_hit);
  EXPECT_TRUE(cached().compile(scale_request()).cache_hit);

  { std::ofstream(entry, std::ios::trunc) << "garbage"; }
  EXPECT_FALSE(cached().compile(scale_request()).cache_hit);
  EXPECT_TRUE(cached().compile(scale_request()).cache_hit);
}

TEST_F(CompilerTest, UnusableCacheDirCompilesWithoutCachingAndSaysSoOnce) {
  { std::ofstream(dir_ / "file") << "x"; }
  const Compiler c(opts(dir_ / "file" / "cache"));  // a directory cannot be made under a file
  const CompileResult first = c.compile(scale_request());
  EXPECT_TRUE(first.ok) << first.log;
  EXPECT_NE(first.log.find("disk cache disabled"), std::string::npos) << first.log;
  const CompileResult second = c.compile(scale_request());
  EXPECT_TRUE(second.ok);
  EXPECT_FALSE(second.cache_hit);
  EXPECT_EQ(second.log.find("disk cache disabled"), std::string::npos) << "noted once";
}

TEST_F(CompilerTest, FailedCacheWriteCompilesWithoutCaching) {
  const Compiler c = cached();
  fs::remove_all(dir_ / "cache");  // gone after the Compiler made it: the write fails, not the compile
  const CompileResult r = c.compile(scale_request());
  EXPECT_TRUE(r.ok) << r.log;
  EXPECT_NE(r.log.find("disk cache disabled"), std::string::npos) << r.log;
  EXPECT_FALSE(fs::exists(dir_ / "cache"));
}

TEST_F(CompilerTest, CompileAllKeepsInputOrder) {
  std::vector<CompileRequest> rs;
  for (int n = 1; n <= 6; ++n)
    rs.push_back({kChecked, "checked" + std::to_string(n) + ".cu", {"k<" + std::to_string(2 * n) + ">"},
                  n % 2 ? "sm_90" : "sm_80", {}});
  rs[3].name_expressions = {"k<5>"};  // odd: fails, and stays in its slot
  const auto out = uncached().compile_all(rs);
  ASSERT_EQ(out.size(), 6u);
  for (size_t i = 0; i < out.size(); ++i) {
    SCOPED_TRACE(i);
    if (i == 3) {
      EXPECT_FALSE(out[i].ok);
      EXPECT_NE(out[i].log.find("checked4.cu"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(out[i].ok) << out[i].log;
    EXPECT_EQ(out[i].kernels.at(0).name_expression, rs[i].name_expressions[0]);
    EXPECT_EQ(out[i].kernels[0].lowered_name, "_Z1kILi" + std::to_string(2 * (i + 1)) + "EEvPf");
  }
  EXPECT_TRUE(uncached().compile_all({}).empty());
}

TEST_F(CompilerTest, ConcurrentWritersOfOneEntry) {
  const std::vector<CompileRequest> rs(6, scale_request());
  const auto out = cached().compile_all(rs);
  for (const auto& r : out) {
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.cubin, out[0].cubin);
  }
  EXPECT_EQ(files_in(dir_ / "cache"), 1u);
  EXPECT_TRUE(cached().compile(scale_request()).cache_hit);
}

TEST(CompilerStatic, VersionAndArchs) {
  EXPECT_GE(Compiler::nvrtc_version(), 12040);
  EXPECT_EQ(Compiler::nvrtc_version() % 10, 0);
  const auto archs = Compiler::supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_90"), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_80"), archs.end());
}

TEST(CompilerStatic, InfrastructureFailureNamesTheCall) {
  try {
    nvrtc_check(NVRTC_ERROR_OUT_OF_MEMORY, "nvrtcCreateProgram");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "nvrtcCreateProgram: NVRTC_ERROR_OUT_OF_MEMORY");
  }
  EXPECT_NO_THROW(nvrtc_check(NVRTC_SUCCESS, "x"));
}

TEST(CompilerStatic, OptionsArePassedInOrder) {
  const Compiler c(CompilerOptions{{"/a b", "/c"}, {}});
  CompileRequest r = scale_request("sm_80");
  r.extra_options = {"-DX=1 2", "--maxrregcount=32"};
  std::vector<std::string> want = {"--gpu-architecture=sm_80", "--std=c++17", "--ptxas-options=-v", "-lineinfo"};
  if (Compiler::nvrtc_version() >= 12090) want.push_back("--no-cache");  // the driver's cache drops -v reports
  want.insert(want.end(), {"--include-path=/a b", "--include-path=/c", "-DX=1 2", "--maxrregcount=32"});
  EXPECT_EQ(c.nvrtc_options(r), want);
}

// Sets or unsets environment variables for one scope.
class EnvGuard {
 public:
  void set(const char* name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~EnvGuard() {
    for (const auto& [k, v] : saved_) v ? ::setenv(k.c_str(), v->c_str(), 1) : ::unsetenv(k.c_str());
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(CompilerStatic, DefaultOptionsFollowTheEnvironment) {
  EnvGuard env;
  env.set("SOLTUNE_CACHE_DIR", "off");
  EXPECT_TRUE(default_compiler_options().cache_dir.empty());
  env.set("SOLTUNE_CACHE_DIR", "/tmp/x/nvrtc");
  EXPECT_EQ(default_compiler_options().cache_dir, fs::path("/tmp/x/nvrtc"));
  env.set("SOLTUNE_CACHE_DIR", nullptr);
  env.set("XDG_CACHE_HOME", "/tmp/xdg");
  EXPECT_EQ(default_compiler_options().cache_dir, fs::path("/tmp/xdg/soltune/nvrtc"));
  env.set("XDG_CACHE_HOME", nullptr);
  env.set("HOME", "/home/someone");
  EXPECT_EQ(default_compiler_options().cache_dir, fs::path("/home/someone/.cache/soltune/nvrtc"));

  // Whichever source wins (CUDA_HOME, the build's toolkit, /usr/local/cuda), the headers are there.
  const auto dirs = default_compiler_options().include_dirs;
  ASSERT_FALSE(dirs.empty());
  EXPECT_TRUE(fs::exists(fs::path(dirs[0]) / "cuda_fp16.h")) << dirs[0];
  env.set("CUDA_HOME", nullptr);
  env.set("CUDA_PATH", nullptr);
  ASSERT_FALSE(default_compiler_options().include_dirs.empty());
  EXPECT_TRUE(fs::exists(fs::path(default_compiler_options().include_dirs[0]) / "cuda_fp16.h"));
}

}  // namespace
}  // namespace soltune
