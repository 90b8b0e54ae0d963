#include "search/population.hpp"

#include <algorithm>

namespace soltune {

int Population::admit(const EvalResult& r) {
  const auto at = std::upper_bound(elite.begin(), elite.end(), r.time.median_us,
                                   [](double t, const EvalResult& e) { return t < e.time.median_us; });
  const auto rank = static_cast<size_t>(at - elite.begin());
  if (rank >= capacity) return -1;
  if (rank == 0) ++improvements;
  elite.insert(at, r);
  if (elite.size() > capacity) elite.pop_back();
  return static_cast<int>(rank);
}

}  // namespace soltune
