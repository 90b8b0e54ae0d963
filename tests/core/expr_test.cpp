// Expressions: soltune's functions and operators, name checks, error messages, integer exactness.
#include "core/expr.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace soltune {
namespace {

const SourceLoc kLoc{"cfg.yaml", 7, 12};

double ev(const std::string& text, const Bindings& b = {}) { return Expr(text, kLoc).eval(b); }

// The message of the Error that `f` throws, or a test failure if it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected soltune::Error";
  return "";
}

TEST(Expr, CeilingFloorAndModulo) {
  EXPECT_EQ(ev("cdiv(7, 2)"), 4);
  EXPECT_EQ(ev("cdiv(8, 2)"), 4);
  EXPECT_EQ(ev("cdiv(1000003, 4096)"), 245);
  EXPECT_EQ(ev("cdiv(-7, 2)"), -3);
  EXPECT_EQ(ev("fdiv(7, 2)"), 3);
  EXPECT_EQ(ev("fdiv(-7, 2)"), -4);
  EXPECT_EQ(ev("mod(7, 3)"), 1);
  EXPECT_EQ(ev("mod(-7, 3)"), 2);  // floor modulo: the sign of the divisor
  EXPECT_EQ(ev("mod(12, 4)"), 0);
  EXPECT_EQ(ev("pow(2, 10)"), 1024);
  EXPECT_EQ(ev("is_pow2(64)"), 1);
  EXPECT_EQ(ev("is_pow2(96)"), 0);
  EXPECT_EQ(ev("is_pow2(0)"), 0);
}

TEST(Expr, MinMaxConditionalAndLogic) {
  const Bindings b{{"a", 3}, {"b", 8}, {"GRID_STRIDE", 1}, {"sms", 132}};
  EXPECT_EQ(ev("min(a, b)", b), 3);
  EXPECT_EQ(ev("max(a, b)", b), 8);
  EXPECT_EQ(ev("a > b ? a : b", b), 8);
  EXPECT_EQ(ev("a < b ? a : b", b), 3);
  EXPECT_EQ(ev("GRID_STRIDE ? min(sms * 4, cdiv(1000003, 1024)) : cdiv(1000003, 1024)", b), 528);
  EXPECT_EQ(ev("a == 3 && b == 8", b), 1);
  EXPECT_EQ(ev("a == 3 && b == 9", b), 0);
  EXPECT_EQ(ev("a == 4 || b == 8", b), 1);
  EXPECT_EQ(ev("a == 4 || b == 9", b), 0);
  EXPECT_TRUE(Expr("a * 4 <= 16", kLoc).eval_bool(b));
  EXPECT_FALSE(Expr("b * 4 <= 16", kLoc).eval_bool(b));
  EXPECT_EQ(ev("!(a == 3) || !GRID_STRIDE", b), 0);
  EXPECT_EQ(ev("!(a == 4) && a != 4", b), 1);
}

TEST(Expr, VariablesAreCollected) {
  const Expr e("cdiv(n, BLOCK * VEC) + n", kLoc);
  std::set<std::string> vars(e.variables().begin(), e.variables().end());
  EXPECT_EQ(vars, (std::set<std::string>{"BLOCK", "VEC", "n"}));
  EXPECT_EQ(e.text(), "cdiv(n, BLOCK * VEC) + n");
  EXPECT_EQ(e.loc().line, 7);
}

TEST(Expr, UnknownNameIsRejectedByName) {
  const Expr e("VEC * dtype_bytse <= 16", kLoc);
  EXPECT_NO_THROW(e.check_names({"VEC", "dtype_bytse"}, "constraint"));
  const auto msg = error_of([&] { e.check_names({"VEC", "dtype_bytes"}, "constraint"); });
  EXPECT_NE(msg.find("'dtype_bytse'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown name"), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind("cfg.yaml:7:12: ", 0), 0u) << msg;
  // Evaluating without a value for a name says which one.
  const auto msg2 = error_of([&] { e.eval({{"VEC", 4}}); });
  EXPECT_NE(msg2.find("dtype_bytse"), std::string::npos) << msg2;
}

