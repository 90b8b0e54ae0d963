// Tensor maps (`tensor_maps:` in a variant): what a variant declares is parsed with its defaults,
// bad input is refused with the file, line and column, and every rule of cuTensorMapEncodeTiled that
// soltune checks on the host gives a reason that names the map and the rule.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/files.hpp"
#include "../support/tma_variants.hpp"
#include "core/space.hpp"
#include "core/task.hpp"
#include "core/tensor_map.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

class TensorMaps : public test::TmaProblemCopies {
 protected:
  fs::path variant_file() const { return dir_.path() / "matmul" / "tm.yaml"; }

  // A matmul variant (tma_a's kernel) whose tensor_maps section is `maps` and args `args`: its
  // `maps` start on line 4.
  void write_variant(const std::string& maps, const std::string& args = "[ta, b, c, m, n, k]") const {
    ASSERT_TRUE(test::write_file(variant_file(), "source: tma_a.cu\nkernel: gemm_tma_a\ntemplate_args: [T, BM, BK]\n" +
                                                     maps + "args: " + args +
                                                     "\nknobs: {BM: [16, 32], BK: [32]}\n"
                                                     "launch: {grid: [\"cdiv(n, 16)\", \"cdiv(m, BM)\"], block: [16, BM]}\n"));
  }

  ProblemSpec matmul() const { return load_problem(dir_.path(), "matmul"); }

  // The error loading the matmul copy gives: it must name tm.yaml at line:col and hold `phrase`.
  void expect_error(int line, int col, const std::string& phrase) const {
    std::string msg;
    try {
      matmul();
    } catch (const Error& e) {
      msg = e.what();
    }
    ASSERT_FALSE(msg.empty()) << "no error; expected " << phrase;
    const std::string where = "matmul/tm.yaml:" + std::to_string(line) + ":" + std::to_string(col) + ": ";
    EXPECT_NE(msg.find(where), std::string::npos) << "expected '" << where << "' in: " << msg;
    EXPECT_NE(msg.find(phrase), std::string::npos) << "expected '" << phrase << "' in: " << msg;
  }
};

// Bindings of a matmul task with the knobs of tma_a and a device of compute capability cc.
Bindings matmul_bindings(int64_t m, int64_t n, int64_t k, DType t, int64_t bm, int cc = 90) {
  return Bindings{{"m", static_cast<double>(m)}, {"n", static_cast<double>(n)}, {"k", static_cast<double>(k)}, {"trans_b", 0},
                  {"dtype_bytes", dtype_bytes(t)}, {"BM", static_cast<double>(bm)}, {"BK", 32},
                  {"cc", cc}, {"sms", 132}, {"smem_optin", 232448}, {"l2_bytes", 62914560}};
}

