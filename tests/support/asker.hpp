#pragma once
// A strategy asked as the funnel (search/tune_task.hpp) asks it, for tests that drive one directly:
// each proposal must be legal, new and distinct (the test fails otherwise), and what is taken is
// seen from then on.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "search/strategy.hpp"

namespace soltune::test {

struct Asker {
  const Space& space;
  std::set<std::string> seen = {};  // known before, then every proposal
  int64_t proposed = 0;
  std::vector<std::string> by = {};  // what proposed each configuration of the last ask

  std::vector<Config> ask(Strategy& s, size_t n, Rng& rng) {
    std::vector<Config> out;
    by.clear();
    for (auto& p : s.ask(n, AskState{seen, proposed}, rng)) {
      EXPECT_TRUE(space.legal(p.config)) << space.key(p.config) << ": " << space.why_illegal(p.config);
      EXPECT_TRUE(seen.insert(space.key(p.config)).second) << "proposed twice or known: " << space.key(p.config);
      out.push_back(std::move(p.config));
      by.push_back(std::move(p.by));
      ++proposed;
    }
    EXPECT_LE(out.size(), n);
    return out;
  }
};

}  // namespace soltune::test
