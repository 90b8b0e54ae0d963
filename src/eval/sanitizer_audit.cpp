#include "eval/sanitizer_audit.hpp"

#include <unistd.h>

#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/cuda_tools.hpp"
#include "core/error.hpp"
#include "eval/candidates.hpp"

namespace soltune {

std::optional<std::filesystem::path> find_compute_sanitizer() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("SOLTUNE_COMPUTE_SANITIZER"); env && *env) {
    if (fs::exists(env)) return fs::path(env);
    return std::nullopt;  // named but absent: not silently another one
  }
  return find_cuda_tool("compute-sanitizer");
}

SanitizerReport parse_sanitizer_log(const std::string& text) {
  static const std::regex errors_line(R"(ERROR SUMMARY: (\d+) error)");
  static const std::regex race_line(R"(RACECHECK SUMMARY: .*\((\d+) errors?, (\d+) warnings?\))");
  static const std::regex at_kernel(R"(\bat (\S+?)\+0x)");
  SanitizerReport r;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, errors_line)) {
      r.errors = std::max(r.errors, std::stoi(m[1]));
      r.summary = true;
      continue;
    }
    if (std::regex_search(line, m, race_line)) {
      r.errors = std::max(r.errors, std::stoi(m[1]));
      r.warnings = std::stoi(m[2]);
      r.summary = true;
      continue;
    }
    // "=========" prefixes every line: one space after it opens a finding, more continue one.
    if (line.rfind("=========", 0) != 0) continue;
    const std::string rest = line.substr(9);
    const auto body = rest.find_first_not_of(' ');
    if (body == std::string::npos) continue;
    const std::string what = rest.substr(body);
    if (what.rfind("COMPUTE-SANITIZER", 0) == 0) continue;
    // The host side of a finding (soltune's own frames) says nothing about the kernel.
    if (what.rfind("Saved host backtrace", 0) == 0 || what.rfind("Host Frame", 0) == 0) continue;
    if (body == 1 || r.findings.empty()) r.findings.emplace_back();
    auto& f = r.findings.back();
    f.lines.push_back(what);
    if (f.kernel.empty() && std::regex_search(what, m, at_kernel)) f.kernel = m[1];
  }
  return r;
}

std::string findings_text(const std::vector<SanitizerFinding>& fs, int max_lines) {
  static const std::regex mangled(R"(_Z[A-Za-z0-9_]+)");
  std::string out;
  int n = 0;
  for (const auto& f : fs)
    for (const auto& line : f.lines) {
      if (n++ == max_lines) return out;
      std::string readable;
      auto from = line.cbegin();
      for (std::sregex_iterator it(line.begin(), line.end(), mangled), end; it != end; ++it) {
        readable.append(from, line.cbegin() + it->position());
        int status = 0;
        char* d = abi::__cxa_demangle(it->str().c_str(), nullptr, nullptr, &status);
        readable += status == 0 && d ? d : it->str();
        std::free(d);
        from = line.cbegin() + it->position() + it->length();
      }
      readable.append(from, line.cend());
      out += (out.empty() ? "" : "\n") + readable;
    }
  return out;
}