TEST_F(TensorMaps, ParsesEveryOptionAndItsDefaults) {
  write_variant("tensor_maps:\n"
                "  ta: {buffer: a, dims: [k, m], box: [BK, BM]}\n"
                "  tb: {buffer: b, dims: [n, k], box: [\"64 / dtype_bytes\", 8], strides: [n], elem: bf16, swizzle: 128B,\n"
                "       l2_promotion: none, oob: nan, interleave: none}\n",
                "[ta, tb, c, m, n, k]");
  const auto p = matmul();
  const auto& v = p.variant("tm");
  ASSERT_EQ(v.tensor_maps.size(), 2u);
  const auto& ta = v.tensor_maps[0];
  EXPECT_EQ(ta.name, "ta");
  EXPECT_EQ(ta.buffer, "a");
  EXPECT_EQ(ta.elem, "T");  // the buffer's dtype
  EXPECT_EQ(ta.dims.size(), 2u);
  EXPECT_TRUE(ta.strides.empty());
  EXPECT_EQ(ta.swizzle, TensorMapSpec::Swizzle::none);
  EXPECT_EQ(ta.l2, TensorMapSpec::L2::b256);
  EXPECT_EQ(ta.oob, TensorMapSpec::Oob::zero);
  EXPECT_EQ(ta.elem_dtype(DType::f16), DType::f16);
  const auto& tb = *v.tensor_map("tb");
  EXPECT_EQ(tb.elem, "bf16");
  EXPECT_EQ(tb.elem_dtype(DType::f32), DType::bf16);
  EXPECT_EQ(tb.strides.size(), 1u);
  EXPECT_EQ(tb.swizzle, TensorMapSpec::Swizzle::b128);
  EXPECT_EQ(tb.l2, TensorMapSpec::L2::none);
  EXPECT_EQ(tb.oob, TensorMapSpec::Oob::nan);
  EXPECT_EQ(v.tensor_map("c"), nullptr);  // a problem argument, passed as a pointer
  // The reference and the baseline keep the problem's arguments: plain pointers.
  EXPECT_EQ(p.reference.args, (std::vector<std::string>{"a", "b", "c", "c.magnitude", "m", "n", "k", "trans_b"}));

  const auto params = tensor_map_params(tb, matmul_bindings(64, 96, 128, DType::f32, 16));
  EXPECT_EQ(params.elem_bytes, 2);  // elem bf16 over an f32 buffer
  EXPECT_EQ(params.dims, (std::vector<int64_t>{96, 128}));
  EXPECT_EQ(params.box, (std::vector<int64_t>{16, 8}));     // 64 / dtype_bytes of the task's f32
  EXPECT_EQ(params.strides, (std::vector<int64_t>{192}));   // n elements of 2 bytes
  EXPECT_EQ(params.buffer_bytes, 128 * 96 * 4);             // the f32 buffer's
  // The shipped test variants load too.
  EXPECT_EQ(p.variant("tma_a").tensor_maps.size(), 1u);
  EXPECT_EQ(load_problem(dir_.path(), "gelu").variant("tma").tensor_maps.size(), 2u);
}

TEST_F(TensorMaps, BadInputNamesTheFileLineAndColumn) {
  struct Case {
    std::string maps, args;
    int line, col;
    std::string phrase;
  };
  const std::string ta = "tensor_maps:\n  ta: ";
  // The map of a over [k, m] in boxes of [BK, BM], with `more` keys.
  const auto a_map = [&](const std::string& more) { return ta + "{buffer: a, dims: [k, m], box: [BK, BM]" + more + "}\n"; };
  const std::vector<Case> cases = {
      {a_map(", boxes: 2"), "", 5, 48, "unknown key 'boxes'"},
      {ta + "{buffer: q, dims: [k, m], box: [BK, BM]}\n", "", 5, 16, "'q' is not a buffer of problem matmul or a scratch buffer (the buffers: a, b, c)"},
      {ta + "{buffer: m, dims: [k, m], box: [BK, BM]}\n", "", 5, 16, "'m' is not a buffer"},
      {ta + "{buffer: a, dims: [], box: [BK, BM]}\n", "", 5, 25, "has 0 dims; TMA takes 1 to 5"},
      {ta + "{buffer: a, dims: [k, m, 1, 1, 1, 1], box: [BK, BM]}\n", "", 5, 25, "has 6 dims; TMA takes 1 to 5"},
      {ta + "{buffer: a, dims: [k, m], box: [BK]}\n", "", 5, 38, "box has 1 entries for 2 dims"},
      {a_map(", strides: [k, 1]"), "", 5, 57, "strides has 2 entries; a map of 2 dims takes 1"},
      {ta + "{buffer: a, dims: [k, mm], box: [BK, BM]}\n", "", 5, 29, "uses unknown name 'mm'"},
      {ta + "{buffer: a, dims: [k, m], box: [BK, sms]}\n", "", 5, 43, "uses unknown name 'sms'"},
      {a_map(", elem: f8"), "", 5, 54, "unknown dtype 'f8'"},
      {a_map(", swizzle: 16B"), "", 5, 57, "expected swizzle none, 32B, 64B or 128B, got '16B'"},
      {a_map(", l2_promotion: 512B"), "", 5, 62, "expected l2_promotion none, 64B, 128B or 256B"},
      {a_map(", oob: inf"), "", 5, 53, "expected oob zero or nan, got 'inf'"},
      {a_map(", elem: i32, oob: nan"), "", 5, 64, "oob nan needs a floating-point element type, and its elements are i32"},
      {a_map(", interleave: 16B"), "", 5, 60, "only interleave none is supported"},
      {"tensor_maps:\n  a: {buffer: a, dims: [k, m], box: [BK, BM]}\n", "[a, b, c, m, n, k]", 5, 6,
       "tensor map 'a' has the name of an argument of problem matmul"},
      {"tensor_maps:\n  t-a: {buffer: a, dims: [k, m], box: [BK, BM]}\n", "", 5, 8, "a map's name must be an identifier"},
      {a_map(""), "[a, b, c, m, n, k]", 5, 7,
       "tensor map 'ta' is not among the variant's args"},
      {a_map(""), "[ta, tb, c, m, n, k]", 6, 7,
       "kernel argument 'tb' is not declared in problem.yaml args"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.maps + "args: " + c.args);
    write_variant(c.maps, c.args.empty() ? "[ta, b, c, m, n, k]" : c.args);
    expect_error(c.line, c.col, c.phrase);
  }
}

