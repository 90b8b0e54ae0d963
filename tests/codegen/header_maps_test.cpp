// The exported header for variants whose kernels take tensor maps: each call encodes the maps from
// the caller's pointers through the driver entry point the runtime hands out (no -lcuda), the plans
// check the rules soltune tuned with, so that dispatch passes over a specialization whose map these
// sizes would break, and the header compiles with nvcc alone. The programs built here run without a
// GPU: plans and dispatch are host code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/files.hpp"
#include "../support/tma_variants.hpp"
#include "host_program.hpp"
#include "codegen/header_export.hpp"
#include "core/space.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

std::string nvcc() { return test::nvcc_path().string(); }

using HeaderMaps = test::TmaProblemCopies;

TEST_F(HeaderMaps, MatmulEncodesItsMapAtEachCallAndItsRulesSteerDispatch) {
  const auto p = load_problem(dir_.path(), "matmul");
  const auto& tma = p.variant("tma_a");
  const auto& tiled = p.variant("tiled");
  const std::vector<Specialization> specs = {
      {&tma, DType::bf16, Space(tma, Bindings{}).parse_key("BM=32,BK=32"), Shape{{{"m", 4096}, {"n", 4096}, {"k", 4096}, {"trans_b", 0}}}, {}},
      {&tiled, DType::bf16,
       Space(tiled, Bindings{}).parse_key("BM=64,BN=64,BK=16,TM=4,TN=4,VEC=4,PAD=0,STAGES=2,ASYNC=1,A_T=0,SPLIT=0,UNROLL=0"),
       Shape{{{"m", 1024}, {"n", 1024}, {"k", 1024}, {"trans_b", 0}}}, {}}};
  const auto header = export_header(p, specs, "test");
  // The encoder's type and CUtensorMap come from the toolkit's headers, hoisted; the function itself
  // from the driver at run time, never linked.
  const auto include = header.find("#include <cudaTypedefs.h>");
  ASSERT_NE(include, std::string::npos);
  EXPECT_LT(include, header.find("namespace soltune_matmul"));
  EXPECT_NE(header.find("cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", &f, 12000, cudaEnableDefault, &q)"),
            std::string::npos);
  EXPECT_EQ(header.find("cuTensorMapEncodeTiled("), std::string::npos) << "the header must not call the driver API by name";
  EXPECT_NE(header.find("!detail::encode_tensor_map(tensor_map_ta_, p.maps[0], a))\n    return cudaErrorInvalidValue;"),
            std::string::npos);
  EXPECT_NE(header.find("gemm_tma_a<__nv_bfloat16, 32, 32><<<p.grid, p.block, p.smem, stream>>>(tensor_map_ta_, const_cast<__nv_bfloat16*>(b), c, p.m, p.n, p.k)"),
            std::string::npos);
  EXPECT_NE(header.find("returns cudaErrorInvalidValue without launching"), std::string::npos);

  test::write_host_program(dir_.path(), "matmul", header, R"SRC(
  expect(matmul_bf16_choice(4096, 4096, 4096, 0, sms, cc, optin, l2), 0, "tuned");
  expect(matmul_bf16_choice(4096, 3000, 2040, 0, sms, cc, optin, l2), 0, "16-byte rows at other sizes");
  expect(matmul_bf16_choice(4096, 4096, 1793, 0, sms, cc, optin, l2), 1, "k = 1793: A's rows are 3586 bytes");
  expect(matmul_bf16_choice(4096, 4096, 4096, 0, sms, 80, optin, l2), 1, "no tensor maps before compute capability 9.0");
  matmul_bf16_plan p;
  expect(matmul_bf16_choice(4096, 2048, 1024, 0, sms, cc, optin, l2, &p), 0, "plan");
  expect(p.maps[0].rank, 2, "rank");
  expect(p.maps[0].dtype, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, "element type");
  expect(static_cast<long long>(p.maps[0].dims[0]), 1024, "dims[0] = k");
  expect(static_cast<long long>(p.maps[0].dims[1]), 4096, "dims[1] = m");
  expect(static_cast<long long>(p.maps[0].strides[0]), 2048, "a row of A: k bf16");
  expect(p.maps[0].box[0], 32, "box[0] = BK");
  expect(p.maps[0].box[1], 32, "box[1] = BM");
  expect(p.maps[0].swizzle, CU_TENSOR_MAP_SWIZZLE_NONE, "swizzle");
  // The caller still passes pointers; the kernel's own 128-byte type is built from the encoded map.
  cudaError_t (*f)(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, long long, long long, long long,
                   long long, cudaStream_t) = &matmul_bf16;
  (void)f;
  detail::TensorMapArg arg{};
  arg.bytes[15] = 42;
  const v_tma_a::TmaMap m = arg;
  expect(static_cast<long long>(m.opaque[15]), 42, "conversion to the kernel's type");
)SRC");
  const auto nv = nvcc();
  if (nv.empty()) GTEST_SKIP() << "no nvcc on this machine";
  EXPECT_EQ(test::build_and_run(nv, dir_.path()), "");
}

