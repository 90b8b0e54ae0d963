#include "core/yaml_util.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace soltune::yaml {

SourceLoc Node::loc() const {
  const auto m = node.Mark();
  if (m.is_null()) return SourceLoc{file};
  return SourceLoc{file, m.line + 1, m.column + 1};
}

void Node::fail(const std::string& what) const { throw Error(loc(), what); }

bool Node::has(std::string_view key) const {
  return node.IsMap() && node[std::string(key)].IsDefined();
}

Node Node::at(std::string_view key) const {
  require_map();
  auto child = node[std::string(key)];
  if (!child.IsDefined()) fail("missing required key '" + std::string(key) + "'");
  return Node{child, file, lets};
}

Node Node::get(std::string_view key) const {
  require_map();
  return Node{node[std::string(key)], file, lets};
}

void Node::require_map() const {
  if (!node.IsMap()) fail("expected a mapping (key: value)");
}

void Node::only_keys(std::initializer_list<std::string_view> allowed) const {
  require_map();
  for (const auto& kv : node) {
    const auto key = kv.first.Scalar();  // keys are scalars: load_file checked every mapping
    bool ok = false;
    for (auto a : allowed) ok = ok || key == a;
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      Node{kv.first, file}.fail("unknown key '" + key + "' (expected one of: " + list + ")");
    }
  }
}

std::vector<Node> Node::seq() const {
  std::vector<Node> out;
  if (node.IsSequence()) {
    for (const auto& n : node) out.push_back(Node{n, file, lets});
  } else if (node.IsScalar()) {
    out.push_back(*this);
  } else {
    fail("expected a list");
  }
  return out;
}

std::vector<std::pair<std::string, Node>> Node::map_items() const {
  require_map();
  std::vector<std::pair<std::string, Node>> out;
  for (const auto& kv : node) out.emplace_back(kv.first.Scalar(), Node{kv.second, file, lets});
  return out;
}

std::string Node::str() const {
  if (!node.IsScalar()) fail("expected a scalar value");
  return node.Scalar();
}

int64_t Node::integer() const {
  const auto s = str();
  // YAML 1.2's core schema: decimal digits (010 is ten), 0o octal, 0x hexadecimal, an optional sign.
  const bool signed_ = !s.empty() && (s[0] == '-' || s[0] == '+');
  std::string digits = s.substr(signed_ ? 1 : 0);
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'o' || digits[1] == 'x')) {
    base = digits[1] == 'o' ? 8 : 16;
    digits.erase(0, 2);
  }
  bool ok = !digits.empty();
  for (char ch : digits)
    ok = ok && (base == 16 ? std::isxdigit(static_cast<unsigned char>(ch)) != 0 : ch >= '0' && ch < '0' + base);
  if (!ok) fail("expected an integer, got '" + s + "'");
  errno = 0;
  const long long v = std::strtoll(((signed_ && s[0] == '-' ? "-" : "") + digits).c_str(), nullptr, base);
  if (errno == ERANGE) fail("integer '" + s + "' is out of range");
  return v;
}

