#include "run/fallback_pick.hpp"

#include <set>

#include "codegen/content_hash.hpp"
#include "core/fallback.hpp"

namespace soltune {

std::vector<ResultRecord> fallback_picks(const KnowledgeBase& kb, const ProblemSpec& spec, DType t,
                                         const std::string& gpu_filter, bool predicted_too) {
  const VariantSpec* v = spec.fallback_variant();
  const auto cfg = v ? fallback_config(*v, t) : std::nullopt;
  if (!cfg) return {};
  std::vector<ResultRecord> out;
  std::set<std::vector<int64_t>> classes;
  // Fastest first: the first of each class is its pick.
  for (auto& r : kb.config_results(spec.name, v->name, std::string(dtype_name(t)), Space(*v, Bindings{}).key(*cfg),
                                   gpu_filter, content_hash(v->source)))
    if ((r.time_kind == "measured" || predicted_too) &&
        classes.insert(fallback_class(spec, *v, *cfg, parse_shape(spec, r.shape_key))).second)
      out.push_back(std::move(r));
  return out;
}

}  // namespace soltune
