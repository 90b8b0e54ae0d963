#include "core/expr.hpp"

#include <muParser.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <mutex>

#include "core/expr_syntax.hpp"

namespace soltune {
namespace {

double f_cdiv(double a, double b) { return std::ceil(a / b); }
double f_fdiv(double a, double b) { return std::floor(a / b); }
double f_mod(double a, double b) { return a - b * std::floor(a / b); }
double f_pow(double a, double b) { return std::pow(a, b); }
double f_not(double a) { return a == 0 ? 1 : 0; }
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
  p.DefineInfixOprt("!", f_not);  // C's logical not (muparser has none of its own)
}

}  // namespace

// Parsing is what costs (a fresh mu::Parser per evaluation was most of a search's CPU time on
// large spaces); a parser with its expression set evaluates from bytecode. A parser is not safe to
// share between threads, so each evaluation borrows one from this pool (one per concurrent caller).
struct Expr::Compiled {
  struct Instance {
    mu::Parser parser;
    std::vector<double> slots;  // the variables, in vars_ order; never resized after setup
  };
  std::mutex m;
  std::vector<std::unique_ptr<Instance>> idle;

  std::unique_ptr<Instance> borrow(const std::string& text, const std::vector<std::string>& vars) {
    {
      std::lock_guard lock(m);
      if (!idle.empty()) {
        auto in = std::move(idle.back());
        idle.pop_back();
        return in;
      }
    }
    auto in = std::make_unique<Instance>();
    setup(in->parser);
    in->slots.assign(vars.size(), 0.0);
    for (size_t i = 0; i < vars.size(); ++i) in->parser.DefineVar(vars[i], &in->slots[i]);
    in->parser.SetExpr(text);
    return in;
  }
  void give_back(std::unique_ptr<Instance> in) {
    std::lock_guard lock(m);
    idle.push_back(std::move(in));
  }
  // A borrowed parser, back in the pool however the evaluation ends.
  struct Lease {
    Compiled& pool;
    std::unique_ptr<Instance> in;
    ~Lease() { pool.give_back(std::move(in)); }
  };
};

Expr::Expr(std::string text, SourceLoc loc) : text_(std::move(text)), loc_(std::move(loc)) {
  if (text_.find_first_not_of(" \t") == std::string::npos) throw Error(loc_, "empty expression");
  if (auto pos = text_.find('^'); pos != std::string::npos)
    throw Error(loc_, "in expression '" + text_ + "' at column " + std::to_string(pos + 1) +
                          ": '^' is not allowed (use pow(a, b))");
  text_ = canonical_expression(text_, loc_);
  std::vector<double> pool;
  pool.reserve(256);
  try {
    mu::Parser p;
    setup(p);
    p.SetVarFactory(collect_var, &pool);
    p.SetExpr(text_);
    for (const auto& [name, ptr] : p.GetUsedVar()) vars_.push_back(name);
    compiled_ = std::make_shared<Compiled>();
  } catch (const mu::ParserError& e) {
    throw Error(loc_, "in expression '" + text_ + "' at column " + std::to_string(e.GetPos() + 1) +
                          ": " + e.GetMsg());
  }
}

Expr Expr::constant(int64_t v) { return Expr(std::to_string(v), SourceLoc{"<constant>"}); }

Expr Expr::with_lets(const std::vector<std::pair<std::string, std::string>>& lets) const {
  bool any = false;
  for (const auto& [name, text] : lets) any = any || std::find(vars_.begin(), vars_.end(), name) != vars_.end();
  if (!any) return *this;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (size_t i = 0; i < text_.size();) {
    if (!ident(text_[i]) || std::isdigit(static_cast<unsigned char>(text_[i]))) {
      // a number's digits and suffix stay together (1e3 is no name e3)
      const bool number = std::isdigit(static_cast<unsigned char>(text_[i]));
      do out += text_[i++];
      while (number && i < text_.size() && ident(text_[i]));
      continue;
    }
    size_t j = i;
    while (j < text_.size() && ident(text_[j])) ++j;
    const std::string word = text_.substr(i, j - i);
    const auto let = std::find_if(lets.begin(), lets.end(), [&](const auto& l) { return l.first == word; });
    out += let == lets.end() ? word : "(" + let->second + ")";
    i = j;
  }
  return Expr(out, loc_);
}

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
  try {
    const Compiled::Lease lease{*compiled_, compiled_->borrow(text_, vars_)};
    for (size_t i = 0; i < vars_.size(); ++i) {
      auto it = b.find(vars_[i]);
      if (it == b.end()) throw Error(loc_, "expression '" + text_ + "': no value for '" + vars_[i] + "'");
      lease.in->slots[i] = it->second;
    }
    const double v = lease.in->parser.Eval();
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
