#include "codegen/compiler.hpp"

#include <cuda.h>  // CUDA_VERSION: the NVRTC header's version
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <new>

#include "codegen/nvrtc_cache.hpp"
#include "codegen/nvrtc_program.hpp"
#include "codegen/nvrtc_worker.hpp"
#include "codegen/nvrtc_worker_pool.hpp"
#include "codegen/ptxas_report.hpp"
#include "core/error.hpp"

namespace soltune {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void append_line(std::string& log, const std::string& line) {
  if (!log.empty() && log.back() != '\n') log += '\n';
  log += line;
  log += '\n';
}

}  // namespace

Compiler::Compiler(CompilerOptions o) : opts_(std::move(o)) {
  if (!opts_.cache_dir.empty()) cache_ = std::make_unique<NvrtcCache>(opts_.cache_dir);
  if (opts_.timeout_s > 0 && !opts_.isolate_command.empty())
    pool_ = std::make_unique<NvrtcWorkerPool>(opts_.isolate_command, opts_.timeout_s);
}
Compiler::~Compiler() = default;
Compiler::Compiler(Compiler&&) noexcept = default;
Compiler& Compiler::operator=(Compiler&&) noexcept = default;

int Compiler::nvrtc_version() {
  static const int v = [] {
    int major = 0, minor = 0;
    nvrtc_check(nvrtcVersion(&major, &minor), "nvrtcVersion");
    return major * 1000 + minor * 10;  // the CUDA_VERSION convention: 12.4 -> 12040
  }();
  return v;
}

bool Compiler::supports_auto_pch() {
#if CUDA_VERSION >= 12080
  return nvrtc_version() >= 12080;
#else
  return false;  // built against headers without the PCH API
#endif
}

size_t Compiler::compile_workers_started() const { return pool_ ? pool_->started() : 0; }

std::vector<std::string> Compiler::supported_archs() {
  int n = 0;
  nvrtc_check(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(n));
  if (n > 0) nvrtc_check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  std::vector<std::string> out;
  for (int a : archs) out.push_back("sm_" + std::to_string(a));
  return out;
}

std::vector<std::string> Compiler::nvrtc_options(const CompileRequest& r) const {
  std::vector<std::string> o = {"--gpu-architecture=" + r.arch, "--std=c++17", "--ptxas-options=-v",
                                "-lineinfo"};
  // NVRTC 12.9+ keeps compiled code in the driver's compute cache (~/.nv/ComputeCache) where a driver
  // is installed; a hit skips ptxas and returns an empty log, so the -v report (registers, spills)
  // was missing for 20% of a tune's candidates on the H200. soltune caches compiles itself, logs included.
  if (nvrtc_version() >= 12090) o.push_back("--no-cache");
  // Automatic PCH only in workers: they are single-threaded and live for many compiles (the PCH
  // lives in the process). Same code either way (pch_test.cpp); quiet, so the log is as without it.
  if (pool_ && supports_auto_pch()) o.insert(o.end(), {"-pch", "-pch-messages=false", "-pch-verbose=false"});
  for (const auto& d : opts_.include_dirs) o.push_back("--include-path=" + d);
  o.insert(o.end(), r.extra_options.begin(), r.extra_options.end());  // last, so they can override
  return o;
}