// Maps over an input and over an output, one dimension each: the plan computes both from the sizes.
TEST_F(HeaderMaps, GeluMapsItsInputAndItsOutput) {
  const auto p = load_problem(dir_.path(), "gelu");
  const auto& v = p.variant("tma");
  const Space s(v, Bindings{});
  const std::vector<Specialization> specs = {{&v, DType::f32, s.parse_key("BOX=256"), Shape{{{"n", 1 << 20}}}, {}},
                                             {&v, DType::bf16, s.parse_key("BOX=128"), Shape{{{"n", 1 << 20}}}, {}}};
  const auto header = export_header(p, specs, "test");
  EXPECT_NE(header.find("!detail::encode_tensor_map(tensor_map_tx_, p.maps[0], x) ||\n      "
                        "!detail::encode_tensor_map(tensor_map_ty_, p.maps[1], y))"),
            std::string::npos);
  test::write_host_program(dir_.path(), "gelu", header, R"SRC(
  gelu_bf16_plan p;
  expect(gelu_bf16_choice(1000008, 132, 90, 232448, 62914560, &p), 0, "an untuned size");
  expect(static_cast<long long>(p.maps[0].dims[0]), 1000008, "x's map");
  expect(static_cast<long long>(p.maps[1].dims[0]), 1000008, "y's map");
  expect(p.maps[1].box[0], 128, "y's box");
  expect(p.maps[1].rank, 1, "rank");
  expect(gelu_f32_choice(4, 132, 90, 232448, 62914560), 0, "one 16-byte unit");
  // y's innermost dimension must be whole 16-byte units: a TMA store writes them whole.
  expect(gelu_bf16_choice(1000003, 132, 90, 232448, 62914560), -1, "an odd size");
  expect(gelu_f32_choice(1, 132, 90, 232448, 62914560), -1, "one element");
)SRC");
  const auto nv = nvcc();
  if (nv.empty()) GTEST_SKIP() << "no nvcc on this machine";
  EXPECT_EQ(test::build_and_run(nv, dir_.path()), "");
}

// Maps over scratch buffers (wgmma_pad: the operands' copies with rows padded to 8 elements): the
// launch places the scratch buffers in the caller's allocation before it encodes the maps over
// them, and the plan's map has the copy's 16-byte rows.
TEST_F(HeaderMaps, AMapOverAScratchBufferIsEncodedAtItsPlaceInTheCallersScratch) {
  const auto p = load_problem(dir_.path(), "matmul");
  const auto& v = p.variant("wgmma_pad");
  std::vector<Specialization> specs = {{&v, DType::bf16, Space(v, Bindings{}).parse_key("BM=128,BN=256,STAGES=4,CM=1,GROUP=8,SPARE=0"),
                                              Shape{{{"m", 1793}, {"n", 1793}, {"k", 1793}, {"trans_b", 0}}}, {}}};
  // An sm_90a variant is served from its cubin only: these bytes stand for one (nothing here loads it).
  specs[0].binary = "cubin";
  specs[0].binary_cc = 90;
  const auto header = export_header(p, specs, "test");
  const auto placed = header.find("a_pad = p.scratch_elems[0] > 0");
  const auto encoded = header.find("!detail::encode_tensor_map(tensor_map_ta_, p.maps[0], a_pad)");
  ASSERT_NE(placed, std::string::npos) << header;
  ASSERT_NE(encoded, std::string::npos) << header;
  EXPECT_LT(placed, encoded);
  EXPECT_NE(header.find("!detail::encode_tensor_map(tensor_map_tb_, p.maps[1], b_pad)"), std::string::npos);
  test::write_host_program(dir_.path(), "matmul", header, R"SRC(
  matmul_bf16_plan p;
  const double scratch = 1 << 30;
  expect(matmul_bf16_choice(1793, 1793, 1793, 0, sms, cc, optin, l2, scratch, &p), 0, "tuned");
  expect(static_cast<long long>(p.maps[0].dims[0]), 1800, "A's copy: k padded to 8");
  expect(static_cast<long long>(p.maps[0].strides[0]), 3600, "its rows 16-byte aligned");
  expect(static_cast<long long>(p.maps[1].dims[0]), 1800, "B's copy (NN): n padded to 8");
  expect(matmul_bf16_scratch_bytes(1793, 1793, 1793, 0, sms, cc, optin, l2), 2 * 6455040, "both copies, 256-byte aligned");
  expect(matmul_bf16_choice(1793, 1793, 1793, 0, sms, cc, optin, l2, 1e6), -1, "a scratch allocation too small");
  expect(matmul_bf16_choice(4096, 4096, 4096, 0, sms, cc, optin, l2, scratch), -1, "aligned rows: no copies");
)SRC");
  const auto nv = nvcc();
  if (nv.empty()) GTEST_SKIP() << "no nvcc on this machine";
  EXPECT_EQ(test::build_and_run(nv, dir_.path()), "");
}

}  // namespace
}  // namespace soltune
