#pragma once
// What the `soltune kb` subcommands share (internal to src/cli): option parsing, opening an
// existing knowledge base, and printing tables and JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune::cli::kb_commands {

namespace po = boost::program_options;
using json = nlohmann::ordered_json;

// The subcommands, each given the arguments after its name; the exit code.
int list_command(const std::vector<std::string>& args);
int best_command(const std::vector<std::string>& args);
int show_command(const std::vector<std::string>& args);
int export_json_command(const std::vector<std::string>& args);
int import_json_command(const std::vector<std::string>& args);
int gc_command(const std::vector<std::string>& args);

// Parses a subcommand's options; --help prints them and returns nullopt.
std::optional<ParsedArgs> parse(po::options_description& desc, const std::vector<std::string>& args,
                            const std::string& sub, const std::string& synopsis);

// The options of a subcommand that reads one knowledge base and prints it as text or JSON: --kb
// PATH, --json, and `count` positional arguments shown as `positional` in its usage (a wrong count
// is a usage error that says `wrong_count`). nullopt after --help.
struct ReadArgs {
  std::string path;
  bool json = false;
  std::vector<std::string> positional;
};
std::optional<ReadArgs> parse_read(const std::vector<std::string>& args, const std::string& sub,
                                   const std::string& positional, size_t count, const std::string& wrong_count);

// Reading commands never create or write a knowledge base: a missing file is an error naming it, and
// a file on a read-only medium is read.
KnowledgeBase open_existing(const std::string& path, const std::string& sub);

void print_json(const json& j);
// Rows of cells printed as left-aligned columns.
void print_table(const std::vector<std::vector<std::string>>& rows, const char* indent = "  ");

std::string fmt(double v, int prec = 2);                   // "-" for NaN
std::string plural(int64_t n, const std::string& word);  // "1 run", "2 runs", "3 entries"
json or_null(const std::string& s);                        // null for ""
json result_json(const ResultRecord& r, bool with_log);
// A result's KIND column: "measured", "predicted", or "re-timed" for a task's end re-timing of its best.
inline std::string kind_of(const ResultRecord& r) { return r.retimed ? "re-timed" : r.time_kind; }

}  // namespace soltune::cli::kb_commands
