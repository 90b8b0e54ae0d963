// The exported header: it compiles with nvcc alone, and its host-side dispatch picks the tuned
// specialization for tuned sizes, the nearest legal one for others, and none when nothing is legal.
// The program built here runs without a GPU: choice and can_implement are host code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "../support/files.hpp"
#include "../support/plan_variants.hpp"
#include "host_program.hpp"
#include "codegen/header_export.hpp"
#include "codegen/signature_check.hpp"
#include "core/device.hpp"
#include "core/fallback.hpp"
#include "core/space.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

std::string nvcc() { return test::nvcc_path().string(); }

// The tests that build the exported header into a program, with the nvcc they build with (skipped
// where none is installed).
class HeaderProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nv_.empty()) GTEST_SKIP() << "no nvcc on this machine";
  }
  const std::string nv_ = nvcc();
};

ProblemSpec shipped(const std::string& problem) { return load_problem(fs::path(SOLTUNE_SOURCE_DIR) / "templates", problem); }

// A specialization of `variant` of p at the configuration `key`, tuned for `shape`.
Specialization spec(const ProblemSpec& p, const std::string& variant, DType dtype, const std::string& key, Shape shape) {
  const auto& v = p.variant(variant);
  return {&v, dtype, Space(v, Bindings{}).parse_key(key), std::move(shape), {}};
}

// The output of the host program `body` (host_program.hpp) built by nvcc against `header` and run:
// "" when every check held.
std::string built(const std::string& nv, const std::string& problem, const std::string& header, const char* body) {
  const test::TempDir dir("header-export");
  test::write_host_program(dir.path(), problem, header, body);
  return test::build_and_run(nv, dir.path());
}

