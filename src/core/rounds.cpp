#include "core/rounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace soltune {

int correctness_rounds(const ProblemSpec& p) {
  size_t edges = 0;
  for (const auto& a : p.args) edges = std::max(edges, a.edge_inits.size());
  return kFullRangeRound + 1 + static_cast<int>(edges);
}

std::string round_name(int round) {
  switch (round) {
    case 0: return "declared";
    case 1: return "8x wider";
    case 2: return "shifted negative";
    case kFullRangeRound: return "full-range";
    default: return "edge values #" + std::to_string(round - kFullRangeRound);
  }
}

namespace {

std::string fmt_g(double v) {
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A range's bound for one task: its expression over the sizes and the input dtype's largest value.
double bound(const Expr& e, const Bindings& sizes, double dtype_max, const char* which) {
  Bindings b = sizes;
  b["dtype_max"] = dtype_max;
  const double v = e.eval(b);
  if (!(v > 0) || !std::isfinite(v)) {
    std::string at;
    for (const auto& name : e.variables()) at += (at.empty() ? " with " : ", ") + name + " = " + fmt_g(b.at(name));
    throw Error(e.loc(), "range's " + std::string(which) + " '" + e.text() + "' is " + fmt_g(v) + at +
                             ": expected a positive finite magnitude");
  }
  return v;
}

}  // namespace

Draw round_draw(const ArgSpec& a, DType t, int round, const Bindings& sizes) {
  if (round == kFullRangeRound && dtype_is_float(t)) {
    const auto full = dtype_finite_range(t);
    const auto& r = a.range;
    Draw d;
    d.kind = static_cast<Draw::Kind>(static_cast<int>(Draw::Kind::log_both) + static_cast<int>(r.sign));
    const double lo = r.min.empty() ? 0 : bound(r.min, sizes, full.max_finite, "min");
    const double hi = r.max.empty() ? 0 : bound(r.max, sizes, full.max_finite, "max");
    if (lo > 0 && hi > 0 && hi < lo)
      throw Error(r.max.loc(), "range's max '" + r.max.text() + "' is below its min '" + r.min.text() + "'");
    d.a = lo > 0 ? std::max(lo, full.min_subnormal) : full.min_subnormal;
    d.b = hi > 0 ? std::min(hi, full.max_finite) : full.max_finite;
    d.a = std::min(d.a, d.b);  // a range above the dtype's: its largest finite value
    return d;
  }
  // Edge rounds past an input's own edge values, and the full-range round of an integer input,
  // draw the declared distribution.
  const size_t e = static_cast<size_t>(round - kFullRangeRound - 1);
  const InitSpec& init = round > kFullRangeRound && e < a.edge_inits.size() ? a.edge_inits[e] : a.init;
  const bool normal = init.kind == InitSpec::Kind::normal;
  Draw d{normal ? Draw::Kind::normal : Draw::Kind::uniform, init.a, init.b};
  const double center = normal ? d.a : (d.a + d.b) / 2, spread = normal ? d.b : (d.b - d.a) / 2;
  if (round == 1) {  // same center, eight times the spread
    if (normal) d.b *= 8;
    else d.a = center - 8 * spread, d.b = center + 8 * spread;
  } else if (round == 2) {  // moved down by twice the spread
    d.a -= 2 * spread;
    if (!normal) d.b -= 2 * spread;
  }
  return d;
}

}  // namespace soltune
