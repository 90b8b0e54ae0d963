#pragma once
// Builds a search by name (a config's search: strategy:, bench-search's strategies).
#include <memory>
#include <string>

#include "core/run_config.hpp"
#include "search/strategy.hpp"

namespace soltune {

// soltune (the agent pool), explorer or tuner (one agent alone), evolutionary, random, exhaustive.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const Space& s, const SearchOptions& o);

}  // namespace soltune