int64_t Node::integer(int64_t lo, int64_t hi) const {
  const int64_t v = integer();
  if (v < lo || v > hi)
    fail("expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + str());
  return v;
}

double Node::number() const {
  const auto s = str();
  try {
    size_t pos = 0;
    double v = std::stod(s, &pos);
    if (pos != s.size() || !std::isfinite(v)) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    fail("expected a number, got '" + s + "'");
  }
}

bool Node::boolean() const {
  const auto s = str();
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail("expected true or false, got '" + s + "'");
}

Expr Node::expr() const {
  Expr e(str(), loc());  // parsed as written first: a syntax error's column is the file's
  return lets ? e.with_lets(*lets) : e;
}

namespace {
// A key written without a value (`seed:`) is a mistake, not a request for the default: the default
// comes from leaving the key out.
void refuse_empty(const Node& parent, const Node& n, std::string_view key, const std::string& dflt) {
  if (!parent.has(key) || !n.node.IsNull()) return;
  // Named where the key is written: an empty value's own mark is the next line's.
  for (const auto& kv : parent.node)
    if (kv.first.IsScalar() && kv.first.Scalar() == key)
      Node{kv.first, parent.file}.fail(std::string(key) + ": has no value; leave the key out for the default (" + dflt + ")");
}
}  // namespace

std::string Node::str_or(std::string_view key, std::string dflt) const {
  auto n = get(key);
  refuse_empty(*this, n, key, dflt.empty() ? "empty" : dflt);
  return n.defined() ? n.str() : dflt;
}
int64_t Node::int_or(std::string_view key, int64_t dflt) const {
  auto n = get(key);
  refuse_empty(*this, n, key, std::to_string(dflt));
  return n.defined() ? n.integer() : dflt;
}
int64_t Node::int_or(std::string_view key, int64_t dflt, int64_t lo, int64_t hi) const {
  auto n = get(key);
  refuse_empty(*this, n, key, std::to_string(dflt));
  if (!n.defined()) return dflt;
  const int64_t v = n.integer();
  if (v < lo || v > hi)
    n.fail(std::string(key) + ": expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
           ", got " + n.str());
  return v;
}
double Node::number_or(std::string_view key, double dflt) const {
  auto n = get(key);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", dflt);
  refuse_empty(*this, n, key, buf);
  return n.defined() ? n.number() : dflt;
}

namespace {

const char* kind_name(const YAML::Node& n) {
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "a null";
}

// What yaml-cpp accepts and soltune must not: keys that are lists or mappings (no option has such a
// name, and reading one as text would fail later without a location), and a key given twice (yaml-cpp
// keeps both and lookups see the first, so an edit lower in the file would be silently ignored).
void check_tree(const YAML::Node& n, const std::string& file, int depth) {
  const auto at = [&](const YAML::Node& where) {
    const auto m = where.Mark();
    return m.is_null() ? SourceLoc{file} : SourceLoc{file, m.line + 1, m.column + 1};
  };
  if (depth > 64) throw Error(at(n), "nested more than 64 levels deep");
  if (n.IsSequence()) {
    for (const auto& e : n) check_tree(e, file, depth + 1);
  } else if (n.IsMap()) {
    std::map<std::string, int> seen;  // key -> its first line
    for (const auto& kv : n) {
      if (!kv.first.IsScalar())
        throw Error(at(kv.first), std::string("expected a key (a plain name), got ") + kind_name(kv.first));
      const auto [it, fresh] = seen.emplace(kv.first.Scalar(), kv.first.Mark().line + 1);
      if (!fresh)
        throw Error(at(kv.first), "duplicate key '" + kv.first.Scalar() + "' (first given on line " +
                                      std::to_string(it->second) + ")");
      check_tree(kv.second, file, depth + 1);
    }
  }
}

}  // namespace

Node load_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(SourceLoc{path.string()}, "is a folder, not a YAML file");
  std::ifstream in(path);
  if (!in) throw Error(SourceLoc{path.string()}, std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(SourceLoc{path.string()}, "cannot read file");
  try {
    const auto docs = YAML::LoadAll(text.str());
    if (docs.size() > 1) {
      const auto m = docs[1].Mark();
      throw Error(m.is_null() ? SourceLoc{path.string()} : SourceLoc{path.string(), m.line + 1, m.column + 1},
                  "a second YAML document: a soltune file holds one (remove the '---' or the '...')");
    }
    if (docs.empty() || !docs[0].IsDefined() || docs[0].IsNull()) throw Error(SourceLoc{path.string()}, "file is empty");
    check_tree(docs[0], path.string(), 0);
    return Node{docs[0], path.string()};
  } catch (const YAML::Exception& e) {
    throw Error(SourceLoc{path.string(), e.mark.line + 1, e.mark.column + 1}, "malformed YAML: " + e.msg);
  }
}

}  // namespace soltune::yaml