CompileResult nvrtc_compile(const CompileRequest& r, const std::vector<std::string>& options) {
  CompileResult res;
  NvrtcProgram prog(r.source, r.source_name.empty() ? "source.cu" : r.source_name);
  for (const auto& n : r.name_expressions) prog.add_name_expression(n);
  const nvrtcResult rc = prog.compile(options);
  if (std::find(options.begin(), options.end(), "-pch") != options.end()) prog.grow_pch_heap_if_exhausted();
  res.log = prog.log();
  if (rc != NVRTC_SUCCESS) {  // the source or an option was rejected: the log says why
    if (res.log.empty()) append_line(res.log, std::string("nvrtcCompileProgram: ") + nvrtcGetErrorString(rc));
    return res;
  }
  res.cubin = prog.cubin();
  if (res.cubin.empty()) {
    append_line(res.log, "soltune: NVRTC produced no CUBIN; arch must be a real architecture such as "
                         "sm_90, got '" + r.arch + "'");
    return res;
  }
  const auto report = parse_ptxas_report(res.log);
  for (const auto& n : r.name_expressions) {
    CompiledKernel k{n, {}, {}};
    try {
      k.lowered_name = prog.lowered_name(n);
    } catch (const Error& e) {  // a name expression that compiles but names nothing: the request's fault
      append_line(res.log, std::string("soltune: ") + e.what());
      res.kernels.clear();
      res.cubin.clear();
      return res;
    }
    if (auto it = report.find(k.lowered_name); it != report.end()) k.res = it->second;
    res.kernels.push_back(std::move(k));
  }
  res.ok = true;
  return res;
}

CompileResult Compiler::compile(const CompileRequest& r) const {
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const auto options = nvrtc_options(r);
    const std::string key = nvrtc_cache_key(r, options, nvrtc_version());
    if (cache_) {
      auto hit = cache_->load(key);
      if (hit && (!hit->ok || hit->kernels.size() == r.name_expressions.size())) {
        hit->cache_hit = true;
        hit->ms = ms_since(t0);
        return std::move(*hit);
      }
    }
    CompileResult res;
    bool cacheable = true;  // a killed or crashed compile says nothing about the source
    if (pool_) {
      const double limit = pool_->limit_s();
      // Until the run's deadline at most, where it comes first: a compile still running then is
      // abandoned, not retried.
      const double left = r.deadline ? std::chrono::duration<double>(*r.deadline - std::chrono::steady_clock::now()).count() : limit;
      const bool by_deadline = left < limit;
      auto iso = left > 0 ? pool_->compile(r, options, std::min(limit, left)) : IsolatedCompile{{}, false, true};
      if (iso.timed_out && by_deadline) {
        CompileResult stopped;
        stopped.abandoned = true;
        stopped.log = "compile stopped at the run's deadline (the budget ended while it ran)";
        stopped.key = key;
        stopped.ms = ms_since(t0);
        return stopped;
      }
      if (iso.timed_out) {  // once more with room: a busy machine, or a compile that never ends
        auto again = pool_->compile(r, options, 2 * limit);
        if (again.timed_out) again.res.log = iso.res.log + again.res.log;
        iso = std::move(again);
      }
      res = std::move(iso.res);
      res.timed_out = iso.timed_out;
      cacheable = iso.cacheable;
    } else {
      res = nvrtc_compile(r, options);
    }
    res.key = key;
    res.ms = ms_since(t0);
    if (cache_ && cacheable) {
      cache_->store(res);
      if (const std::string note = cache_->take_note(); !note.empty()) append_line(res.log, note);
    }
    return res;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("compiling " + r.source_name + ": out of memory");
  } catch (const std::exception& e) {
    throw Error("compiling " + r.source_name + ": " + e.what());
  }
}

std::vector<CompileResult> Compiler::compile_all(const std::vector<CompileRequest>& rs) const {
  std::vector<CompileResult> out(rs.size());
  std::vector<std::exception_ptr> errors(rs.size());
  std::atomic<bool> failed{false};
  // One request per task: compiles are long and uneven, so no chunking.
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, rs.size(), 1),
      [&](const tbb::blocked_range<size_t>& range) {
        for (size_t i = range.begin(); i != range.end(); ++i) {
          if (failed.load()) return;  // the batch is lost anyway: stop starting new compiles
          try {
            out[i] = compile(rs[i]);
          } catch (const Error&) {
            errors[i] = std::current_exception();
            failed = true;
          } catch (...) {  // compile() converts everything to Error; this is the last guard
            errors[i] =
                std::make_exception_ptr(Error("compiling " + rs[i].source_name + ": unknown exception"));
            failed = true;
          }
        }
      },
      tbb::simple_partitioner());
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace soltune
