#pragma once
// Integer-valued expressions over named symbols (knobs, sizes, device facts), evaluated with
// muparser. Values are doubles, exact for integers below 2^53, so sizes and byte counts of any
// realistic problem stay exact (muparser's ParserInt rounds through 32-bit int, too small).
//
// Besides muparser's operators (+ - * / && || == != < <= > >= ?: !) and builtins (min, max, abs,
// log2...), expressions may call cdiv(a,b) (ceiling division), fdiv(a,b) (floor division),
// mod(a,b), pow(a,b) and is_pow2(a). '^' is rejected: it means power to muparser and xor to C++,
// and expressions are also emitted verbatim into exported C++ headers.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace soltune {

using Bindings = std::map<std::string, double, std::less<>>;

class Expr {
 public:
  Expr() = default;
  // Parses the text at once: a syntax error throws Error naming loc and the column in the text.
  Expr(std::string text, SourceLoc loc);
  static Expr constant(int64_t v);
  // This expression with each name of `lets` (a name and the text it stands for, in order) replaced
  // by its text in parentheses: a variant's derived quantities (`let:`), written once. Unchanged
  // where it names none of them.
  Expr with_lets(const std::vector<std::pair<std::string, std::string>>& lets) const;

  bool empty() const { return text_.empty(); }
  const std::string& text() const { return text_; }
  const SourceLoc& loc() const { return loc_; }
  const std::vector<std::string>& variables() const { return vars_; }

  // Throws Error if the expression uses a name outside `allowed`.
  void check_names(const std::set<std::string, std::less<>>& allowed, const std::string& what) const;

  double eval(const Bindings& b) const;
  int64_t eval_int(const Bindings& b) const;  // throws unless the value is an integer
  bool eval_bool(const Bindings& b) const { return eval(b) != 0.0; }

 private:
  struct Compiled;  // parsers with the text parsed once, reused (legality checks run millions)
  std::string text_;
  SourceLoc loc_;
  std::vector<std::string> vars_;
  std::shared_ptr<Compiled> compiled_;  // shared by copies; thread-safe
};

}  // namespace soltune
