#include "core/yaml_util.hpp"

#include <cmath>
#include <fstream>

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
  return Node{child, file};
}

Node Node::get(std::string_view key) const {
  require_map();
  return Node{node[std::string(key)], file};
}

void Node::require_map() const {
  if (!node.IsMap()) fail("expected a mapping (key: value)");
}

void Node::only_keys(std::initializer_list<std::string_view> allowed) const {
  require_map();
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
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
    for (const auto& n : node) out.push_back(Node{n, file});
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
  for (const auto& kv : node) out.emplace_back(kv.first.as<std::string>(), Node{kv.second, file});
  return out;
}

std::string Node::str() const {
  if (!node.IsScalar()) fail("expected a scalar value");
  return node.Scalar();
}

int64_t Node::integer() const {
  const auto s = str();
  try {
    size_t pos = 0;
    // Accept 268435456 as well as 2**28-style? No: only plain integers; use expressions elsewhere.
    long long v = std::stoll(s, &pos, 0);
    if (pos != s.size()) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    fail("expected an integer, got '" + s + "'");
  }
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

Expr Node::expr() const { return Expr(str(), loc()); }

std::string Node::str_or(std::string_view key, std::string dflt) const {
  auto n = get(key);
  return n.defined() ? n.str() : dflt;
}
int64_t Node::int_or(std::string_view key, int64_t dflt) const {
  auto n = get(key);
  return n.defined() ? n.integer() : dflt;
}
double Node::number_or(std::string_view key, double dflt) const {
  auto n = get(key);
  return n.defined() ? n.number() : dflt;
}

Node load_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(SourceLoc{path.string()}, "cannot open file");
  try {
    auto root = YAML::Load(in);
    if (!root.IsDefined() || root.IsNull()) throw Error(SourceLoc{path.string()}, "file is empty");
    return Node{root, path.string()};
  } catch (const YAML::Exception& e) {
    throw Error(SourceLoc{path.string(), e.mark.line + 1, e.mark.column + 1}, "malformed YAML: " + e.msg);
  }
}

}  // namespace soltune::yaml