// A map may lie over a scratch buffer: wgmma_pad's maps read the operands' copies with rows padded
// to 8 elements, which a launch before the GEMM writes. Its bounds are the scratch buffer's.
TEST_F(TensorMaps, AMapMayLieOverAScratchBuffer) {
  const auto p = matmul();
  const auto& v = p.variant("wgmma_pad");
  const auto& ta = *v.tensor_map("ta");
  EXPECT_EQ(ta.buffer, "a_pad");
  EXPECT_FALSE(ta.written);  // the main kernel reads it
  auto b = matmul_bindings(1793, 1793, 1793, DType::bf16, 128);
  b.emplace("BN", 256);
  b.emplace("CM", 1);
  const auto params = tensor_map_params(ta, b);
  EXPECT_EQ(params.dims, (std::vector<int64_t>{1800, 1793}));
  EXPECT_EQ(params.strides, (std::vector<int64_t>{3600}));  // 16-byte rows, where A's own are 3586 bytes
  EXPECT_EQ(params.buffer_bytes, 1793 * 1800 * 2);
  EXPECT_EQ(tensor_map_rule_broken(params), "");

  // A scratch buffer's name is taken, for a map as for an argument; an unknown buffer's error
  // lists the scratch buffers beside the problem's.
  const auto yaml = dir_.path() / "matmul" / "wgmma_pad.yaml";
  const auto text = test::read_file(yaml);
  ASSERT_TRUE(test::write_file(yaml, test::replace_once(text, "  tc: {buffer: a_pad", "  a_pad: {buffer: a_pad")));
  EXPECT_THROW(
      try { matmul(); } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("tensor map 'a_pad' has the name of a scratch buffer"), std::string::npos) << e.what();
        throw;
      },
      Error);
  ASSERT_TRUE(test::write_file(yaml, test::replace_once(text, "{buffer: a_pad, dims: [\"cdiv(k, 8) * 8\", m], box: [64, BM]",
                                                           "{buffer: q, dims: [\"cdiv(k, 8) * 8\", m], box: [64, BM]")));
  EXPECT_THROW(
      try { matmul(); } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("(the buffers: a, b, c, a_pad (scratch), b_pad (scratch))"), std::string::npos)
            << e.what();
        throw;
      },
      Error);
}

