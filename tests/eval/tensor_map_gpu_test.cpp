// GPU tests (label gpu): kernels that take tensor maps, through the real evaluator (the worker encodes
// the maps per candidate and input set, over an output's data between its guard zones) pass the
// reference check, and the configurations whose maps break a rule are illegal with the reason. The
// driver itself refuses what the host rules refuse, and a map it refuses on the device alone (a
// misaligned base address) is reported with its CUresult and the map's parameters.
#include <gtest/gtest.h>

#include "../support/tma_variants.hpp"
#include "core/space.hpp"
#include "eval/tensor_map_encode.hpp"
#include "eval/worker_evaluator.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

std::unique_ptr<WorkerEvaluator> evaluator(const Compiler& c, const std::filesystem::path& templates) {
  return std::make_unique<WorkerEvaluator>(c, test::worker_options(templates));
}

TEST(TensorMapGpu, GeluThroughTmaIsCorrectAndABoxPastTheLimitIsIllegal) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = test::copy_problem("gelu", "tma-gelu");
  test::add_tma_gelu(root / "gelu");
  const auto p = load_problem(root, "gelu");
  const Compiler compiler(default_compiler_options());
  auto ev = evaluator(compiler, root);
  for (const DType t : {DType::f32, DType::bf16})
    for (const int64_t n : {int64_t{1000008}, int64_t{1} << 20}) {
      const Task task{&p, &p.variant("tma"), t, Shape{{{"n", n}}}};
      ev->baseline(task);
      const Space s(*task.variant, task.fixed(ev->device()));
      const auto r = ev->evaluate(task, {s.parse_key("BOX=128"), s.parse_key("BOX=256"), s.parse_key("BOX=512")});
      ASSERT_EQ(r.size(), 3u);
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(r[i].status, Status::ok) << task.id() << " " << r[i].key << ": " << r[i].log;
        EXPECT_TRUE(r[i].acc.pass) << r[i].acc.summary();
        EXPECT_EQ(r[i].acc.checked, 6 * n);  // four built-in rounds and gelu's two edge-value ones
        EXPECT_EQ(r[i].acc.out_of_bounds, 0);
      }
      EXPECT_EQ(r[2].status, Status::illegal);
      EXPECT_NE(r[2].log.find("tensor map 'tx' over 'x': box dimension 0 is 512 elements; TMA takes 1 to 256"),
                std::string::npos)
          << r[2].log;
    }
  // An odd n: y's map ends inside a 16-byte unit, which a TMA store writes whole (seen: 10 bytes
  // past the end of 1000003 bf16 elements). Illegal before it runs, in every dtype.
  for (const DType t : {DType::f32, DType::bf16}) {
    const Task task{&p, &p.variant("tma"), t, Shape{{{"n", 1000003}}}};
    ev->baseline(task);
    const Space s(*task.variant, task.fixed(ev->device()));
    const auto r = ev->evaluate(task, {s.parse_key("BOX=256")});
    EXPECT_EQ(r[0].status, Status::illegal) << r[0].log;
    EXPECT_NE(r[0].log.find("tensor map 'ty' over 'y': its innermost dimension is"), std::string::npos) << r[0].log;
  }
  EXPECT_EQ(ev->restarts(), 0);
  std::filesystem::remove_all(root);
}

TEST(TensorMapGpu, MatmulWithATmaTileIsCorrectWhereItsRowsAre16ByteAligned) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = test::copy_problem("matmul", "tma-matmul");
  test::add_tma_matmul(root / "matmul");
  const auto p = load_problem(root, "matmul");
  const Compiler compiler(default_compiler_options());
  auto ev = evaluator(compiler, root);
  for (const DType t : {DType::f32, DType::bf16, DType::f16}) {
    // Tails in every dimension at 200 x 190 x 1000 (1000 elements are 16-byte rows in each dtype).
    for (const auto& shape : {Shape{{{"m", 256}, {"n", 192}, {"k", 1792}, {"trans_b", 0}}}, Shape{{{"m", 200}, {"n", 190}, {"k", 1000}, {"trans_b", 0}}}}) {
      const Task task{&p, &p.variant("tma_a"), t, shape};
      ev->baseline(task);
      for (const auto& r : ev->evaluate(task, Space(*task.variant, task.fixed(ev->device())).all_legal())) {
        EXPECT_EQ(r.status, Status::ok) << task.id() << " " << r.key << ": " << r.log;
        EXPECT_TRUE(r.acc.pass) << r.acc.summary();
      }
    }
    const Task odd{&p, &p.variant("tma_a"), t, Shape{{{"m", 256}, {"n", 192}, {"k", 1793}, {"trans_b", 0}}}};
    ev->baseline(odd);
    for (const auto& r : ev->evaluate(odd, Space(*odd.variant, odd.fixed(ev->device())).all_legal())) {
      EXPECT_EQ(r.status, Status::illegal) << odd.id() << " " << r.key;
      EXPECT_NE(r.log.find("tensor map 'ta' over 'a': the stride of dimension 1 is " +
                           std::to_string(1793 * dtype_bytes(t)) + " bytes, not a multiple of 16"),
                std::string::npos)
          << r.log;
    }
  }
  EXPECT_EQ(ev->restarts(), 0);
  std::filesystem::remove_all(root);
}

