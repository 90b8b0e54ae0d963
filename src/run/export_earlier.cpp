#include "run/export_earlier.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "codegen/compiler.hpp"
#include "codegen/content_hash.hpp"
#include "codegen/machine_code.hpp"
#include "core/space.hpp"
#include "core/task.hpp"

namespace soltune {

std::map<std::pair<std::string, std::string>, ResultRecord> fastest_per_shape(const std::vector<ResultRecord>& rs,
                                                                            bool predicted_too) {
  std::map<std::pair<std::string, std::string>, ResultRecord> m;
  for (const auto& r : rs) {
    if (r.time_kind == "predicted" && !predicted_too) continue;
    auto [it, fresh] = m.emplace(std::pair{r.dtype, r.shape_key}, r);
    if (!fresh && r.time_us < it->second.time_us) it->second = r;
  }
  return m;
}

namespace {

// The variant of `spec` named `name`, or null where today's templates have none of that name.
const VariantSpec* variant_named(const ProblemSpec& spec, const std::string& name) {
  for (const auto& v : spec.variants)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

std::pair<std::vector<ResultRecord>, std::vector<ResultRecord>> split_measured_today(const KnowledgeBase& kb,
                                                                                    const ProblemSpec& spec,
                                                                                    std::vector<ResultRecord> earlier) {
  std::vector<ResultRecord> not_today, today;
  const auto gpus = kb.gpus();  // each lent card of a model is a row of its own: export groups by name
  for (auto& r : earlier) {
    const VariantSpec* v = variant_named(spec, r.variant);
    bool seen = false;
    if (v) {
      const Task t{&spec, v, parse_dtype(r.dtype), parse_shape(spec, r.shape_key)};
      for (const auto& g : gpus)
        if (!seen && g.device.name == r.gpu_name)
          seen = kb.evaluated_keys(g.id, t, content_hash(v->source)).count(r.config_key) > 0;
    }
    (seen ? today : not_today).push_back(std::move(r));
  }
  return {std::move(not_today), std::move(today)};
}

EarlierResults earlier_results_with_same_code(const KnowledgeBase& kb, const ProblemSpec& spec,
                                              std::vector<ResultRecord> candidates) {
  EarlierResults out;
  std::map<std::string, std::string> arch_of;  // GPU name -> sm_XY
  for (const auto& g : kb.gpus()) arch_of[g.device.name] = "sm_" + std::to_string(g.device.cc_major) + std::to_string(g.device.cc_minor);
  const auto archs = Compiler::supported_archs();
  // Two compiles per candidate, today's text first: requests[2i] and [2i + 1].
  std::vector<CompileRequest> requests;
  std::vector<ResultRecord> asked;
  std::set<std::string> unbuildable;
  for (auto& r : candidates) {
    const auto arch = arch_of.find(r.gpu_name);
    const auto old_text = kb.source(r.source_hash);
    if (arch == arch_of.end() || !old_text) continue;
    if (std::find(archs.begin(), archs.end(), arch->second) == archs.end()) {
      unbuildable.insert(arch->second);
      continue;
    }
    const VariantSpec* v = variant_named(spec, r.variant);
    if (!v) continue;
    std::vector<std::string> exprs, defines;
    try {  // a configuration today's knobs no longer describe cannot be today's kernel
      const auto config = Space(*v, Bindings{}).parse_key(r.config_key);
      const auto b = specialization_bindings(*v, config.values, parse_shape(spec, r.shape_key).dims);
      exprs = plan_name_expressions(*v, parse_dtype(r.dtype), b);
      defines = define_options(*v, parse_dtype(r.dtype), b);
    } catch (const Error&) {
      continue;
    }
    // The variant's own target where it names one (sm_90a for wgmma), as its candidates were built.
    const auto target = variant_arch(*v, arch->second);
    const auto file = v->source_path.filename().string();
    requests.push_back(CompileRequest{v->source, file, exprs, target, defines});
    requests.push_back(CompileRequest{*old_text, file, exprs, target, defines});
    asked.push_back(std::move(r));
  }
  if (!unbuildable.empty()) out.note = "this NVRTC cannot build for " + *unbuildable.begin();
  if (asked.empty()) return out;
  const Compiler compiler(default_compiler_options());
  const auto built = compiler.compile_all(requests);
  out.checked = asked.size();
  std::vector<ResultRecord> passed;
  for (size_t i = 0; i < asked.size(); ++i) {
    const auto& now = built[2 * i];
    const auto& then = built[2 * i + 1];
    if (now.ok && then.ok && same_machine_code(now.cubin, then.cubin)) passed.push_back(std::move(asked[i]));
  }
  for (auto& [key, r] : fastest_per_shape(passed, false)) out.same_code.push_back(std::move(r));
  return out;
}

}  // namespace soltune
