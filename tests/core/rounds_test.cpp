// The correctness rounds: how many a problem gets, their names, and what each draws per input.
#include "core/rounds.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/problem.hpp"

namespace soltune {
namespace {

ArgSpec input(InitSpec::Kind kind, double a, double b) {
  ArgSpec s;
  s.name = "x";
  s.role = Role::in;
  s.init = InitSpec{kind, a, b};
  return s;
}

MagnitudeRange range(MagnitudeRange::Sign sign, const std::string& min, const std::string& max) {
  MagnitudeRange r;
  r.sign = sign;
  if (!min.empty()) r.min = Expr(min, {});
  if (!max.empty()) r.max = Expr(max, {});
  r.why = "w";
  return r;
}

TEST(Rounds, FourBuiltInRoundsThenEachEdgeValueRound) {
  const auto gelu = load_problem(SOLTUNE_SOURCE_DIR "/templates", "gelu");
  EXPECT_EQ(correctness_rounds(gelu), 6);  // two edge-value rounds
  ProblemSpec none;
  none.args.push_back(input(InitSpec::Kind::normal, 0, 1));
  EXPECT_EQ(correctness_rounds(none), 4);
  EXPECT_EQ(round_name(0), "declared");
  EXPECT_EQ(round_name(1), "8x wider");
  EXPECT_EQ(round_name(2), "shifted negative");
  EXPECT_EQ(round_name(kFullRangeRound), "full-range");
  EXPECT_EQ(round_name(kFullRangeRound + 2), "edge values #2");
}

TEST(Rounds, DeclaredWiderAndShiftedDraws) {
  const auto n = input(InitSpec::Kind::normal, 1, 2);
  for (const DType t : {DType::f32, DType::i32}) {
    auto d = round_draw(n, t, 0, {});
    EXPECT_EQ(d.kind, Draw::Kind::normal);
    EXPECT_EQ(d.a, 1);
    EXPECT_EQ(d.b, 2);
    d = round_draw(n, t, 1, {});
    EXPECT_EQ(d.a, 1);
    EXPECT_EQ(d.b, 16);
    d = round_draw(n, t, 2, {});
    EXPECT_EQ(d.a, -3);
    EXPECT_EQ(d.b, 2);
  }
  const auto u = input(InitSpec::Kind::uniform, -1, 3);  // centre 1, half-width 2
  auto d = round_draw(u, DType::bf16, 1, {});
  EXPECT_EQ(d.kind, Draw::Kind::uniform);
  EXPECT_EQ(d.a, -15);
  EXPECT_EQ(d.b, 17);
  d = round_draw(u, DType::bf16, 2, {});
  EXPECT_EQ(d.a, -5);
  EXPECT_EQ(d.b, -1);
}

TEST(Rounds, TheFullRangeRoundSpansTheDtypeUnlessTheInputNarrowsIt) {
  auto x = input(InitSpec::Kind::normal, 0, 1);
  auto d = round_draw(x, DType::f32, kFullRangeRound, {});
  EXPECT_EQ(d.kind, Draw::Kind::log_both);
  EXPECT_EQ(d.a, dtype_finite_range(DType::f32).min_subnormal);
  EXPECT_EQ(d.b, dtype_finite_range(DType::f32).max_finite);
  d = round_draw(x, DType::f16, kFullRangeRound, {});
  EXPECT_DOUBLE_EQ(d.a, 0x1p-24);  // f16's smallest subnormal
  EXPECT_EQ(d.b, 65504);
  EXPECT_DOUBLE_EQ(round_draw(x, DType::bf16, kFullRangeRound, {}).a, 0x1p-133);
  EXPECT_DOUBLE_EQ(round_draw(x, DType::f64, kFullRangeRound, {}).b, 1.7976931348623157e308);
  // An integer input draws its declared distribution.
  d = round_draw(x, DType::i32, kFullRangeRound, {});
  EXPECT_EQ(d.kind, Draw::Kind::normal);
  EXPECT_EQ(d.b, 1);

  x.range = range(MagnitudeRange::Sign::positive, "1.0e-3", "10");
  d = round_draw(x, DType::f32, kFullRangeRound, {});
  EXPECT_EQ(d.kind, Draw::Kind::log_positive);
  EXPECT_EQ(d.a, 1e-3);
  EXPECT_EQ(d.b, 10);
  // Clipped to the dtype's: a bound past f16's largest value becomes it.
  x.range = range(MagnitudeRange::Sign::negative, "1.0e-30", "1.0e30");
  d = round_draw(x, DType::f16, kFullRangeRound, {});
  EXPECT_EQ(d.kind, Draw::Kind::log_negative);
  EXPECT_DOUBLE_EQ(d.a, 0x1p-24);
  EXPECT_EQ(d.b, 65504);
  x.range.min = Expr("1.0e10", {});
  d = round_draw(x, DType::f16, kFullRangeRound, {});
  EXPECT_EQ(d.a, 65504);
  EXPECT_EQ(d.b, 65504);
  // The sign alone narrows it: the dtype's magnitudes, one sign.
  x.range = range(MagnitudeRange::Sign::positive, "", "");
  d = round_draw(x, DType::f32, kFullRangeRound, {});
  EXPECT_EQ(d.kind, Draw::Kind::log_positive);
  EXPECT_EQ(d.b, dtype_finite_range(DType::f32).max_finite);
  // Bounds over the sizes and the dtype's largest value: a GEMM's sum of k products stays finite.
  x.range = range(MagnitudeRange::Sign::both, "", "sqrt(dtype_max / k)");
  EXPECT_DOUBLE_EQ(round_draw(x, DType::f16, kFullRangeRound, {{"k", 4096}}).b, std::sqrt(65504.0 / 4096));
  EXPECT_DOUBLE_EQ(round_draw(x, DType::f32, kFullRangeRound, {{"k", 1}}).b, std::sqrt(dtype_finite_range(DType::f32).max_finite));
  x.range = range(MagnitudeRange::Sign::both, "k", "2");
  EXPECT_THROW(round_draw(x, DType::f32, kFullRangeRound, {{"k", 4}}), Error);  // max under min
  x.range = range(MagnitudeRange::Sign::both, "", "k - 4");
  EXPECT_THROW(round_draw(x, DType::f32, kFullRangeRound, {{"k", 4}}), Error);  // not a magnitude
}

TEST(Rounds, EdgeRoundsDrawEachInputsOwnEdgeValuesOrItsDeclaredOnes) {
  auto x = input(InitSpec::Kind::normal, 0, 3);
  x.edge_inits = {InitSpec{InitSpec::Kind::uniform, -3e38, 3e38}};
  auto d = round_draw(x, DType::f32, kFullRangeRound + 1, {});
  EXPECT_EQ(d.kind, Draw::Kind::uniform);
  EXPECT_EQ(d.b, 3e38);
  d = round_draw(x, DType::f32, kFullRangeRound + 2, {});  // past its edge values: the declared draw
  EXPECT_EQ(d.kind, Draw::Kind::normal);
  EXPECT_EQ(d.b, 3);
}

}  // namespace
}  // namespace soltune
