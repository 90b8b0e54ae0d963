#include "core/expr.hpp"

#include <muParser.h>

#include <cmath>
#include <limits>

namespace soltune {
namespace {

double f_cdiv(double a, double b) { return std::ceil(a / b); }
double f_fdiv(double a, double b) { return std::floor(a / b); }
double f_mod(double a, double b) { return a - b * std::floor(a / b); }
double f_pow(double a, double b) { return std::pow(a, b); }
double f_is_pow2(double a) {
  if (a < 1 || a != std::floor(a)) return 0;
  auto v = static_cast<uint64_t>(a);
  return (v & (v - 1)) == 0 ? 1 : 0;
}

// Unknown names are collected through a variable factory that hands out slots in this pool.
double* collect_var(const char*, void* pool) {
  auto* p = static_cast<std::vector<double>*>(pool);
  if (p->size() >= p->capacity()) throw mu::ParserError("too many variables in one expression");
  p->push_back(1.0);
  return &p->back();
}

void setup(mu::Parser& p) {
  p.DefineFun("cdiv", f_cdiv);
  p.DefineFun("fdiv", f_fdiv);
  p.DefineFun("mod", f_mod);
  p.DefineFun("pow", f_pow);
  p.DefineFun("is_pow2", f_is_pow2);
}

}  // namespace

Expr::Expr(std::string text, SourceLoc loc) : text_(std::move(text)), loc_(std::move(loc)) {
  if (text_.find_first_not_of(" \t") == std::string::npos) throw Error(loc_, "empty expression");
  if (auto pos = text_.find('^'); pos != std::string::npos)
    throw Error(loc_, "in expression '" + text_ + "' at column " + std::to_string(pos + 1) +
                          ": '^' is not allowed (use pow(a, b))");
  std::vector<double> pool;
  pool.reserve(256);
  try {
    mu::Parser p;
    setup(p);
    p.SetVarFactory(collect_var, &pool);
    p.SetExpr(text_);
    for (const auto& [name, ptr] : p.GetUsedVar()) vars_.push_back(name);
  } catch (const mu::ParserError& e) {
    throw Error(loc_, "in expression '" + text_ + "' at column " + std::to_string(e.GetPos() + 1) +
                          ": " + e.GetMsg());
  }
}

Expr Expr::constant(int64_t v) { return Expr(std::to_string(v), SourceLoc{"<constant>"}); }

void Expr::check_names(const std::set<std::string, std::less<>>& allowed, const std::string& what) const {
  for (const auto& v : vars_)
    if (!allowed.count(v)) {
      std::string names;
      for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
      throw Error(loc_, what + " '" + text_ + "' uses unknown name '" + v + "' (known: " + names + ")");
    }
}

double Expr::eval(const Bindings& b) const {
  if (text_.empty()) throw Error(loc_, "evaluating an empty expression");
  std::vector<double> slots(vars_.size());
  try {
    mu::Parser p;
    setup(p);
    for (size_t i = 0; i < vars_.size(); ++i) {
      auto it = b.find(vars_[i]);
      if (it == b.end()) throw Error(loc_, "expression '" + text_ + "': no value for '" + vars_[i] + "'");
      slots[i] = it->second;
      p.DefineVar(vars_[i], &slots[i]);
    }
    p.SetExpr(text_);
    double v = p.Eval();
    if (!std::isfinite(v)) throw Error(loc_, "expression '" + text_ + "' is not finite here");
    return v;
  } catch (const mu::ParserError& e) {
    throw Error(loc_, "in expression '" + text_ + "': " + e.GetMsg());
  }
}

int64_t Expr::eval_int(const Bindings& b) const {
  double v = eval(b);
  if (v != std::floor(v) || std::fabs(v) > 9007199254740992.0)
    throw Error(loc_, "expression '" + text_ + "' gave " + std::to_string(v) + ", expected an integer");
  return static_cast<int64_t>(v);
}

}  // namespace soltune
