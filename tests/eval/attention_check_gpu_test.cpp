// GPU tests (label gpu): the checks of templates/attention catch what attention kernels get wrong,
// and its baseline runs on cuBLASLt.
// fa2 as shipped passes at each shape below, its keys split or not; a copy of it with one mistake
// is wrong_answer there:
// the running output not rescaled when the row's maximum moves, the causal mask one key too far,
// the last partial key tile dropped, and the row sum kept in bf16. (A row with no visible key, the
// case of a NaN from -inf - -inf, is refused at config load by the problem's rules.)
#include <gtest/gtest.h>

#include "core/space.hpp"
#include "eval/worker_evaluator.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

struct Mistake {
  std::string name, from, to;
  Shape shape;
};

// fa2's configuration: 64 queries and keys a block, two stages, the keys split SPLIT ways.
Config fa2_config(const VariantSpec& v, int64_t split) {
  return Space(v, Bindings{}).parse_key("BM=64,BN=64,STAGES=2,SPLIT=" + std::to_string(split) + ",PACK=0");
}

Shape shape(int64_t s_q, int64_t s_k, int64_t causal) {
  return Shape{{{"b", 1}, {"h", 4}, {"h_kv", 2}, {"s_q", s_q}, {"s_k", s_k}, {"d", 64}, {"causal", causal}}};
}

TEST(AttentionCheckGpu, EachMistakeOfAnOnlineSoftmaxIsCaught) {
  const auto root = test::copy_problem("attention", "attcheck");
  const auto dir = root / "attention";
  const std::vector<Mistake> mistakes = {
      {"norescale", "        acc[n][2 * r] *= alpha;\n        acc[n][2 * r + 1] *= alpha;\n", "", shape(128, 1024, 0)},
      {"maskoff", "if (j >= s_k || (causal && j > i + shift))", "if (j >= s_k || (causal && j > i + shift + 1))",
       shape(100, 300, 1)},
      {"droptail", "const long long all_tiles = (end + BN - 1) / BN;", "const long long all_tiles = end / BN;",
       shape(64, 300, 0)},
      {"bf16sum", "      l[r] = l[r] * alpha + sum;", "      l[r] = __bfloat162float(__float2bfloat16_rn(l[r] * alpha + sum));",
       shape(64, 16384, 0)}};
  for (const auto& m : mistakes) ASSERT_TRUE(test::add_mistake(dir, "fa2", m.name, m.from, m.to));
  SOLTUNE_REQUIRE_GPU();
  const auto p = load_problem(root, "attention");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  // Split 8 ways: some splits of a causal block see no key of a row, and weigh nothing in the merge.
  for (const auto& s : {shape(4, 4096, 0), shape(100, 3000, 1)}) {
    const Task t{&p, &p.variant("fa2"), DType::bf16, s};
    // T_ref is PyTorch's math path on cuBLASLt (grouped heads batched as consecutive rows), checked
    // against the reference like any baseline.
    const auto b = ev.baseline(t);
    EXPECT_EQ(b.source, "cuBLAS (unfused)") << t.id() << ": " << b.note;
    const auto r = ev.evaluate(t, {fa2_config(p.variant("fa2"), 8)});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, Status::ok) << t.id() << " split 8 ways: " << r[0].log;
  }
  for (const auto& m : mistakes) {
    const auto& v = p.variant("fa2_" + m.name);
    const Config c = fa2_config(v, 1);
    const Task right{&p, &p.variant("fa2"), DType::bf16, m.shape}, wrong{&p, &v, DType::bf16, m.shape};
    ev.baseline(right);
    const auto ok = ev.evaluate(right, {c});
    ASSERT_EQ(ok.size(), 1u);
    EXPECT_EQ(ok[0].status, Status::ok) << right.id() << ": " << ok[0].log;
    ev.baseline(wrong);
    const auto bad = ev.evaluate(wrong, {c});
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_EQ(bad[0].status, Status::wrong_answer) << m.name << " at " << wrong.id() << ": " << bad[0].log;
  }
  EXPECT_EQ(ev.restarts(), 0);
}