TEST_F(HeaderProgram, DispatchesOnShapeAndCompilesAlone) {
  const auto p = shipped("gelu");
  const auto& v = p.variant("vectorized");
  const Space s(v, Bindings{});
  // f32: a one-pass kernel tuned at 2^40 and a grid-stride one tuned at 2^20; bf16: one kernel.
  std::vector<Specialization> specs = {
      {&v, DType::f32, s.parse_key("BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0"),
       Shape{{{"n", int64_t{1} << 40}}}, {"one pass"}},
      {&v, DType::f32, s.parse_key("BLOCK=128,VEC=4,EPT=2,GRID_STRIDE=1,BLOCKS_PER_SM=4,FAST_TANH=0,CACHE_HINT=1"),
       Shape{{{"n", 1 << 20}}}, {"grid-stride"}},
      {&v, DType::bf16, s.parse_key("BLOCK=128,VEC=8,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=1,CACHE_HINT=1"),
       Shape{{{"n", 1 << 28}}}, {"bf16"}}};
  EXPECT_EQ(built(nv_, "gelu", export_header(p, specs, "test"), R"SRC(
  expect(gelu_f32_choice(1099511627776.0, sms, cc, optin, l2), 0, "tuned 2^40");
  expect(gelu_f32_choice(1 << 20, sms, cc, optin, l2), 1, "tuned 2^20");
  expect(gelu_f32_choice(549755813888.0, sms, cc, optin, l2), 0, "2^39: nearest 2^40");
  expect(gelu_f32_choice(1 << 21, sms, cc, optin, l2), 1, "2^21: nearest 2^20");
  expect(gelu_f32_choice(12345, sms, cc, optin, l2), 1, "odd size");
  // 2^44 is nearest to 2^40, but one pass needs cdiv(n, 256 * 4) <= 2^31 - 1: the next one is used.
  expect(gelu_f32_choice(17592186044416.0, sms, cc, optin, l2), 1, "nearest illegal: the next");
  expect(gelu_bf16_choice(1000003, sms, cc, optin, l2), 0, "the only bf16");
  expect(gelu_f32_can_implement(1, sms, cc, optin, l2), 1, "n = 1");
  expect(gelu_f32_choice(-1, sms, cc, optin, l2), -1, "a negative size: no plan");
  expect(gelu_f32_can_implement(1e19, sms, cc, optin, l2), 0, "n past what its i64 scalar holds");
  // Decided before the device is asked anything (this program runs without a GPU).
  expect(gelu_f32(nullptr, nullptr, 0), cudaSuccess, "n = 0: nothing to do, nothing launched");
  expect(gelu_f32(nullptr, nullptr, -5), cudaErrorInvalidValue, "a negative n is refused");
  gelu_f32_plan p;
  expect(gelu_f32_choice(1 << 20, sms, cc, optin, l2, &p), 1, "plan");
  expect(static_cast<int>(p.grid.x), 132 * 4, "grid-stride grid = min(sms * BLOCKS_PER_SM, tiles)");
  expect(static_cast<int>(p.n), 1 << 20, "scalar argument n");
  expect(p.source, 0, "2^20 was tuned");
  gelu_f32_choice(12345, sms, cc, optin, l2, &p);
  expect(p.source, 1, "12345: the nearest tuned one");
)SRC"), "");
}

// The fallback comes after every tuned specialization, whatever its distance: sizes no tuned kernel
// serves (softmax rows of 2^20) launch it, with source 2; a tuned kernel that holds is preferred.
TEST_F(HeaderProgram, TheFallbackServesWhatNoTunedKernelDoes) {
  const auto p = shipped("softmax");
  const auto& cached = p.variant("cached");
  const auto& fb = *p.fallback_variant();
  const Task t{&p, &cached, DType::f32, Shape{{{"rows", 4096}, {"cols", 4096}}}};
  const Space tuned(cached, t.fixed(*find_known_gpu("H200")));
  Rng rng(7);
  const auto cfg = tuned.sample(rng);
  ASSERT_TRUE(cfg.has_value());
  Specialization last{&fb, DType::f32, *fallback_config(fb, DType::f32), Shape{{{"rows", 4096}, {"cols", 4096}}}, {"fallback"}};
  last.fallback = true;  // measured at the tuned shape too: still tried last there
  const std::vector<Specialization> specs = {{&cached, DType::f32, *cfg, t.shape, {"tuned"}}, last};
  EXPECT_EQ(built(nv_, "softmax", export_header(p, specs, "test"), R"SRC(
  const double scratch = 1e12;
  softmax_f32_plan p;
  expect(softmax_f32_choice(4096, 4096, sms, cc, optin, l2, scratch, &p), 0, "tuned");
  expect(p.source, 0, "tuned: source 0");
  expect(softmax_f32_choice(1, 1048576, sms, cc, optin, l2, scratch, &p), 1, "2^20 columns: the fallback");
  expect(p.source, 2, "the fallback: source 2");
  expect(static_cast<int>(p.grid.x), 32, "a block per 32768-column chunk");
  expect(softmax_f32_choice(3, 1000003, sms, cc, optin, l2, scratch, &p), 1, "odd long rows: the fallback");
  expect(softmax_f32_choice(7, 1, sms, cc, optin, l2, scratch, &p), 1, "one column: the fallback");
  expect(softmax_f32_can_implement(1, 67108864, sms, cc, optin, l2, scratch), 1, "2^26 columns");
  expect(softmax_f32_choice(-1, 5, sms, cc, optin, l2, scratch), -1, "a negative size: none");
  long long need = softmax_f32_scratch_bytes(1, 1048576, sms, cc, optin, l2);
  if (need != 32 * 8) { std::printf("scratch %lld, want 256\n", need); ++bad; }
  expect(softmax_f32_choice(1, 1048576, sms, cc, optin, l2, 100), -1, "too little scratch: none");
)SRC"), "");
}

// A workspace argument reaches the caller as a plain (non-const) pointer, with a note that it is
// zeroed once and left zeroed, and a function for its element count on the caller's device.
TEST_F(HeaderProgram, WorkspaceIsAPointerArgumentWithItsSize) {
  const auto p = shipped("l1norm");
  const auto& v = p.variant("last_block");
  const Space s(v, Bindings{});
  const std::vector<Specialization> specs = {
      {&v, DType::f32, s.parse_key("BLOCK=256,VEC=4,EPT=4,BLOCKS_PER_SM=4,CACHE_HINT=1,REDUCE=0"),
       Shape{{{"n", 1 << 28}}}, {"f32"}},
      {&v, DType::bf16, s.parse_key("BLOCK=512,VEC=8,EPT=2,BLOCKS_PER_SM=2,CACHE_HINT=3,REDUCE=1"),
       Shape{{{"n", 1 << 28}}}, {"bf16"}}};
  const auto header = export_header(p, specs, "test");
  EXPECT_NE(header.find("'ws' is a workspace"), std::string::npos);
  EXPECT_NE(header.find("zero it once"), std::string::npos);
  EXPECT_NE(header.find("leaves it zeroed"), std::string::npos);
  EXPECT_EQ(built(nv_, "l1norm", header, R"SRC(
  // The signatures: the workspace is an int* the kernel may write (and leaves zeroed).
  cudaError_t (*f32)(const float*, float*, int*, long long, cudaStream_t) = &l1norm_f32;
  cudaError_t (*bf16)(const __nv_bfloat16*, __nv_bfloat16*, int*, long long, cudaStream_t) = &l1norm_bf16;
  (void)f32; (void)bf16;
  const long long elems = l1norm_f32_ws_elems(1000003, 132, 90, 232448, 62914560);
  if (elems != 4 + 16 * 132) { std::printf("ws elems %lld\n", elems); ++bad; }
  if (l1norm_bf16_ws_elems(3, 78, 90, 232448, 62914560) != 4 + 16 * 78) { std::printf("bf16 ws elems\n"); ++bad; }
)SRC"), "");
}

// An embedded binary reaches the compiled program byte for byte (NULs, quotes, backslashes, '?',
// digits right after an escape), once per distinct binary, and SOLTUNE_SOURCE_ONLY leaves it out.
TEST_F(HeaderProgram, EmbedsEachBinaryExactlyOnce) {
  const auto p = shipped("gelu");
  const auto& v = p.variant("vectorized");
  const Space s(v, Bindings{});
  const auto c = s.parse_key("BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
  std::string bytes("\x7f" "ELF\0\0\x01\"q\\?\?=\n7\x00" "12\xff\x80", 20);
  for (int i = 0; i < 600; ++i) bytes += static_cast<char>((i * 37 + 11) % 256);
  const auto cb = s.parse_key("BLOCK=128,VEC=8,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=1,CACHE_HINT=1");
  // The lowered name of each specialization's one kernel, by its name expression.
  auto lowered = [&](DType dt, const Config& k, const std::string& name) {
    return std::map<std::string, std::string>{{name_expression(v.launch, dt, specialization_bindings(v, k.values, {})), name}};
  };
  std::vector<Specialization> specs = {{&v, DType::f32, c, Shape{{{"n", 1 << 20}}}, {}, bytes, lowered(DType::f32, c, "kernel_a"), 90},
                                       {&v, DType::f32, c, Shape{{{"n", 1 << 28}}}, {}, bytes, lowered(DType::f32, c, "kernel_a"), 90},
                                       {&v, DType::bf16, cb, Shape{{{"n", 1 << 20}}}, {}, bytes + "x", lowered(DType::bf16, cb, "kernel_b"), 90}};
  const auto header = export_header(p, specs, "test");
  EXPECT_NE(header.find("image_1[]"), std::string::npos);
  EXPECT_EQ(header.find("image_2[]"), std::string::npos) << "one array per distinct binary";
  EXPECT_NE(header.find("if (p.cc == 90)"), std::string::npos);
  const test::TempDir dir("header-export");
  test::write_file(dir.path() / "gelu.cuh", header);
  std::string expect = "{";
  for (unsigned char b : bytes) expect += std::to_string(static_cast<int>(b)) + ",";
  std::ofstream(dir.path() / "main.cu") << "#include \"gelu.cuh\"\n#include <cstdio>\n#include <cstring>\n"
                                        << "static const unsigned char want[] = " << expect << "};\nint main() {\n"
                                        << "#ifdef SOLTUNE_SOURCE_ONLY\n  return 0;\n#else\n"
                                        << "  using namespace soltune_gelu::detail;\n"
                                        << "  const bool a = sizeof(image_0) == sizeof(want) + 1 && std::memcmp(image_0, want, sizeof(want)) == 0;\n"
                                        << "  const bool b = sizeof(image_1) == sizeof(want) + 2 && image_1[sizeof(want)] == 'x';\n"
                                        << "  std::printf(\"%d %d\\n\", a, b);\n  return a && b ? 0 : 1;\n#endif\n}\n";
  for (const std::string def : {"", " -DSOLTUNE_SOURCE_ONLY"}) {
    EXPECT_EQ(test::build_and_run(nv_, dir.path(), def), "") << def;
  }
}

// An architecture-specific variant (wgmma, sm_90a) travels as its cubin only: nvcc's plain sm_90 pass
// would reject its code, so the header carries none of it, compiles with -arch=sm_90, and dispatches
// to it only on the compute capability its cubin was built for (never from source).
TEST_F(HeaderProgram, AnArchitectureSpecificVariantRunsFromItsCubinOnly) {
  const auto p = shipped("matmul");
  const std::vector<Specialization> specs = {
      spec(p, "wgmma", DType::bf16, "BN=256,STAGES=3", Shape{{{"m", 4096}, {"n", 4096}, {"k", 4096}, {"trans_b", 0}}}),
      spec(p, "mma_sync", DType::bf16, "BM=128,BN=256,BK=64,WM=2,WN=4,STAGES=3,MINB=1,SPLITK=1,FRAG=0,PAD=0",
           Shape{{{"m", 1024}, {"n", 1024}, {"k", 1024}, {"trans_b", 0}}})};
  const auto header = export_header(p, specs, "test");
  EXPECT_EQ(header.find("wgmma.mma_async"), std::string::npos) << "no sm_90a source in the header";
  EXPECT_NE(header.find("targets sm_90a: its kernels run from the embedded cubins only"), std::string::npos);
  const test::TempDir dir("header-export");
  test::write_host_program(dir.path(), "matmul", header, R"SRC(
  // No cubin was embedded here: the wgmma specialization never dispatches, the portable one does.
  expect(matmul_bf16_choice(4096, 4096, 4096, 0, sms, cc, optin, l2, 1e9), 1, "wgmma without its cubin: mma_sync");
  expect(matmul_bf16_choice(1024, 1024, 1024, 0, sms, cc, optin, l2, 1e9), 1, "mma_sync at its own shape");
)SRC");
  EXPECT_EQ(test::build_and_run(nv_, dir.path()), "");
  EXPECT_EQ(test::build_and_run(nv_, dir.path(), " -DSOLTUNE_SOURCE_ONLY"), "");
}

// A kernel compiled for one width (RMSNorm looped, WIDTH=1: cols is a template argument) serves that
// width only; another width falls to the other specializations, or to none.
TEST_F(HeaderProgram, AKernelCompiledForASizeServesThatSizeOnly) {
  const auto p = shipped("rmsnorm");
  const std::vector<Specialization> specs = {
      spec(p, "looped", DType::f32, "TPR=512,RPB=1,VEC=4,UNROLL=1,STAGE=0,PERSIST=0,BPS=4,HINT=0,WIDTH=1",
           Shape{{{"rows", 8192}, {"cols", 4096}}}),
      spec(p, "looped", DType::bf16, "TPR=512,RPB=1,VEC=8,UNROLL=1,STAGE=0,PERSIST=0,BPS=2,HINT=0,WIDTH=1",
           Shape{{{"rows", 8192}, {"cols", 4096}}}),
      spec(p, "rowreg", DType::bf16, "TPR=256,RPB=1,VEC=8,EPT=1,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0",
           Shape{{{"rows", 16384}, {"cols", 2048}}})};
  const auto header = export_header(p, specs, "test");
  EXPECT_NE(header.find("rmsnorm_looped<float, 512, 1, 4, 1, 0, 0, 4, 0, 1, 4096>"), std::string::npos);
  // WIDTH 0 compiles no width in ("WIDTH * cols" is 0): one kernel for any width its constraints allow.
  EXPECT_NE(header.find("rmsnorm_rowreg<__nv_bfloat16, 256, 1, 8, 1, 0, 0, 1, 0, 0, 0, 0, 0>"), std::string::npos);
  EXPECT_EQ(built(nv_, "rmsnorm", header, R"SRC(
  expect(rmsnorm_f32_choice(8192, 4096, sms, cc, optin, l2), 0, "the width it was compiled for");
  expect(rmsnorm_f32_choice(100, 4096, sms, cc, optin, l2), 0, "other rows, same width");
  expect(rmsnorm_f32_choice(8192, 4092, sms, cc, optin, l2), -1, "another width: nothing else for f32");
  expect(rmsnorm_bf16_choice(8192, 4096, sms, cc, optin, l2), 0, "bf16 at its width");
  expect(rmsnorm_bf16_choice(8192, 2048, sms, cc, optin, l2), 1, "bf16 elsewhere: the generic kernel");
  expect(rmsnorm_bf16_choice(8192, 1536, sms, cc, optin, l2), 1, "the generic kernel at a width it was not tuned for");
)SRC"), "");
}

// A problem's rules over its sizes hold in the header as at config load: attention's kernels serve no
// h that is not a multiple of h_kv, and no causal call with more queries than keys.
TEST_F(HeaderProgram, NoKernelServesSizesThatBreakAProblemRule) {
  const auto p = shipped("attention");
  // With a binary (bytes standing in for its cubin): its launch, which takes the keys as `k`, is
  // compiled too.
  auto s = spec(p, "fa2", DType::bf16, "BM=64,BN=32,STAGES=2,SPLIT=1,PACK=0",
                Shape{{{"b", 2}, {"h", 8}, {"h_kv", 2}, {"s_q", 512}, {"s_k", 512}, {"d", 128}, {"causal", 1}}});
  s.binary = std::string("\x7f" "ELF", 4) + std::string(64, 'x');
  s.binary_cc = 90;
  for (const auto* l : s.variant->all_launches())
    s.lowered[name_expression(*l, s.dtype, specialization_bindings(*s.variant, s.config.values, s.shape.dims))] = "kernel_" + l->kernel;
  const auto header = export_header(p, {s}, "test");
  EXPECT_NE(header.find("if (p.cc == 90)"), std::string::npos);
  // (fa2's split plans take scratch: the choice is asked with room for any of it.)
  EXPECT_EQ(built(nv_, "attention", header, R"SRC(
  expect(attention_bf16_choice(2, 8, 2, 512, 512, 128, 1, sms, cc, optin, l2, 1e12), 0, "the shape it was tuned for");
  expect(attention_bf16_choice(1, 6, 6, 77, 1000, 128, 0, sms, cc, optin, l2, 1e12), 0, "any legal shape of its d");
  expect(attention_bf16_choice(1, 6, 4, 77, 1000, 128, 0, sms, cc, optin, l2, 1e12), -1, "h not a multiple of h_kv");
  expect(attention_bf16_choice(1, 8, 8, 600, 512, 128, 1, sms, cc, optin, l2, 1e12), -1, "causal, more queries than keys");
  expect(attention_bf16_choice(1, 8, 8, 600, 512, 128, 0, sms, cc, optin, l2, 1e12), 0, "the same without the mask");
)SRC"), "");
}

// A cluster given at launch reaches the header: the plan carries it and refuses devices without
// clusters, and the source path launches through cudaLaunchKernelEx (compiled here, run without a GPU).
TEST_F(HeaderProgram, ClustersGivenAtLaunchArePlannedAndLaunchedWithTheirAttribute) {
  const test::TempDir tmp("header-export");
  const fs::path root = tmp.path();
  fs::create_directories(root / "templates");
  fs::copy(fs::path(SOLTUNE_SOURCE_DIR) / "templates" / "gelu", root / "templates" / "gelu", fs::copy_options::recursive);
  std::ofstream(root / "templates" / "gelu" / "clustered.cu") << R"(
template <typename T, int BLOCK, int CL>
__global__ void gelu_clustered(const T* x, T* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;
  if (i < n) y[i] = x[i];
}
)";
  std::ofstream(root / "templates" / "gelu" / "clustered.yaml")
      << "kernel: gelu_clustered\ntemplate_args: [T, BLOCK, CL]\nknobs: {BLOCK: [256], CL: [2, 4]}\n"
         "launch: {grid: \"cdiv(cdiv(n, BLOCK), CL) * CL\", block: BLOCK, cluster: [CL, 1]}\n";
  const auto p = load_problem(root / "templates", "gelu");
  const auto& v = p.variant("clustered");
  const Space sp(v, Bindings{});
  const std::vector<Specialization> specs = {{&v, DType::f32, sp.parse_key("BLOCK=256,CL=4"), Shape{{{"n", 1 << 20}}}, {}}};
  const auto header = export_header(p, specs, "test");
  EXPECT_NE(header.find("cudaLaunchKernelEx(&config"), std::string::npos);
  test::write_host_program(root, "gelu", header, R"SRC(
  gelu_f32_plan p;
  expect(gelu_f32_choice(1000003, 132, 90, 232448, 62914560, &p), 0, "sm_90 takes the clustered kernel");
  expect(p.cluster.x * p.cluster.y * p.cluster.z, 4, "its cluster");
  expect(p.grid.x % 4, 0, "a grid of whole clusters");
  expect(gelu_f32_choice(1000003, 108, 80, 166912, 41943040), -1, "an A100 has no clusters");
)SRC");
  EXPECT_EQ(test::build_and_run(nv_, root), "");
}

// The opt-in for dynamic shared memory counts the kernel's static part: 48 KiB of rows beside a
// reduction scratch failed to launch when only dynamic memory above 48 KiB asked for it.
TEST(HeaderExport, SharedMemoryOptInCountsStaticMemory) {
  const auto p = shipped("gelu");
  const auto& v = p.variant("vectorized");
  const Space s(v, Bindings{});
  Specialization spec{&v, DType::f32, s.parse_key("BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0"),
                      Shape{{{"n", 8}}}, {}};
  spec.smem_static = 1024;
  EXPECT_NE(export_header(p, {spec}, "x").find("if (p.smem > 48128)"), std::string::npos);
  spec.smem_static = -1;  // not recorded: ask whenever there is any
  EXPECT_NE(export_header(p, {spec}, "x").find("if (p.smem > 0)"), std::string::npos);
}

// Two different exports of one problem in one program (two extension modules, two libraries) keep
// their own code: with the same names, the linker (or, for function-local statics such as a loaded
// cubin, the dynamic loader, even across RTLD_LOCAL libraries) kept one copy for both, and the second
// export launched the first one's kernels. Two translation units, one header each, one program.
TEST_F(HeaderProgram, TwoDifferentExportsOfOneProblemLinkIntoOneProgram) {
  const auto p = shipped("gelu");
  const auto& v = p.variant("vectorized");
  const Space s(v, Bindings{});
  const auto one_pass = s.parse_key("BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
  const auto strided = s.parse_key("BLOCK=128,VEC=4,EPT=2,GRID_STRIDE=1,BLOCKS_PER_SM=4,FAST_TANH=0,CACHE_HINT=1");
  // a: two f32 specializations (2^40 one pass, 2^20 grid-stride); b: one (2^20 one pass).
  const std::vector<Specialization> a = {{&v, DType::f32, one_pass, Shape{{{"n", int64_t{1} << 40}}}, {}},
                                         {&v, DType::f32, strided, Shape{{{"n", 1 << 20}}}, {}}};
  const std::vector<Specialization> b = {{&v, DType::f32, one_pass, Shape{{{"n", 1 << 20}}}, {}}};
  const auto ha = export_header(p, a, "a"), hb = export_header(p, b, "b");
  EXPECT_EQ(ha, export_header(p, a, "a")) << "an export is reproducible";
  const test::TempDir tmp("header-export");
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  std::ofstream(dir / "a" / "gelu.cuh") << ha;
  std::ofstream(dir / "b" / "gelu.cuh") << hb;
  for (const char* side : {"a", "b"})
    std::ofstream(dir / (std::string(side) + ".cu"))
        << "#include \"" << side << "/gelu.cuh\"\n"
        << "int " << side << "_choice(double n) { return soltune_gelu::gelu_f32_choice(n, 132, 90, 232448, 62914560); }\n"
        << "unsigned " << side << "_grid(double n) {\n  soltune_gelu::gelu_f32_plan p;\n"
        << "  soltune_gelu::gelu_f32_choice(n, 132, 90, 232448, 62914560, &p);\n  return p.grid.x;\n}\n";
  std::ofstream(dir / "main.cu") << R"SRC(
#include <cstdio>
int a_choice(double); int b_choice(double); unsigned a_grid(double); unsigned b_grid(double);
int main() {
  int bad = 0;
  if (a_choice(1 << 20) != 1) { std::printf("a chose %d at 2^20, want 1\n", a_choice(1 << 20)); ++bad; }
  if (b_choice(1 << 20) != 0) { std::printf("b chose %d at 2^20, want 0\n", b_choice(1 << 20)); ++bad; }
  if (a_grid(1 << 20) != 132 * 4) { std::printf("a's grid %u, want 528 (grid-stride)\n", a_grid(1 << 20)); ++bad; }
  if (b_grid(1 << 20) != 1024) { std::printf("b's grid %u, want 1024 (one pass)\n", b_grid(1 << 20)); ++bad; }
  std::printf(bad ? "FAILED\n" : "ok\n");
  return bad;
}
)SRC";
  EXPECT_EQ(test::build_and_run(nv_, dir, " -I" + dir.string() + " " + (dir / "a.cu").string() + " " + (dir / "b.cu").string()), "");
}

TEST(HeaderExport, RefusesTwoSpecializationsForOneShape) {
  const auto p = shipped("gelu");
  const auto& v = p.variant("vectorized");
  const Space s(v, Bindings{});
  const auto c = s.parse_key("BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
  EXPECT_THROW(export_header(p, {{&v, DType::f32, c, Shape{{{"n", 8}}}, {}}, {&v, DType::f32, c, Shape{{{"n", 8}}}, {}}}, "x"),
               Error);
}

// A plan of two launches sharing scratch: the header launches both in order (the second where its
// `when` holds), takes the scratch from the caller with its size, says how much a call uses, and
// yields to a plan without scratch when too little is given.
TEST_F(HeaderProgram, PlansOfSeveralLaunchesTakeTheirScratchFromTheCaller) {
  test::TempDir tmp("export-plan");
  fs::copy(fs::path(SOLTUNE_SOURCE_DIR) / "templates" / "gelu", tmp.path() / "gelu", fs::copy_options::recursive);
  test::add_two_step_gelu(tmp.path() / "gelu");
  const auto p = load_problem(tmp.path(), "gelu");
  const auto& v = p.variant("twostep");
  const Space s(v, Bindings{});
  const std::vector<Specialization> specs = {
      {&v, DType::f32, s.parse_key("BLOCK=256,STEPS=2,GAP=0,OVER=0"), Shape{{{"n", 1 << 20}}}, {"two steps"}},
      {&v, DType::f32, s.parse_key("BLOCK=128,STEPS=1,GAP=0,OVER=0"), Shape{{{"n", 1 << 28}}}, {"one step"}},
      {&v, DType::bf16, s.parse_key("BLOCK=128,STEPS=2,GAP=0,OVER=0"), Shape{{{"n", 1 << 20}}}, {"bf16"}}};
  const auto header = export_header(p, specs, "test");
  EXPECT_NE(header.find("gelu_f32_launch_0_main"), std::string::npos);
  EXPECT_NE(header.find("gelu_f32_launch_0_0"), std::string::npos);
  test::write_host_program(tmp.path(), "gelu", header, R"SRC(
  cudaError_t (*f32)(const float*, float*, long long, void*, size_t, cudaStream_t) = &gelu_f32;
  (void)f32;
  expect(gelu_f32_scratch_bytes(1 << 20, sms, cc, optin, l2), 4194304, "f32 scratch at 2^20");
  expect(gelu_f32_scratch_bytes(1 << 28, sms, cc, optin, l2), 0, "one step: none");
  expect(gelu_bf16_scratch_bytes(1000, sms, cc, optin, l2), 4096, "bf16 scratch, 256-byte multiple");
  expect(gelu_f32_choice(1 << 20, sms, cc, optin, l2, 4194304.0), 0, "enough scratch: the tuned plan");
  expect(gelu_f32_choice(1 << 20, sms, cc, optin, l2, 4194303.0), 1, "too little: the plan without");
  expect(gelu_bf16_can_implement(1000, sms, cc, optin, l2, 0.0), 0, "bf16 needs scratch");
  gelu_f32_plan p;
  gelu_f32_choice(1000, sms, cc, optin, l2, 1e9, &p);
  expect(p.steps[0].run, 1, "the second launch runs");
  expect(static_cast<long long>(p.steps[0].grid.x), 4, "its grid: cdiv(1000, 256)");
  expect(p.scratch_elems[0], 1000, "scratch elements");
  gelu_f32_choice(1 << 28, sms, cc, optin, l2, 1e9, &p);
  expect(p.steps[0].run, 0, "one step: the second launch is left out");
)SRC");
  EXPECT_EQ(test::build_and_run(nv_, tmp.path()), "");
}

// A launch marked programmatic goes through cudaLaunchKernelEx with programmatic stream
// serialisation where the device has it (p.cc >= 90), from source and from the embedded binary alike.
TEST_F(HeaderProgram, AProgrammaticLaunchCarriesItsAttributeWhereTheDeviceHasIt) {
  test::TempDir tmp("export-pdl");
  fs::copy(fs::path(SOLTUNE_SOURCE_DIR) / "templates" / "gelu", tmp.path() / "gelu", fs::copy_options::recursive);
  test::add_two_step_gelu(tmp.path() / "gelu");
  const auto yaml = tmp.path() / "gelu" / "twostep.yaml";
  test::write_file(yaml, test::replace_once(test::read_file(yaml), "when: STEPS == 2}", "when: STEPS == 2, programmatic: true}"));
  const auto p = load_problem(tmp.path(), "gelu");
  const auto& v = p.variant("twostep");
  const Space s(v, Bindings{});
  const auto header =
      export_header(p, {{&v, DType::f32, s.parse_key("BLOCK=256,STEPS=2,GAP=0,OVER=0"), Shape{{{"n", 1 << 20}}}, {"two steps"}}}, "test");
  EXPECT_NE(header.find("stream, dim3(1, 1, 1), attrs, p.cc >= 90);\n  return cudaLaunchKernelEx(&config, "), std::string::npos);
  EXPECT_NE(header.find("cudaLaunchAttributeProgrammaticStreamSerialization"), std::string::npos);
  std::ofstream(tmp.path() / "gelu.cuh") << header;
  std::ofstream(tmp.path() / "main.cu") << R"SRC(
#include "gelu.cuh"
#include <cstdio>
int main() {
  cudaError_t (*f32)(const float*, float*, long long, void*, size_t, cudaStream_t) = &soltune_gelu::gelu_f32;
  (void)f32;
  std::printf("ok\n");
  return 0;
}
)SRC";
  EXPECT_EQ(test::build_and_run(nv_, tmp.path()), "");
}

// A gelu copy's "vectorized" variant replaced by one kernel of (T, BLOCK) and `params`, whose body is
// one statement on element i: the variant of the tests below.
void one_kernel_variant(const fs::path& gelu, const std::string& kernel, const std::string& params,
                        const std::string& statement) {
  test::write_file(gelu / "vectorized.cu", "template <typename T, int BLOCK>\n__global__ void " + kernel + "(" + params +
                                               ") {\n  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + "
                                               "threadIdx.x;\n  if (i < n) " + statement + "\n}\n");
  test::write_file(gelu / "vectorized.yaml", "kernel: " + kernel + "\ntemplate_args: [T, BLOCK]\nknobs: {BLOCK: [128, 256]}\n"
                                             "dtypes: [f32]\nlaunch: {grid: \"cdiv(n, BLOCK)\", block: BLOCK}\n");
}

// The header in `dir` (gelu.cuh) built by nvcc with a program that takes gelu_f32's address as
// `signature` (its pointer type, declaring f32) and asks it for a plan: "" where both hold.
std::string build_with_signature(const std::string& nv, const fs::path& dir, const std::string& header,
                                 const std::string& signature) {
  std::ofstream(dir / "gelu.cuh") << header;
  std::ofstream(dir / "main.cu") << "#include \"gelu.cuh\"\n#include <cstdio>\nusing namespace soltune_gelu;\nint main() {\n  " +
                                        signature + " = &gelu_f32;\n  (void)f32;\n"
                                        "  const int bad = gelu_f32_choice(1000, 132, 90, 232448, 62914560) != 0;\n"
                                        "  std::printf(bad ? \"FAILED\\n\" : \"ok\\n\");\n  return bad;\n}\n";
  return test::build_and_run(nv, dir);
}

// An in-place buffer (role inout) reaches the caller as a plain pointer, with a note that the call
// overwrites it.
TEST_F(HeaderProgram, AnInPlaceBufferIsAPointerTheCallOverwrites) {
  test::TempDir tmp("export-inout");
  fs::copy(fs::path(SOLTUNE_SOURCE_DIR) / "templates" / "gelu", tmp.path() / "gelu", fs::copy_options::recursive);
  auto yaml = test::read_file(tmp.path() / "gelu" / "problem.yaml");
  for (const auto& [from, to] : std::map<std::string, std::string>{
           {"role: in, init:", "role: inout, init:"},
           {"  - {name: y, kind: buffer, dtype: T, shape: [n], role: out}\n", ""},
           {"args: [t1, t0, y, n]", "args: [t1, t0, x, n]"},
           {"fallback: {variant: vectorized,", "# fallback: {variant: vectorized,"}}) {  // the variant is replaced
    const auto pos = yaml.find(from);
    ASSERT_NE(pos, std::string::npos) << from;
    yaml.replace(pos, from.size(), to);
  }
  test::write_file(tmp.path() / "gelu" / "problem.yaml", yaml);
  one_kernel_variant(tmp.path() / "gelu", "clamp_inplace", "T* x, long long n", "x[i] = x[i] > T(0) ? x[i] : T(0);");
  const auto p = load_problem(tmp.path(), "gelu");
  const auto& v = p.variant("vectorized");
  const Space s(v, Bindings{});
  const std::vector<Specialization> specs = {{&v, DType::f32, s.parse_key("BLOCK=256"), Shape{{{"n", 1 << 20}}}, {"f32"}}};
  const auto header = export_header(p, specs, "test");
  EXPECT_NE(header.find("'x' is read and overwritten in place"), std::string::npos);
  // x is not const
  EXPECT_EQ(build_with_signature(nv_, tmp.path(), header, "cudaError_t (*f32)(float*, long long, cudaStream_t)"), "");
}

// A kernel written for another tuner takes its input as a plain `T*`: its signature passes, and the
// exported call keeps the input const (soltune checks that no kernel writes it) and still compiles,
// from the source path as from the cubin's.
TEST_F(HeaderProgram, AnInputTakenAsAPlainPointerStaysConstInTheExportedCall) {
  test::TempDir tmp("export-plain-input");
  fs::copy(fs::path(SOLTUNE_SOURCE_DIR) / "templates" / "gelu", tmp.path() / "gelu", fs::copy_options::recursive);
  test::remove_fallback(tmp.path() / "gelu", "vectorized");  // the variant is replaced
  one_kernel_variant(tmp.path() / "gelu", "relu", "T* x, T* y, long long n", "y[i] = x[i] > T(0) ? x[i] : T(0);");
  const auto p = load_problem(tmp.path(), "gelu");
  const auto& v = p.variant("vectorized");
  const Compiler compiler(default_compiler_options());
  EXPECT_EQ(check_signatures(compiler, p, v, DType::f32, Bindings{{"n", 4096}, {"BLOCK", 128}}, "sm_90"), "");
  const Space s(v, Bindings{});
  const std::vector<Specialization> specs = {{&v, DType::f32, s.parse_key("BLOCK=256"), Shape{{{"n", 1 << 20}}}, {"f32"}}};
  // x stays const
  EXPECT_EQ(build_with_signature(nv_, tmp.path(), export_header(p, specs, "test"),
                                 "cudaError_t (*f32)(const float*, float*, long long, cudaStream_t)"),
            "");
}

}  // namespace
}  // namespace soltune
