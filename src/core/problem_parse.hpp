#pragma once
// The pieces of problem.yaml and <variant>.yaml parsing that problem.cpp and variant.cpp share.
// Internal to src/core; every error names the file, line and column.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/yaml_util.hpp"

namespace soltune::parse {

using Names = std::set<std::string, std::less<>>;

// Whether `name` occurs in the source as a whole identifier (comments and strings count).
bool mentions_identifier(const std::string& src, const std::string& name);
// A source file with its quoted includes written in place, each file once.
std::string read_text(const std::filesystem::path& p, const SourceLoc& from);
InitSpec parse_init(const yaml::Node& n);
std::vector<Expr> exprs(const yaml::Node& n, const Names& allowed, const std::string& what);
std::vector<std::string> strings(const yaml::Node& n);
// A problem argument, or with `temp` a baseline temporary or scratch buffer (name, dtype, shape).
ArgSpec parse_arg(const yaml::Node& n, const Names& size_names, bool temp);
std::vector<Expr> geometry(const yaml::Node& n, const Names& allowed, const std::string& what);
LaunchSpec parse_launch(const yaml::Node& n, const Names& allowed, bool with_args);
void parse_template_args(LaunchSpec& l, const Names& allowed, const SourceLoc& loc, const char* what = "knobs and sizes");
// Every name must be an argument of the problem (or, with temps_ok, a baseline temporary).
void check_args(const std::vector<std::string>& args, const ProblemSpec& p, bool temps_ok, const SourceLoc& loc);
VariantSpec parse_variant(const std::filesystem::path& yaml_path, const ProblemSpec& p);
// A `defines:` map or list over `names`, each macro named somewhere in `source` (file `source_name`).
std::vector<DefineSpec> parse_defines(const yaml::Node& dn, const Names& names, const std::string& source,
                                      const std::string& source_name);

}  // namespace soltune::parse