// PACK 1 (a block holds the query heads that share a key/value head) passes at decoding and at a
// causal prefill whose blocks span two heads' rows, split or not; a copy that takes a packed row's
// query index for the row itself (the causal mask then lets later heads' rows see too many keys) is
// wrong_answer.
TEST(AttentionCheckGpu, PackedHeadGroupsPassAndTheirQueryIndexIsChecked) {
  const auto root = test::copy_problem("attention", "attpack");
  const auto dir = root / "attention";
  ASSERT_TRUE(test::add_mistake(dir, "fa2", "packrow", "i = PACK ? (row0 + 8 * (e >> 1)) % s_q : row0 + 8 * (e >> 1);",
                          "i = row0 + 8 * (e >> 1);"));
  SOLTUNE_REQUIRE_GPU();
  const auto p = load_problem(root, "attention");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  auto gqa = [](int64_t s_q, int64_t s_k, int64_t causal) {
    return Shape{{{"b", 2}, {"h", 8}, {"h_kv", 2}, {"s_q", s_q}, {"s_k", s_k}, {"d", 128}, {"causal", causal}}};
  };
  struct Case {
    const char* key;
    Shape shape;
  };
  const std::vector<Case> cases = {{"BM=16,BN=64,STAGES=3,SPLIT=8,PACK=1", gqa(1, 3000, 0)},
                                   {"BM=32,BN=64,STAGES=2,SPLIT=1,PACK=1", gqa(3, 1000, 1)},
                                   {"BM=64,BN=64,STAGES=2,SPLIT=1,PACK=1", gqa(40, 700, 1)},
                                   {"BM=64,BN=32,STAGES=2,SPLIT=4,PACK=1", gqa(40, 5000, 1)}};
  for (const auto& c : cases) {
    const Task t{&p, &p.variant("fa2"), DType::bf16, c.shape};
    const Config cfg = Space(p.variant("fa2"), Bindings{}).parse_key(c.key);
    ev.baseline(t);
    const auto r = ev.evaluate(t, {cfg});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, Status::ok) << t.id() << " " << c.key << ": " << r[0].log;
  }
  const Task wrong{&p, &p.variant("fa2_packrow"), DType::bf16, gqa(40, 700, 1)};
  ev.baseline(wrong);
  const auto bad = ev.evaluate(wrong, {Space(p.variant("fa2_packrow"), Bindings{}).parse_key("BM=64,BN=64,STAGES=2,SPLIT=1,PACK=1")});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].status, Status::wrong_answer) << wrong.id() << ": " << bad[0].log;
  EXPECT_EQ(ev.restarts(), 0);
}

// decode (plain loads, a block per key/value head with all its query rows) passes with grouped and
// single heads, every head dimension, both dtypes, keys split or not, and the causal mask over
// several queries; a copy that takes a row's place in the block for its query index (later heads'
// rows then see too many keys) is wrong_answer.
TEST(AttentionCheckGpu, DecodePassesAndItsCausalQueryIndexIsChecked) {
  const auto root = test::copy_problem("attention", "attdecode");
  const auto dir = root / "attention";
  ASSERT_TRUE(test::add_mistake(dir, "decode", "row", "(causal && j > r % s_q + shift)", "(causal && j > r + shift)"));
  SOLTUNE_REQUIRE_GPU();
  const auto p = load_problem(root, "attention");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  auto at_shape = [](int64_t h, int64_t h_kv, int64_t s_q, int64_t s_k, int64_t d, int64_t causal) {
    return Shape{{{"b", 2}, {"h", h}, {"h_kv", h_kv}, {"s_q", s_q}, {"s_k", s_k}, {"d", d}, {"causal", causal}}};
  };
  struct Case {
    DType dt;
    const char* key;
    Shape shape;
  };
  const std::vector<Case> cases = {{DType::bf16, "ROWS=4,WARPS=4,SPLIT=8,U=2", at_shape(8, 2, 1, 3000, 128, 0)},
                                   {DType::f16, "ROWS=8,WARPS=2,SPLIT=1,U=4", at_shape(8, 2, 2, 777, 64, 1)},
                                   {DType::bf16, "ROWS=1,WARPS=8,SPLIT=4,U=1", at_shape(4, 4, 1, 5000, 256, 0)},
                                   {DType::f16, "ROWS=8,WARPS=4,SPLIT=2,U=2", at_shape(8, 4, 3, 1000, 128, 1)}};
  for (const auto& c : cases) {
    const Task t{&p, &p.variant("decode"), c.dt, c.shape};
    const Config cfg = Space(p.variant("decode"), Bindings{}).parse_key(c.key);
    ev.baseline(t);
    const auto r = ev.evaluate(t, {cfg});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, Status::ok) << t.id() << " " << c.key << ": " << r[0].log;
  }
  const Task wrong{&p, &p.variant("decode_row"), DType::bf16, at_shape(8, 2, 2, 777, 64, 1)};
  ev.baseline(wrong);
  const auto bad = ev.evaluate(wrong, {Space(p.variant("decode_row"), Bindings{}).parse_key("ROWS=8,WARPS=2,SPLIT=1,U=4")});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].status, Status::wrong_answer) << wrong.id() << ": " << bad[0].log;
  EXPECT_EQ(ev.restarts(), 0);
}

