#include "core/expr_syntax.hpp"

#include <cctype>
#include <vector>

namespace soltune {
namespace {

// Precedence of what a node's text is, high binds tighter; an operand of lower precedence than
// its operator needs is parenthesised when emitted.
enum Prec { kTernary = 1, kOr, kAnd, kNot, kCmp, kAdd, kMul, kUnary, kPrimary };

struct Node {
  std::string text;
  int prec = kPrimary;
};

struct Token {
  std::string s;
  size_t col = 0;  // 0-based
};

// False on a character outside the grammar: muparser then reports the expression as written.
bool tokenize(const std::string& t, std::vector<Token>& out) {
  size_t i = 0;
  while (i < t.size()) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (std::isspace(c)) {
      ++i;
      continue;
    }
    const size_t start = i;
    if (std::isalpha(c) || c == '_') {
      while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_')) ++i;
    } else if (std::isdigit(c) || (c == '.' && i + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[i + 1])))) {
      while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '.')) {
        // an exponent's sign belongs to the number: 1e-6
        if ((t[i] == 'e' || t[i] == 'E') && i + 1 < t.size() && (t[i + 1] == '-' || t[i + 1] == '+')) ++i;
        ++i;
      }
    } else {
      static const char* two[] = {"==", "!=", "<=", ">=", "&&", "||", "//"};
      bool pair = false;
      for (const char* op : two)
        if (t.compare(i, 2, op) == 0) pair = true;
      i += pair ? 2 : 1;
      if (std::string("+-*/%<>!?:(),").find(static_cast<char>(c)) == std::string::npos && !pair) return false;
    }
    out.push_back(Token{t.substr(start, i - start), start});
  }
  return true;
}

// Recursive descent over C's precedence, with Python's spellings (and, or, not, %, //, True,
// False, chained comparisons) turned into muparser's and C++'s.
class Translator {
 public:
  Translator(std::vector<Token> toks, const std::string& whole, const SourceLoc& loc)
      : toks_(std::move(toks)), whole_(whole), loc_(loc) {}

  std::string run() {
    Node n = ternary();
    if (pos_ < toks_.size()) fail("unexpected '" + toks_[pos_].s + "'");
    return n.text;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    const size_t col = pos_ < toks_.size() ? toks_[pos_].col : whole_.size();
    throw Error(loc_, "in expression '" + whole_ + "' at column " + std::to_string(col + 1) + ": " + what);
  }
  bool at(const char* s) const { return pos_ < toks_.size() && toks_[pos_].s == s; }
  bool take(const char* s) {
    if (!at(s)) return false;
    ++pos_;
    return true;
  }
  static std::string wrap(const Node& n, int need) { return n.prec < need ? "(" + n.text + ")" : n.text; }

  Node ternary() {
    Node c = logic_or();
    if (!take("?")) return c;
    Node a = ternary();
    if (!take(":")) fail("expected ':' of a conditional");
    Node b = ternary();
    return {wrap(c, kOr) + " ? " + wrap(a, kTernary) + " : " + wrap(b, kTernary), kTernary};
  }
  Node logic_or() {
    Node l = logic_and();
    while (take("||") || take("or")) l = {wrap(l, kOr) + " || " + wrap(logic_and(), kAnd), kOr};
    return l;
  }
  Node logic_and() {
    Node l = logic_not();
    while (take("&&") || take("and")) l = {wrap(l, kAnd) + " && " + wrap(logic_not(), kNot), kAnd};
    return l;
  }
  // Python's `not` binds looser than a comparison: not a == b is !(a == b).
  Node logic_not() {
    if (take("not")) return {"!" + wrap(logic_not(), kPrimary), kNot};
    return compare();
  }
  // a < b < c is a < b and b < c, as Python reads it.
  Node compare() {
    static const char* ops[] = {"==", "!=", "<=", ">=", "<", ">"};
    Node l = additive();
    std::string chain;
    while (true) {
      const char* op = nullptr;
      for (const char* o : ops)
        if (at(o)) op = o;
      if (!op) break;
      ++pos_;
      Node r = additive();
      const std::string one = wrap(l, kAdd) + " " + op + " " + wrap(r, kAdd);
      chain = chain.empty() ? one : "(" + chain + ") && (" + one + ")";
      l = r;
    }
    return chain.empty() ? l : Node{chain, chain.find(" && ") == std::string::npos ? kCmp : kAnd};
  }
  Node additive() {
    Node l = multiplicative();
    while (at("+") || at("-")) {
      const std::string op = toks_[pos_++].s;
      l = {wrap(l, kAdd) + " " + op + " " + wrap(multiplicative(), kMul), kAdd};
    }
    return l;
  }
  Node multiplicative() {
    Node l = unary();
    while (at("*") || at("/") || at("%") || at("//")) {
      const std::string op = toks_[pos_++].s;
      Node r = unary();
      if (op == "%") l = {"mod(" + l.text + ", " + r.text + ")", kPrimary};
      else if (op == "//") l = {"fdiv(" + l.text + ", " + r.text + ")", kPrimary};
      else l = {wrap(l, kMul) + " " + op + " " + wrap(r, kUnary), kMul};
    }
    return l;
  }
  Node unary() {
    if (at("-") || at("+") || at("!")) {
      const std::string op = toks_[pos_++].s;
      return {op + wrap(unary(), kUnary), kUnary};
    }
    return primary();
  }
  Node primary() {
    if (pos_ >= toks_.size()) fail("the expression ends early");
    if (take("(")) {
      Node n = ternary();
      if (!take(")")) fail("expected ')'");
      return {"(" + n.text + ")", kPrimary};
    }
    const std::string s = toks_[pos_].s;
    const unsigned char c = static_cast<unsigned char>(s[0]);
    if (!(std::isalnum(c) || c == '_' || c == '.')) fail("unexpected '" + s + "'");
    ++pos_;
    if (s == "True") return {"1", kPrimary};
    if (s == "False") return {"0", kPrimary};
    if (!take("(")) return {s, kPrimary};
    std::string call = s + "(";
    if (!at(")")) {
      call += ternary().text;
      while (take(",")) call += ", " + ternary().text;
    }
    if (!take(")")) fail("expected ')' closing " + s + "(");
    return {call + ")", kPrimary};
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  const std::string& whole_;
  const SourceLoc& loc_;
};

bool has_python_spelling(const std::vector<Token>& toks) {
  for (size_t i = 0; i < toks.size(); ++i) {
    const auto& s = toks[i].s;
    if (s == "%" || s == "//" || s == "and" || s == "or" || s == "not" || s == "True" || s == "False") return true;
    // a chained comparison: two comparison operators with no lower-precedence one between them
    static const char* cmp[] = {"==", "!=", "<=", ">=", "<", ">"};
    auto is_cmp = [&](const std::string& t) {
      for (const char* c : cmp)
        if (t == c) return true;
      return false;
    };
    if (!is_cmp(s)) continue;
    int depth = 0;
    for (size_t j = i + 1; j < toks.size(); ++j) {
      const auto& u = toks[j].s;
      if (u == "(") ++depth;
      if (u == ")" && --depth < 0) break;
      if (depth > 0) continue;
      if (u == "&&" || u == "||" || u == "?" || u == ":" || u == ",") break;
      if (is_cmp(u)) return true;
    }
  }
  return false;
}

}  // namespace

std::string canonical_expression(const std::string& text, const SourceLoc& loc) {
  std::vector<Token> toks;
  if (!tokenize(text, toks) || !has_python_spelling(toks)) return text;
  return Translator(toks, text, loc).run();
}

}  // namespace soltune
