#include "agents/archivist.hpp"

#include "core/error.hpp"

namespace soltune {

std::optional<SearchPrior> archivist_prior(Archive& archive, const Task& t, const Space& space) {
  SearchPrior prior;
  prior.known = archive.known(t);
  // The fallback first, before what the knowledge base suggests: every search of its variant
  // measures it. A fallback-only task ends there, or never starts when it was measured before.
  const auto presets = space.presets();
  const bool has_fallback = !presets.empty() && presets.front().first == "fallback";
  if (t.fallback_only && (!has_fallback || prior.known.count(space.key(presets.front().second)))) return std::nullopt;
  if (has_fallback) prior.seeds.push_back({presets.front().second, "archivist.preset"});
  size_t used = 0;
  if (!t.fallback_only) {
    for (const auto& key : archive.seeds(t)) {
      try {
        prior.seeds.push_back({space.parse_key(key), "archivist.seed"});
        ++used;
      } catch (const Error&) {
        // A key that does not fit this variant's knobs: not a seed for it.
      }
    }
    // The template's presets (the known designs) after what the knowledge base suggests.
    for (size_t i = has_fallback ? 1 : 0; i < presets.size(); ++i) prior.seeds.push_back({presets[i].second, "archivist.preset"});
  }
  if (used || !presets.empty()) archive.on_seeds(t, used, t.fallback_only ? 1 : presets.size());
  return prior;
}

}  // namespace soltune
