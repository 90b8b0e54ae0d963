// soltune kb: look into a knowledge base (list, best, show), carry it between machines
// (export-json, import-json), and clean the NVRTC compile cache (gc). Each subcommand lives in
// its own kb_*.cpp; this file routes to them.
#include <cstdio>

#include "cli/kb_common.hpp"
#include "cli/tune_command.hpp"

namespace soltune::cli {
namespace {

const char* kUsage = R"(usage: soltune kb <subcommand> [options]

subcommands:
  list            --kb PATH [--json]          runs, problems and GPUs of a knowledge base
  best            --kb PATH --problem NAME [--gpu FRAGMENT] [--json]
                                              the fastest ok result per GPU, variant, dtype and shape
  show RUN        --kb PATH [--json]          a run: its settings, status counts, best per task, results
  export-json     --kb PATH -o FILE           the whole knowledge base as one JSON document ('-': stdout)
  import-json     --kb PATH FILE              merge an export into a knowledge base, created if missing,
                                              without duplicates ('-': stdin) [--json]
  gc              [--cache-dir DIR] [--older-than DAYS] [--dry-run]
                                              remove NVRTC compile-cache entries unused for DAYS (30)

`soltune kb SUBCOMMAND --help` for a subcommand's options.
)";

}  // namespace

int kb_command(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string& sub = args[0];
  if (sub == "help" || sub == "--help" || sub == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "list") return kb_commands::list_command(rest);
  if (sub == "best") return kb_commands::best_command(rest);
  if (sub == "show") return kb_commands::show_command(rest);
  if (sub == "export-json") return kb_commands::export_json_command(rest);
  if (sub == "import-json") return kb_commands::import_json_command(rest);
  if (sub == "gc") return kb_commands::gc_command(rest);
  throw UsageError("kb: unknown subcommand '" + sub + "'\n\n" + kUsage);
}

}  // namespace soltune::cli