// Each host-side rule on its own, from a legal map changed in one parameter.
TEST_F(TensorMaps, EveryRuleHasItsReason) {
  const auto p = matmul();
  const auto& spec = p.variant("tma_a").tensor_maps.front();
  auto legal = [&] { return test::legal_1792_map(spec, {64, 128}, 1792 * 1792 * 2); };
  EXPECT_EQ(tensor_map_rule_broken(legal()), "");
  struct Case {
    void (*change)(TensorMapParams&);
    const char* phrase;  // "" where the change keeps the map legal
  };
  const Case cases[] = {
      {[](TensorMapParams& m) { m.dims[1] = 0; }, "dimension 1 is 0 elements; TMA takes 1 to 2^32"},
      {[](TensorMapParams& m) { m.dims = {int64_t{1} << 32}; m.strides = {}; m.buffer_bytes = int64_t{1} << 33; }, ""},
      {[](TensorMapParams& m) { m.dims = {(int64_t{1} << 32) + 1}; m.strides = {}; }, "dimension 0 is 4294967297 elements"},
      {[](TensorMapParams& m) { m.strides = {3586}; }, "the stride of dimension 1 is 3586 bytes, not a multiple of 16"},
      {[](TensorMapParams& m) { m.strides = {0}; }, "the stride of dimension 1 is 0 bytes; strides must be positive"},
      {[](TensorMapParams& m) { m.dims = {8, 2}; m.strides = {int64_t{1} << 40}; m.buffer_bytes = int64_t{1} << 42; },
       "the stride of dimension 1 is 1099511627776 bytes; TMA takes strides below 2^40 bytes"},
      {[](TensorMapParams& m) { m.dims = {8, 2}; m.strides = {(int64_t{1} << 40) - 16}; m.buffer_bytes = int64_t{1} << 42; }, ""},
      {[](TensorMapParams& m) { m.box = {64, 0}; }, "box dimension 1 is 0 elements; TMA takes 1 to 256"},
      {[](TensorMapParams& m) { m.box = {64, 257}; }, "box dimension 1 is 257 elements; TMA takes 1 to 256"},
      {[](TensorMapParams& m) { m.box = {256, 256}; }, ""},
      {[](TensorMapParams& m) { m.box = {12, 128}; }, "the inner box dimension is 24 bytes (12 elements of 2), not a multiple of 16"},
      {[](TensorMapParams& m) { m.elem_bytes = 4; m.box = {2, 2}; m.dims = {4, 4}; m.strides = {16}; },
       "the inner box dimension is 8 bytes"},
      // Past the buffer: the last row would end 2 bytes beyond it.
      {[](TensorMapParams& m) { m.buffer_bytes -= 2; }, "it reaches 6422528 bytes into buffer 'a', which holds 6422526"},
      // Rows padded to 1800 elements fit only a buffer that has the padding.
      {[](TensorMapParams& m) { m.strides = {3600}; }, "it reaches 6451184 bytes into buffer 'a'"},
      {[](TensorMapParams& m) { m.strides = {3600}; m.buffer_bytes = 1792 * 1800 * 2; }, ""},
  };
  for (const auto& c : cases) {
    auto m = legal();
    c.change(m);
    SCOPED_TRACE(m.str());
    const auto why = tensor_map_rule_broken(m);
    if (std::string(c.phrase).empty())
      EXPECT_EQ(why, "");
    else
      EXPECT_NE(why.find(c.phrase), std::string::npos) << why;
  }
  // Swizzles: the inner box in bytes within the span.
  for (const auto& [swizzle, span] : {std::pair{"32B", 32}, std::pair{"64B", 64}, std::pair{"128B", 128}}) {
    write_variant(std::string("tensor_maps:\n  ta: {buffer: a, dims: [k, m], box: [BK, BM], swizzle: ") + swizzle + "}\n");
    const auto q = matmul();
    auto m = legal();
    m.spec = &q.variant("tm").tensor_maps.front();
    m.box = {span / 2, 8};
    EXPECT_EQ(tensor_map_rule_broken(m), "") << swizzle;
    m.box = {span / 2 + 8, 8};
    EXPECT_NE(tensor_map_rule_broken(m).find("the inner box dimension is " + std::to_string(span + 16) +
                                             " bytes (" + std::to_string(span / 2 + 8) + " elements of 2), wider than the " +
                                             std::to_string(span) + "-byte span of swizzle " + swizzle),
              std::string::npos)
        << tensor_map_rule_broken(m);
  }
}

