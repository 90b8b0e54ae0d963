#include "agents/strategies.hpp"

#include "agents/pool.hpp"
#include "search/baselines.hpp"

namespace soltune {

std::unique_ptr<Strategy> make_strategy(const std::string& name, const Space& s, const SearchOptions& o) {
  if (name == "soltune") return std::make_unique<AgentPool>(s, o);
  if (name == "explorer" || name == "tuner") return std::make_unique<AgentPool>(s, o, name);
  if (name == "evolutionary") return std::make_unique<EvolutionarySearch>(s, o);
  if (name == "random") return std::make_unique<RandomSearch>(s);
  if (name == "exhaustive") return std::make_unique<ExhaustiveSearch>(s);
  throw Error("unknown search strategy '" + name + "' (expected one of " + strategy_names() + ")");
}

}  // namespace soltune
