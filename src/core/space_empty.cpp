// Space::why_empty: what to tell a user whose shape no configuration of a variant can serve.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "core/space.hpp"

namespace soltune {
namespace {

// A constraint of one top-level comparison, split into its sides ("cols <= 512 * TPR"); nothing for
// any other form (a disjunction, a conditional, two comparisons), which is then shown whole.
struct Comparison {
  Expr lhs, rhs;
  std::string op;
};

std::optional<Comparison> split_comparison(const Expr& e) {
  const std::string& t = e.text();
  int depth = 0;
  size_t at = std::string::npos;
  std::string op;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    const char next = i + 1 < t.size() ? t[i + 1] : '\0';
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if (depth > 0) continue;
    else if (c == '?' || ((c == '&' || c == '|') && next == c)) return std::nullopt;
    else if (c == '<' || c == '>' || ((c == '=' || c == '!') && next == '=')) {
      if (at != std::string::npos) return std::nullopt;
      at = i;
      op = next == '=' ? std::string{c, '='} : std::string(1, c);
      i += op.size() - 1;
    }
  }
  if (at == std::string::npos) return std::nullopt;
  try {
    return Comparison{Expr(t.substr(0, at), e.loc()), Expr(t.substr(at + op.size()), e.loc()), op};
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The comparison that holds where `op` does not: what the nearest configuration shows.
const char* negated(const std::string& op) {
  if (op == "<=") return ">";
  if (op == "<") return ">=";
  if (op == ">=") return "<";
  if (op == ">") return "<=";
  if (op == "==") return "!=";
  return "==";
}

// How far a failing comparison is from holding, relative to its right side: the nearest miss is
// the configuration a user would widen a knob from.
double miss(const Comparison& c, const Bindings& b) {
  const double l = c.lhs.eval(b), r = c.rhs.eval(b);
  const double d = c.op[0] == '<' ? l - r : c.op[0] == '>' ? r - l : c.op == "==" ? std::fabs(l - r) : 0.0;
  return d / std::max(std::fabs(r), 1.0);
}

std::string num(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string Space::why_empty(size_t limit) const {
  const auto& cons = *constraints_;
  const size_t k = knobs().size();
  // Per combination: how many constraints hold before the first that fails. The deepest first
  // failure is the culprit: every combination that meets the constraints before it breaks it.
  size_t deepest = 0, reached = 0, seen = 0;
  std::optional<Config> nearest;
  double nearest_miss = std::numeric_limits<double>::infinity();
  std::optional<Comparison> cmp;
  bool legal_found = false;
  const bool all_seen = each_combination([&](const Config& c) {
    if (seen == limit) return false;  // one more: the search stops short of it
    ++seen;
    const auto b = bind(c);
    size_t held = 0;
    while (held < cons.size() && cons[held].eval_bool(b)) ++held;
    if (held == cons.size()) {
      legal_found = true;
      return false;
    }
    if (held > deepest || !nearest) {
      deepest = held;
      reached = 0;
      nearest.reset();
      nearest_miss = std::numeric_limits<double>::infinity();
      cmp = split_comparison(cons[held]);
    }
    if (held == deepest) {
      ++reached;
      const double m = cmp ? miss(*cmp, b) : 0.0;
      if (!nearest || m < nearest_miss) {
        nearest = c;
        nearest_miss = m;
      }
    }
    return true;
  });
  if (legal_found) return "";
  if (!nearest) return "";  // not reached: every space has at least one combination
  const Expr& e = cons[deepest];
  const auto b = bind(*nearest);
  std::string knobs_in, at;
  for (size_t i = 0; i < k; ++i) {
    const auto& name = knobs()[i].name;
    if (std::find(e.variables().begin(), e.variables().end(), name) == e.variables().end()) continue;
    knobs_in += (knobs_in.empty() ? "" : ", ") + name;
    at += (at.empty() ? "" : ", ") + name + "=" + std::to_string(nearest->values[i]);
  }
  const auto why = variant_->constraint_reason(deepest);
  std::string out = "constraint '" + e.text() + "'" + (why.empty() ? "" : " (" + why + ")") + " fails ";
  if (knobs_in.empty()) out += "for this shape and device";
  else out += "for every " + knobs_in + (reached < seen ? " that the constraints before it allow" : "");
  if (cmp) {
    out += std::string(": ") + (knobs_in.empty() ? "" : "at best ") + num(cmp->lhs.eval(b)) + " " + negated(cmp->op) +
           " " + num(cmp->rhs.eval(b));
  } else {
    std::string vals;
    for (const auto& v : e.variables())
      if (std::find_if(knobs().begin(), knobs().end(), [&](const KnobSpec& s) { return s.name == v; }) == knobs().end())
        vals += (vals.empty() ? "" : ", ") + v + "=" + num(b.at(v));
    if (!vals.empty()) out += " (" + vals + ")";
  }
  if (!at.empty()) out += (cmp ? " (" : ", e.g. at ") + at + (cmp ? ")" : "");
  if (!all_seen) out += " (in the first " + std::to_string(seen) + " combinations)";
  return out;
}

}  // namespace soltune
