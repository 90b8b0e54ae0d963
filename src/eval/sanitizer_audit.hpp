#pragma once
// The audit of a tuned kernel under compute-sanitizer (memcheck, racecheck, synccheck, initcheck):
// for each tool, a GPU worker runs inside the sanitizer and runs the kernel's first correctness
// round once, nothing timed. Findings count against the kernel only where they name one of its
// own kernels: memcheck, racecheck and synccheck check nothing else (the sanitizer's kernel filter,
// by lowered name); initcheck checks every kernel, since a write it did not watch (soltune's fill
// of the inputs) would make every read of the data look uninitialized. The caller holds the GPU's
// lock.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"
#include "core/audit.hpp"
#include "core/task.hpp"
#include "eval/worker_evaluator.hpp"

namespace soltune {

// $SOLTUNE_COMPUTE_SANITIZER if set (a path that must exist), else compute-sanitizer on PATH,
// under $CUDA_HOME/bin, or /usr/local/cuda/bin. nullopt when there is none.
std::optional<std::filesystem::path> find_compute_sanitizer();

// One finding of a sanitizer's log: its lines (host backtraces left out) and the kernel it names
// (the mangled name before "+0x" on its first "at" line; "" for none, e.g. an API error).
struct SanitizerFinding {
  std::vector<std::string> lines;
  std::string kernel;
};

// What a sanitizer's log (run with --demangle no) says.
struct SanitizerReport {
  int errors = 0;
  int warnings = 0;      // racecheck's warnings (possible hazards it does not count as errors)
  bool summary = false;  // the log ended with the tool's summary line
  std::vector<SanitizerFinding> findings;  // as printed (the sanitizer stops printing at its print limit)
};
SanitizerReport parse_sanitizer_log(const std::string& text);

// The findings as text, at most max_lines lines, mangled names demangled.
inline constexpr int kMaxFindingLines = 24;
std::string findings_text(const std::vector<SanitizerFinding>& fs, int max_lines = kMaxFindingLines);

struct AuditOptions {
  std::filesystem::path sanitizer;
  std::vector<std::string> tools = sanitizer_tools();
  WorkerOptions worker;    // the worker as the tuner runs it; its lock is ignored
  double timeout_s = 900;  // per tool: a sanitizer slows what it checks 10-1000x
};

// One verdict per tool, in o.tools order. The worker's device is d.
std::vector<ToolAudit> audit_kernel(const Compiler& c, const AuditOptions& o, const DeviceInfo& d, const Task& t,
                                    const Config& config);

}  // namespace soltune
