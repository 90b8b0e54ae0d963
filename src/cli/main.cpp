// soltune: finds the fastest CUDA kernels for your shapes on your GPU, and proves how close each
// one is to the hardware's speed of light.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include <unistd.h>

#include "cli/audit_command.hpp"
#include "cli/landscape_command.hpp"
#include "cli/report_command.hpp"
#include "cli/tune_command.hpp"
#include "codegen/compiler.hpp"
#include "codegen/nvrtc_worker.hpp"
#include "eval/worker.hpp"
#include "core/error.hpp"

namespace {

const char* kUsage = R"(usage: soltune <command> [options]

commands:
  tune CONFIG     tune the kernels a config names (configs/*.yaml) and record every result
                  [--backend auto|cuda|model|replay] [--landscape FILE...] [--evals N] [--seconds S] [--seed N] [--kb PATH]
                  [--strategy NAME] [--device I] [--timeout-cap S] [--resume] [--no-wait] [--quiet] [--report FILE]
  export          write the tuned kernels of a problem as a self-contained CUDA header (or JSON)
                  --kb PATH --problem NAME -o FILE [--format cuh|json] [--gpu NAME] [--templates DIR]
  audit           run the kernels export would ship once each under compute-sanitizer; record the verdicts
                  --kb PATH [--problem NAME] [--tools LIST] [--again] [--device I] [--templates DIR] [--no-wait]
  report          a knowledge base as one self-contained HTML file: kernels, rooflines, each search's progress, failures
                  --kb PATH -o FILE [--problem NAME] [--gpu NAME] [--templates DIR]
  devices         list CUDA devices with their limits and ceilings [--no-measure] [--no-wait]
  landscape CONFIG  measure every legal configuration of one task (exhaustive) -> a landscape file
                  -o FILE [--variant V] [--dtype D] [--shape KEY] [--resume | --force] [--count] [--no-wait]
  bench-search    compare search strategies on recorded landscapes (replay, no GPU)
                  --landscape FILE... [--seeds N] [--strategies LIST] [--json]
  kb SUBCOMMAND   look into, carry and clean up results: list, best, show, export-json, import-json, gc
  help, --help    this text; `soltune COMMAND --help` for a command's options
  --version       soltune's version and the NVRTC it compiles with

Without a CUDA device, `tune` falls back to the model backend (predicted times, labelled as such).
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    const int v = soltune::Compiler::nvrtc_version();
    std::printf("soltune %s (NVRTC %d.%d)\n", SOLTUNE_VERSION, v / 1000, v % 1000 / 10);
    return 0;
  }
  const std::string cmd = args[0];
  if (cmd == "worker" || cmd == "nvrtc-worker") {
    // The GPU worker and the NVRTC compile helper (started by tune and devices): the protocol owns
    // the original stdout; anything else printed goes to stderr.
    const int protocol = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    try {
      return cmd == "worker" ? soltune::worker_main(STDIN_FILENO, protocol)
                             : soltune::nvrtc_worker_main(STDIN_FILENO, protocol);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "soltune %s: %s\n", cmd.c_str(), e.what());
      return 1;
    }
  }
  args.erase(args.begin());
  try {
    if (cmd == "tune") return soltune::cli::tune_command(args, line, argv[0]);
    if (cmd == "export") return soltune::cli::export_command(args);
    if (cmd == "audit") return soltune::cli::audit_command(args);
    if (cmd == "report") return soltune::cli::report_command(args);
    if (cmd == "devices") return soltune::cli::devices_command(args);
    if (cmd == "landscape") return soltune::cli::landscape_command(args, line);
    if (cmd == "bench-search") return soltune::cli::bench_search_command(args);
    if (cmd == "kb") return soltune::cli::kb_command(args);
    std::fprintf(stderr, "soltune: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const soltune::cli::UsageError& e) {
    std::fprintf(stderr, "soltune: error: %s\n", e.what());
    return 2;
  } catch (const soltune::Error& e) {
    std::fprintf(stderr, "soltune: error: %s\n", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the system refused (too long, a loop of links, not readable): the user's to fix, not ours.
    std::fprintf(stderr, "soltune: error: %s: %s\n", e.path1().empty() ? "a path" : e.path1().c_str(),
                 e.code().message().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soltune: internal error: %s\n", e.what());
    return 3;
  }
}