TEST(Expr, SyntaxErrorNamesFileLineColumnAndColumnInExpression) {
  const auto msg = error_of([] { Expr("BLOCK * * VEC", kLoc); });
  EXPECT_EQ(msg.rfind("cfg.yaml:7:12: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("BLOCK * * VEC"), std::string::npos) << msg;
  // The second '*' is at column 9 of the expression.
  EXPECT_NE(msg.find("at column 9"), std::string::npos) << msg;

  const auto msg2 = error_of([] { Expr("min(a, b", kLoc); });
  EXPECT_EQ(msg2.rfind("cfg.yaml:7:12: ", 0), 0u) << msg2;
  EXPECT_NE(msg2.find("at column"), std::string::npos) << msg2;

  EXPECT_THROW(Expr("", kLoc), Error);
  EXPECT_THROW(Expr("   ", kLoc), Error);
}

TEST(Expr, CaretIsRejected) {
  const auto msg = error_of([] { Expr("2 ^ 3", kLoc); });
  EXPECT_EQ(msg.rfind("cfg.yaml:7:12: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("'^'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("column 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pow"), std::string::npos) << msg;
}

TEST(Expr, EvalIntRejectsFractions) {
  const Expr half("n / 2", kLoc);
  EXPECT_EQ(half.eval_int({{"n", 4}}), 2);
  const auto msg = error_of([&] { half.eval_int({{"n", 5}}); });
  EXPECT_NE(msg.find("2.5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("integer"), std::string::npos) << msg;
  EXPECT_THROW(Expr("2.5", kLoc).eval_int({}), Error);
  EXPECT_THROW(Expr("1 / 0", kLoc).eval({}), Error);  // not finite
}

TEST(Expr, ExactForLargeIntegers) {
  const int64_t p40 = int64_t{1} << 40;
  EXPECT_EQ(Expr("pow(2, 40)", kLoc).eval_int({}), p40);
  EXPECT_EQ(Expr("n * n", kLoc).eval_int({{"n", 1 << 20}}), p40);
  EXPECT_EQ(Expr("n * n * 3 + 1", kLoc).eval_int({{"n", 1 << 20}}), 3 * p40 + 1);
  EXPECT_EQ(Expr("1099511627776 + 1", kLoc).eval_int({}), p40 + 1);
  EXPECT_EQ(Expr("cdiv(n * n + 1, 2)", kLoc).eval_int({{"n", 1 << 20}}), p40 / 2 + 1);
  // Past 2^53 doubles are no longer exact: refused rather than silently rounded.
  EXPECT_THROW(Expr("pow(2, 60)", kLoc).eval_int({}), Error);
}

TEST(Expr, Constant) {
  const auto c = Expr::constant(268435456);
  EXPECT_EQ(c.eval_int({}), 268435456);
  EXPECT_TRUE(c.variables().empty());
}

// Parsed once, evaluated many times: each evaluation sees its own bindings, including from several
// threads at once and through copies (which share the ready parsers), and a missing binding is
// still an error that leaves the expression usable.
TEST(Expr, ReusedAcrossCallsCopiesAndThreads) {
  const Expr e("cdiv(n, BLOCK * VEC) * BLOCK + mod(n, 7)", kLoc);
  const Expr copy = e;
  EXPECT_EQ(e.eval({{"n", 1000}, {"BLOCK", 128}, {"VEC", 4}}), 2 * 128 + 6);
  EXPECT_EQ(copy.eval({{"n", 50257}, {"BLOCK", 32}, {"VEC", 1}}), 1571 * 32 + 50257 % 7);
  EXPECT_NE(error_of([&] { e.eval({{"n", 1}, {"BLOCK", 2}}); }).find("no value for 'VEC'"), std::string::npos);
  EXPECT_EQ(e.eval({{"n", 8}, {"BLOCK", 2}, {"VEC", 2}}), 2 * 2 + 1);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      const Expr& mine = t % 2 ? e : copy;
      for (int i = 1; i < 2000; ++i) {
        const double n = i * 13 + t, block = 32 << (i % 4), vec = 1 << (t % 3);
        const double want = std::ceil(n / (block * vec)) * block + (n - 7 * std::floor(n / 7));
        if (mine.eval({{"n", n}, {"BLOCK", block}, {"VEC", vec}}) != want) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// Kernel Tuner's restrictions are Python: %, //, and, or, not, True, False and chained
// comparisons mean what Python means, and the text kept (what an exported header compiles) is C++.
TEST(Expr, PythonSpellingsOfRestrictions) {
  const Bindings b{{"bx", 48}, {"by", 4}, {"tile", 3}};
  EXPECT_EQ(ev("bx * by % 32 != 0", b), 0);       // (48 * 4) % 32 == 0: % binds as * does
  EXPECT_EQ(ev("bx % 32 != 0 and by <= 8", b), 1);
  EXPECT_EQ(ev("not bx == 48 or tile == 3", b), 1);  // (not (bx == 48)) or (tile == 3)
  EXPECT_EQ(ev("not bx == 48", b), 0);
  EXPECT_EQ(ev("-7 % 3"), 2);                      // floor modulo, as Python's
  EXPECT_EQ(ev("-7 // 2"), -4);
  EXPECT_EQ(ev("1 <= tile < 4", b), 1);            // 1 <= tile and tile < 4
  EXPECT_EQ(ev("1 <= tile < 3", b), 0);
  EXPECT_EQ(ev("(bx > 32) == True", b), 1);
  EXPECT_EQ(ev("(bx > 64) != False", b), 0);
  EXPECT_EQ(ev("bx * by <= 1024 and (tile % 2 == 1 or by % 2 == 0)", b), 1);
  EXPECT_EQ(Expr("bx % 32 != 0 and by <= 8", kLoc).text(), "mod(bx, 32) != 0 && by <= 8");
  EXPECT_EQ(Expr("a * b % c + d", kLoc).text(), "mod(a * b, c) + d");
  EXPECT_EQ(Expr("not (a and b)", kLoc).text(), "!(a && b)");
  EXPECT_EQ(Expr("cdiv(n, 256) <= 2147483647", kLoc).text(), "cdiv(n, 256) <= 2147483647") << "C spellings stay as written";
  const auto vars = Expr("block_size_x % tile_size == 0", kLoc).variables();
  EXPECT_EQ(vars.size(), 2u);
  // Python text that does not parse names the column.
  const auto msg = error_of([] { Expr("bx % (by and", kLoc); });
  EXPECT_NE(msg.find("cfg.yaml:7:12"), std::string::npos) << msg;
  EXPECT_NE(msg.find("column"), std::string::npos) << msg;
}

}  // namespace
}  // namespace soltune
