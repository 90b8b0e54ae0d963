#pragma once
// Boost.Program_options glue shared by the commands.
#include <boost/program_options.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "eval/worker_evaluator.hpp"

namespace soltune::cli {

// Wrong command-line use: exit code 2, like other Unix tools.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what) {}
};

// Parses args; positional arguments land in `positional`. Unknown options throw UsageError.
boost::program_options::variables_map parse_options(const boost::program_options::options_description& desc,
                                                    const std::vector<std::string>& args,
                                                    std::vector<std::string>& positional, const std::string& command);
std::string to_string(const boost::program_options::options_description& desc);

// A command's options as parsed, and its positional arguments.
struct ParsedArgs {
  boost::program_options::variables_map vm;
  std::vector<std::string> positional;
};

// parse_options() for `soltune COMMAND`, whose desc holds "help": with --help, prints "usage:
// soltune COMMAND SYNOPSIS" and the options and returns nullopt (the command then exits 0).
std::optional<ParsedArgs> parse_command(const boost::program_options::options_description& desc,
                                        const std::vector<std::string>& args, const std::string& command,
                                        const std::string& synopsis);

// The time now, ISO-8601 UTC to the second ("2026-12-06T17:08:00Z"): what a command stamps its output with.
std::string utc_now();

// A word as a POSIX shell reads it back: as it is when it is plain, else in single quotes.
std::string shell_quote(const std::string& word);

// How to start a GPU worker on device `device` (described by `d`): this very program, `soltune
// worker`, holding the device's lock (waiting for another run that holds it, or refused at once).
WorkerOptions worker_options(int device, const DeviceInfo& d, bool wait_for_gpu);

// Where commands that read a knowledge base find the templates: $SOLTUNE_TEMPLATES, ./templates,
// or the installed ones.
std::filesystem::path default_templates();

// default_compiler_options() with a 60 s limit per compile (env SOLTUNE_COMPILE_TIMEOUT: seconds,
// 0 disables), each compile in `soltune nvrtc-worker`. Throws UsageError on a malformed value.
CompilerOptions compiler_options();

}  // namespace soltune::cli