TEST_F(TensorMaps, DefaultStridesAreRowMajorOverTheDims) {
  write_variant("tensor_maps:\n  ta: {buffer: a, dims: [8, 4, \"m * k / 32\"], box: [8, 4, 1]}\n");
  const auto p = matmul();
  const auto params = tensor_map_params(p.variant("tm").tensor_maps.front(), matmul_bindings(64, 64, 64, DType::f32, 16));
  EXPECT_EQ(params.strides, (std::vector<int64_t>{32, 128}));  // 8 elements of 4 bytes, then 4 such rows
  EXPECT_EQ(tensor_map_rule_broken(params), "");
}

// A configuration's reason names the map and the rule; it depends on the sizes, the dtype and the
// knobs, and on the device (tensor maps exist from compute capability 9.0).
TEST_F(TensorMaps, ConfigurationsAreIllegalWithTheMapAndTheRule) {
  const auto p = matmul();
  const auto& v = p.variant("tma_a");
  EXPECT_EQ(why_tensor_maps_illegal(v, matmul_bindings(256, 192, 1792, DType::bf16, 32)), "");
  const auto odd = why_tensor_maps_illegal(v, matmul_bindings(256, 192, 1793, DType::bf16, 32));
  EXPECT_EQ(odd.rfind("tensor map 'ta' over 'a': the stride of dimension 1 is 3586 bytes, not a multiple of 16", 0), 0u) << odd;
  EXPECT_NE(odd.find("dims [1793, 256], strides [3586] B, box [32, 32]"), std::string::npos) << odd;
  // 1796 elements are 16-byte rows in f32 (7184 bytes), not in bf16 (3592).
  EXPECT_EQ(why_tensor_maps_illegal(v, matmul_bindings(256, 192, 1796, DType::f32, 32)), "");
  EXPECT_NE(why_tensor_maps_illegal(v, matmul_bindings(256, 192, 1796, DType::bf16, 32)).find("3592 bytes"), std::string::npos);
  EXPECT_EQ(why_tensor_maps_illegal(v, matmul_bindings(256, 192, 1792, DType::bf16, 32, 80)),
            "tensor maps need compute capability 9.0 or newer, and this device's is 8.0");

  const auto g = load_problem(dir_.path(), "gelu");
  const Bindings box512{{"n", 1000003}, {"dtype_bytes", 4}, {"BOX", 512}, {"cc", 90}};
  const auto box = why_tensor_maps_illegal(g.variant("tma"), box512);
  EXPECT_EQ(box.rfind("tensor map 'tx' over 'x': box dimension 0 is 512 elements; TMA takes 1 to 256", 0), 0u) << box;

  // A box that is not a whole number is the candidate's reason too, naming the expression.
  write_variant("tensor_maps:\n  ta: {buffer: a, dims: [k, m], box: [BK, BM / 3]}\n");
  const auto q = matmul();
  const auto why = why_tensor_maps_illegal(q.variant("tm"), matmul_bindings(256, 192, 1792, DType::f32, 32));
  EXPECT_NE(why.find("tensor map 'ta' over 'a': "), std::string::npos) << why;
  EXPECT_NE(why.find("tm.yaml:5:"), std::string::npos) << why;
  EXPECT_NE(why.find("expected an integer"), std::string::npos) << why;
}

}  // namespace
}  // namespace soltune