namespace {

std::filesystem::path log_path() {
  static std::atomic<int> n{0};
  return std::filesystem::temp_directory_path() /
         ("soltune-audit-" + std::to_string(getpid()) + "-" + std::to_string(n++) + ".log");
}

std::string read_and_remove(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::error_code ec;
  std::filesystem::remove(p, ec);
  return text;
}

std::vector<ToolAudit> none_audited(const std::vector<std::string>& tools, const std::string& why) {
  std::vector<ToolAudit> out;
  for (const auto& tool : tools) out.push_back({tool, AuditVerdict::not_audited, 0, why});
  return out;
}

// The kernels of the candidate's plan, as the sanitizer's filter names them ("" and why if none).
std::vector<std::string> lowered_names(const Compiler& c, const DeviceInfo& d, const std::string& arch, const Task& t,
                                       const Config& config, std::string& why) {
  auto batch = prepare_candidates(t, d, arch, {config});
  auto& cand = batch.candidates.front();
  if (cand.request < 0) {
    why = "not a legal configuration here: " + cand.result.log;
    return {};
  }
  const auto r = c.compile_all(batch.requests);
  if (!take_compile_result(cand, r[static_cast<size_t>(cand.request)])) {
    why = "does not compile: " + cand.result.log;
    return {};
  }
  std::vector<std::string> names;
  for (const auto& k : r[static_cast<size_t>(cand.request)].kernels) names.push_back(k.lowered_name);
  return names;
}

// initcheck must watch every kernel (the header says why); its findings are told apart by kernel.
bool checks_every_kernel(const std::string& tool) { return tool == "initcheck"; }

ToolAudit run_tool(const Compiler& c, const AuditOptions& o, const std::string& tool,
                   const std::vector<std::string>& kernels, const Task& t, const Config& config) {
  ToolAudit a{tool, AuditVerdict::not_audited, 0, ""};
  const auto log = log_path();
  WorkerOptions w = o.worker;
  // Mangled names in the log, to tell the kernel's findings from others'; API errors are
  // soltune's own calls (some fail by design, e.g. a launch the device refuses).
  w.command = {o.sanitizer.string(), "--tool", tool, "--error-exitcode", "86", "--log-file", log.string(),
               "--print-limit", "20", "--show-backtrace", "device", "--check-exit-code", "no",
               "--destroy-on-device-error", "kernel", "--report-api-errors", "no", "--demangle", "no"};
  if (!checks_every_kernel(tool))
    for (const auto& k : kernels) {
      w.command.push_back("--kernel-name");
      w.command.push_back("kne=" + k);
    }
  for (auto arg : o.worker.command) {
    // Inside the sanitizer, /proc/self/exe would be the sanitizer.
    if (arg == "/proc/self/exe") arg = std::filesystem::read_symlink("/proc/self/exe").string();
    w.command.push_back(arg);
  }
  w.eval.measure_ceilings = false;
  w.lock_key.clear();
  w.timeout_cap_s = o.timeout_s;
  w.start_timeout_s = std::max(w.start_timeout_s, 300.0);
  w.max_restarts_in_a_row = 1;
  EvalResult res;
  std::string ended;
  try {
    WorkerEvaluator ev(c, w);
    res = ev.check(t, config);
    ended = ev.finish(o.timeout_s);
  } catch (const Error& e) {
    const auto rep = parse_sanitizer_log(read_and_remove(log));
    a.log = std::string("the worker did not run under ") + tool + ": " + e.what() +
            (rep.findings.empty() ? "" : "\n" + findings_text(rep.findings));
    return a;
  }
  const auto rep = parse_sanitizer_log(read_and_remove(log));
  std::vector<SanitizerFinding> own, others;
  for (const auto& f : rep.findings) {
    if (f.kernel.empty()) continue;
    (std::find(kernels.begin(), kernels.end(), f.kernel) != kernels.end() ? own : others).push_back(f);
  }
  if (!own.empty() || (rep.errors > 0 && others.empty())) {
    a.verdict = AuditVerdict::failed;
    a.errors = others.empty() ? rep.errors : static_cast<int>(own.size());
    a.log = std::to_string(a.errors) + " error(s)" + (rep.findings.empty() ? "" : ":\n" + findings_text(own.empty() ? rep.findings : own));
  } else if (!others.empty()) {
    // Not the kernel's finding, and a kernel of soltune's that trips the tool hides what it would show.
    a.log = "soltune's own kernel tripped " + tool + " (not the audited kernel's finding):\n" + findings_text(others);
  } else if (res.status == Status::wrong_answer || res.status == Status::fault) {
    a.verdict = AuditVerdict::failed;  // wrong or faulting under the tool, which serializes and slows what it checks
    a.log = std::string(status_name(res.status)) + " under " + tool + ": " + res.log;
  } else if (res.status == Status::ok && rep.summary && ended == "exit code 0") {
    a.verdict = AuditVerdict::passed;
    a.log = rep.warnings ? std::to_string(rep.warnings) + " warning(s):\n" + findings_text(rep.findings) : "";
  } else {
    a.log = std::string(status_name(res.status)) + " (" + res.log + "); the sanitizer " +
            (rep.summary ? "reported no error" : "gave no summary") + "; the worker ended with " + ended;
  }
  return a;
}

}  // namespace

std::vector<ToolAudit> audit_kernel(const Compiler& c, const AuditOptions& o, const DeviceInfo& d, const Task& t,
                                    const Config& config) {
  if (o.sanitizer.empty()) return none_audited(o.tools, "compute-sanitizer not found");
  const std::string arch = o.worker.arch == "auto" ? d.arch() : o.worker.arch;
  std::string why;
  const auto kernels = lowered_names(c, d, arch, t, config, why);
  if (kernels.empty()) return none_audited(o.tools, why.empty() ? "no kernel to check" : why);
  std::vector<ToolAudit> out;
  for (const auto& tool : o.tools) out.push_back(run_tool(c, o, tool, kernels, t, config));
  return out;
}

}  // namespace soltune