// fa3 (wgmma, warp-specialised) passes at tails of queries and keys, with the causal mask, grouped
// heads and every head dimension, in both dtypes; a copy that lets keys past s_k count (TMA reads the
// next head's rows there) is wrong_answer.
TEST(AttentionCheckGpu, Fa3PassesAtTailsAndAKeyPastTheEndIsCaught) {
  const auto root = test::copy_problem("attention", "attfa3");
  const auto dir = root / "attention";
  ASSERT_TRUE(test::add_mistake(dir, "fa3", "tail", "if (j >= s_k || (causal && j > limit0 + 8 * (e >> 1)))",
                          "if (causal && j > limit0 + 8 * (e >> 1))"));
  SOLTUNE_REQUIRE_GPU();
  const auto p = load_problem(root, "attention");
  const Compiler compiler(default_compiler_options());
  WorkerEvaluator ev(compiler, test::worker_options(root));
  auto at_shape = [](int64_t h_kv, int64_t s_q, int64_t s_k, int64_t d, int64_t causal) {
    return Shape{{{"b", 2}, {"h", 4}, {"h_kv", h_kv}, {"s_q", s_q}, {"s_k", s_k}, {"d", d}, {"causal", causal}}};
  };
  struct Case {
    const char* key;
    DType dt;
    Shape shape;
  };
  const std::vector<Case> cases = {
      {"BM=128,BN=128,STAGES=2,OVERLAP=0,PINGPONG=0", DType::bf16, at_shape(4, 300, 333, 128, 0)},
      {"BM=128,BN=128,STAGES=2,OVERLAP=1,PINGPONG=1", DType::bf16, at_shape(4, 300, 333, 128, 0)},
      {"BM=128,BN=64,STAGES=3,OVERLAP=1,PINGPONG=0", DType::bf16, at_shape(2, 300, 333, 128, 1)},
      {"BM=128,BN=128,STAGES=2,OVERLAP=1,PINGPONG=1", DType::bf16, at_shape(2, 700, 1000, 128, 1)},
      {"BM=64,BN=64,STAGES=4,OVERLAP=1,PINGPONG=0", DType::f16, at_shape(1, 77, 1000, 64, 1)},
      {"BM=128,BN=128,STAGES=3,OVERLAP=0,PINGPONG=1", DType::f16, at_shape(4, 256, 256, 64, 0)},
      {"BM=128,BN=64,STAGES=2,OVERLAP=1,PINGPONG=1", DType::bf16, at_shape(2, 129, 200, 256, 1)},
      {"BM=192,BN=64,STAGES=3,OVERLAP=1,PINGPONG=1", DType::bf16, at_shape(4, 500, 700, 64, 1)},
      {"BM=192,BN=64,STAGES=2,OVERLAP=0,PINGPONG=1", DType::f16, at_shape(2, 300, 333, 128, 0)}};
  for (const auto& c : cases) {
    const Task t{&p, &p.variant("fa3"), c.dt, c.shape};
    const Config cfg = Space(p.variant("fa3"), Bindings{}).parse_key(c.key);
    ev.baseline(t);
    const auto r = ev.evaluate(t, {cfg});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, Status::ok) << t.id() << " " << c.key << ": " << r[0].log;
    // Its timed repetitions checked on picked query rows (reference_picked), not the whole reference.
    EXPECT_NE(r[0].log.find("sampled rows"), std::string::npos) << t.id() << ": " << r[0].log;
  }
  const Task wrong{&p, &p.variant("fa3_tail"), DType::bf16, at_shape(4, 300, 333, 128, 0)};
  ev.baseline(wrong);
  const auto bad = ev.evaluate(wrong, {Space(p.variant("fa3_tail"), Bindings{}).parse_key("BM=128,BN=128,STAGES=2,OVERLAP=1,PINGPONG=1")});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].status, Status::wrong_answer) << wrong.id() << ": " << bad[0].log;
  EXPECT_EQ(ev.restarts(), 0);
}