TEST(TensorMapGpu, TheDriverRefusesWhatTheHostRulesRefuseAndAMisalignedAddress) {
  SOLTUNE_REQUIRE_GPU();
  const auto root = test::copy_problem("matmul", "tma-driver");
  test::add_tma_matmul(root / "matmul");
  const auto p = load_problem(root, "matmul");
  const TensorMapSpec spec = p.variant("tma_a").tensor_maps.front();
  TensorMapSpec swizzled = spec;
  swizzled.swizzle = TensorMapSpec::Swizzle::b32;
  const size_t bytes = size_t{1800} * 1800 * 2;
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, bytes), cudaSuccess);
  auto legal = [&] { return test::legal_1792_map(spec, {32, 32}, static_cast<int64_t>(bytes)); };
  TensorMapBlob blob;
  EXPECT_EQ(encode_tensor_map(legal(), DType::bf16, buf, blob), "");
  // Rows padded to 1800 elements (3600 bytes) are fine; the probe on the H200 saw the same.
  auto padded = legal();
  padded.strides = {3600};
  EXPECT_EQ(tensor_map_rule_broken(padded), "");
  EXPECT_EQ(encode_tensor_map(padded, DType::bf16, buf, blob), "");

  struct Case {
    const char* what;
    void (*change)(TensorMapParams&);
  };
  const Case cases[] = {
      {"a 3586-byte row stride (1793 bf16)", [](TensorMapParams& m) { m.dims = {1793, 1793}; m.strides = {3586}; }},
      {"a box of 257 rows", [](TensorMapParams& m) { m.box = {32, 257}; }},
      {"an inner box of 24 bytes", [](TensorMapParams& m) { m.box = {12, 32}; }},
      {"a dimension of 2^32 + 1", [](TensorMapParams& m) { m.dims = {(int64_t{1} << 32) + 1}; m.strides = {}; m.box = {32}; }},
      {"a stride of 2^40 bytes", [](TensorMapParams& m) { m.dims = {8, 2}; m.strides = {int64_t{1} << 40}; m.box = {8, 2}; }},
  };
  for (const auto& c : cases) {
    auto m = legal();
    c.change(m);
    m.buffer_bytes = int64_t{1} << 62;  // the driver never sees the buffer's size: only its rules count here
    EXPECT_NE(tensor_map_rule_broken(m), "") << c.what;
    const auto why = encode_tensor_map(m, DType::bf16, buf, blob);
    EXPECT_NE(why.find("cuTensorMapEncodeTiled refused it with CUresult"), std::string::npos) << c.what << ": '" << why << "'";
  }
  auto wide = legal();  // 64 bytes innermost under a 32-byte swizzle
  wide.spec = &swizzled;
  EXPECT_NE(tensor_map_rule_broken(wide), "");
  EXPECT_NE(encode_tensor_map(wide, DType::bf16, buf, blob).find("refused it with CUresult"), std::string::npos);

  // A base address 2 bytes into the buffer: no host rule sees it, the driver refuses it.
  const auto why = encode_tensor_map(legal(), DType::bf16, static_cast<char*>(buf) + 2, blob);
  for (const char* phrase : {"tensor map 'ta': cuTensorMapEncodeTiled refused it with CUresult 1 (CUDA_ERROR_INVALID_VALUE)",
                             "bf16, rank 2, address 0x", "dims [1792, 1792], strides [3584] B, box [32, 32]",
                             "swizzle none", "element strides 1"})
    EXPECT_NE(why.find(phrase), std::string::npos) << "'" << phrase << "' not in: " << why;
  EXPECT_EQ(cudaFree(buf), cudaSuccess);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace soltune
