#include "run/preflight.hpp"

#include <tbb/parallel_for.h>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "codegen/signature_check.hpp"
#include "core/array_file.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/space.hpp"
#include "core/task.hpp"

namespace soltune {

void check_given_data(const RunConfig& cfg) {
  std::string problems;
  std::set<std::string> seen;
  // Each file read once per dtype: its element count, or why it cannot be read as that dtype.
  std::map<std::pair<std::string, DType>, std::pair<int64_t, std::string>> files;
  for (const auto& t : config_tasks(cfg))
    for (const auto& a : t.problem->args) {
      if (a.file.empty()) continue;
      const DType dt = a.resolve_dtype(t.dtype);
      auto [it, fresh] = files.try_emplace({a.file.string(), dt});
      if (fresh) {
        try {
          it->second.first = read_array_file(a.file, a.file_raw, dt).elems;
        } catch (const Error& e) {
          it->second.second = e.what();
        }
      }
      Bindings sizes;
      for (const auto& [name, value] : t.shape.dims) sizes[name] = static_cast<double>(value);
      const int64_t want = buffer_elements(a, sizes);
      const auto& [elems, error] = it->second;
      const std::string why = !error.empty() ? error
                              : elems != want ? a.file.string() + ": " + std::to_string(elems) + " elements, '" + a.name +
                                                    "' needs " + std::to_string(want) + " at " + t.shape.key()
                                              : "";
      if (!why.empty() && seen.insert(why).second) problems += "\n" + why + " (" + t.id() + ")";
    }
  if (!problems.empty()) throw Error("arguments given as files do not fit the tasks:" + problems);
}

void check_device_memory(const RunConfig& cfg, const DeviceInfo& d) {
  if (d.mem_bytes <= 0) return;
  std::string problems;
  std::set<std::string> seen;
  for (const auto& t : config_tasks(cfg)) {
    const double need = task_device_bytes(t, cfg.timing.input_sets);
    const std::string what = t.shape.key() + " " + std::string(dtype_name(t.dtype));
    if (need <= 0.9 * static_cast<double>(d.mem_bytes) || !seen.insert(what).second) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf, "\n%s needs %.1f GiB for its buffers, the reference's and the baseline's", what.c_str(),
                  need / (1 << 30));
    problems += buf;
  }
  if (!problems.empty()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: shapes too large for the %s (%.1f GiB, of which 90%% may hold a task):",
                  cfg.path.string().c_str(), d.name.c_str(), static_cast<double>(d.mem_bytes) / (1 << 30));
    throw Error(buf + problems);
  }
}

void check_kernel_signatures(const RunConfig& cfg, const Compiler& compiler, const DeviceInfo& device,
                             std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::set<std::pair<const VariantSpec*, DType>> done;
  std::vector<Task> checked;
  for (const auto& t : config_tasks(cfg))
    if (done.insert({t.variant, t.dtype}).second) checked.push_back(t);
  // One compile per variant and dtype, all at once: a run's budget counts from its start, and a
  // Hopper template's compile takes seconds.
  std::vector<std::string> found(checked.size());
  tbb::parallel_for(size_t{0}, checked.size(), [&](size_t i) {
    const Task& t = checked[i];
    const Space space(*t.variant, t.fixed(device));
    Rng rng(cfg.seed);
    const auto c = space.sample(rng);
    if (!c) return;  // no legal configuration here: the task says so itself
    const std::string arch = variant_arch(*t.variant, cfg.arch == "auto" ? device.arch() : cfg.arch);
    found[i] = check_signatures(compiler, *t.problem, *t.variant, t.dtype, space.bind(*c), arch, deadline);
  });
  std::string problems;
  for (size_t i = 0; i < checked.size(); ++i) {
    std::istringstream lines(found[i]);
    for (std::string line; std::getline(lines, line);)
      problems += "\n" + line + " (variant " + checked[i].variant->name + ", " + std::string(dtype_name(checked[i].dtype)) + ")";
  }
  if (!problems.empty())
    throw Error("kernel parameters do not take what the variants pass them (fix the kernel or the variant's args):" +
                problems);
}

}  // namespace soltune