// Timed repetitions are checked on query rows the reference picks (reference_picked): a naive
// kernel (a block a query) passes, and the same kernel leaving a quarter of the queries as the
// previous repetition left them once timing starts is caught.
TEST(AttentionCheckGpu, WorkSkippedWhileTimedIsCaughtOnPickedRows) {
  const auto root = test::copy_problem("attention", "attpicked");
  const auto dir = root / "attention";
  const auto timed_from = test::first_timed_launch(load_problem(root, "attention"));
  test::write_file(dir / "naive.cu",
                   "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"
                   "__device__ inline float f(__nv_bfloat16 x) { return __bfloat162float(x); }\n"
                   "__device__ inline float f(__half x) { return __half2float(x); }\n" +
                   test::launch_counter_source() +
                   "template <typename T, int D, int SKIP>\n"
                   "__global__ void att_naive(const T* q, const T* k, const T* v, T* o, float* lse, long long b, long long h,\n"
                   "                          long long h_kv, long long s_q, long long s_k, long long causal) {\n"
                   "  const unsigned call = launch_number();\n"
                   "  const long long bh = blockIdx.y, i = blockIdx.x, head = bh % h, kv = (bh / h) * h_kv + head / (h / h_kv);\n"
                   "  if (SKIP && call >= " + std::to_string(timed_from) + " && i % 4 == 1) return;\n"
                   "  const T* qr = q + (bh * s_q + i) * D;\n"
                   "  const T* kb = k + kv * s_k * D;\n"
                   "  const T* vb = v + kv * s_k * D;\n"
                   "  const long long end = causal ? min(s_k, i + 1 + s_k - s_q) : s_k;\n"
                   "  const float scale = rsqrtf(static_cast<float>(D));\n"
                   "  float m = -3.0e38f;\n"
                   "  for (long long j = 0; j < end; ++j) {\n"
                   "    float s = 0;\n"
                   "    for (int x = 0; x < D; ++x) s = fmaf(f(qr[x]), f(kb[j * D + x]), s);\n"
                   "    m = fmaxf(m, s * scale);\n"
                   "  }\n"
                   "  float l = 0, acc = 0;\n"
                   "  for (long long j = 0; j < end; ++j) {\n"
                   "    float s = 0;\n"
                   "    for (int x = 0; x < D; ++x) s = fmaf(f(qr[x]), f(kb[j * D + x]), s);\n"
                   "    const float p = expf(s * scale - m);\n"
                   "    l += p;\n"
                   "    acc = fmaf(p, f(vb[j * D + threadIdx.x]), acc);\n"
                   "  }\n"
                   "  o[(bh * s_q + i) * D + threadIdx.x] = static_cast<T>(acc / l);\n"
                   "  if (threadIdx.x == 0) lse[bh * s_q + i] = m + logf(l);\n"
                   "  (void)b;\n"
                   "}\n");
  test::write_file(dir / "naive.yaml",
                   "kernel: att_naive\ntemplate_args: [T, d, SKIP]\nknobs: {SKIP: [0, 1]}\n"
                   "args: [q, k, v, o, lse, b, h, h_kv, s_q, s_k, causal]\n"
                   "launch: {grid: [s_q, b * h], block: d}\n");
  SOLTUNE_REQUIRE_GPU();
  const auto p = load_problem(root, "attention");
  const Compiler compiler(default_compiler_options());
  const Shape shape{{{"b", 2}, {"h", 4}, {"h_kv", 2}, {"s_q", 256}, {"s_k", 300}, {"d", 64}, {"causal", 1}}};
  for (const int skip : {0, 1}) {
    WorkerEvaluator ev(compiler, test::worker_options(root));  // a worker per kernel: its call counter starts at zero
    const Task t{&p, &p.variant("naive"), DType::bf16, shape};
    ev.baseline(t);
    const auto r = ev.evaluate(t, {Space(p.variant("naive"), Bindings{}).parse_key("SKIP=" + std::to_string(skip))});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NE(r[0].log.find("sampled rows"), std::string::npos) << r[0].log;
    if (skip) {
      EXPECT_EQ(r[0].status, Status::wrong_answer) << r[0].log;
      EXPECT_NE(r[0].log.find("inside the timed loop"), std::string::npos) << r[0].log;
    } else {
      EXPECT_EQ(r[0].status, Status::ok) << r[0].log;
    }
  }
}

}  // namespace
}  // namespace soltune
