#pragma once
// Strict YAML reading: every node access names the file, line and column on error, and
// mappings reject keys they do not know (a typo must not silently become a default).
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/expr.hpp"

namespace soltune::yaml {

// A variant's derived quantities (`let:`): each name and the text it stands for, in order.
using Lets = std::vector<std::pair<std::string, std::string>>;

// A node together with the file it came from, and the derived quantities its expressions may name.
struct Node {
  YAML::Node node;
  std::string file;
  std::shared_ptr<const Lets> lets = {};  // handed down to every node below

  SourceLoc loc() const;
  [[noreturn]] void fail(const std::string& what) const;

  bool has(std::string_view key) const;
  Node at(std::string_view key) const;  // required key
  Node get(std::string_view key) const;  // optional key: an undefined node if missing
  bool defined() const { return node.IsDefined() && !node.IsNull(); }

  // Throws if the mapping has a key outside `allowed`.
  void only_keys(std::initializer_list<std::string_view> allowed) const;
  void require_map() const;
  std::vector<Node> seq() const;  // a sequence (a lone scalar counts as a one-element sequence)
  std::vector<std::pair<std::string, Node>> map_items() const;

  std::string str() const;
  int64_t integer() const;  // YAML 1.2: 010 is ten; 0o10 and 0x10 are octal and hexadecimal
  int64_t integer(int64_t lo, int64_t hi) const;  // refused outside [lo, hi]
  double number() const;
  bool boolean() const;
  Expr expr() const;  // a scalar parsed as an expression (numbers too), its lets spelled out

  std::string str_or(std::string_view key, std::string dflt) const;
  int64_t int_or(std::string_view key, int64_t dflt) const;
  int64_t int_or(std::string_view key, int64_t dflt, int64_t lo, int64_t hi) const;
  double number_or(std::string_view key, double dflt) const;
};

// Loads a file of one YAML document whose keys are plain and unique; a syntax error, a second
// document, a list or mapping as a key and a duplicate key each name the file, line and column.
Node load_file(const std::filesystem::path& path);

}  // namespace soltune::yaml
