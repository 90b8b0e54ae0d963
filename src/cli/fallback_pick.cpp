#include "cli/fallback_pick.hpp"

#include "codegen/content_hash.hpp"
#include "core/fallback.hpp"

namespace soltune::cli {

std::optional<ResultRecord> fallback_pick(const KnowledgeBase& kb, const ProblemSpec& spec, DType t,
                                          const std::string& gpu_filter, bool predicted_too) {
  const VariantSpec* v = spec.fallback_variant();
  const auto cfg = v ? fallback_config(*v, t) : std::nullopt;
  if (!cfg) return std::nullopt;
  const auto found = kb.config_results(spec.name, v->name, std::string(dtype_name(t)), Space(*v, Bindings{}).key(*cfg),
                                       gpu_filter, content_hash(v->source));
  if (found.empty() || (found.front().time_kind != "measured" && !predicted_too)) return std::nullopt;
  return found.front();
}

}  // namespace soltune::cli
