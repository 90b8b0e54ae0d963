#pragma once
// The archivist: what is known of a task before its search. From the run's archive (the knowledge
// base) it takes the keys evaluated already (failures included: never proposed again) and the seeds
// (the best configurations of the same template at the nearest shapes and on other GPUs); from the
// template its presets (known designs), the fallback first. The funnel (search/tune_task.hpp)
// proposes the seeds first; the archivist's writes reach the knowledge base through the run's
// TaskObserver as each result completes.
#include <optional>

#include "agents/archive.hpp"
#include "core/space.hpp"

namespace soltune {

// The task's prior: the fallback preset, then the archive's seeds that fit the variant's knobs,
// then the template's other presets; reported through archive.on_seeds. nullopt: a fallback-only
// task with nothing to do (no fallback, or one measured before).
std::optional<SearchPrior> archivist_prior(Archive& archive, const Task& t, const Space& space);

}  // namespace soltune
