#pragma once
// The search space of one variant for one task: knobs, their legal values, the constraints, and a
// canonical key per configuration. The space owns legality and neighbourhoods; searchers only choose.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/rng.hpp"

namespace soltune {

// Knob values in the variant's knob order.
struct Config {
  std::vector<int64_t> values;
  auto operator<=>(const Config&) const = default;
};

class Space {
 public:
  // `fixed`: sizes, dtype_bytes and device symbols of the task.
  Space(const VariantSpec& v, Bindings fixed);

  const std::vector<KnobSpec>& knobs() const { return *knobs_; }
  const Bindings& fixed() const { return fixed_; }
  std::string key(const Config& c) const;          // "BLOCK=256,VEC=4" in knob order
  Config parse_key(const std::string& key) const;  // throws Error on a foreign key
  Bindings bind(const Config& c) const;             // fixed + knob values
  bool legal(const Config& c) const;                // every value listed and every constraint true
  std::string why_illegal(const Config& c) const;   // "" when legal
  // Why no configuration is legal here (space_empty.cpp): the first constraint that every
  // configuration meeting the constraints before it breaks, with its two sides where it compares,
  // at the configuration that comes nearest ("cols <= 512 * TPR fails for every TPR: at best
  // 1048576 > 524288 (TPR=1024)"). "" when one is legal. Looks at the first `limit` combinations.
  std::string why_empty(size_t limit = size_t{1} << 22) const;
  double cardinality() const;                        // product of value counts (before constraints)

  // A uniform legal sample: rejection first; where it fails, or where the space is sparse (below),
  // a uniform pick from the legal configurations, enumerated once and kept.
  std::optional<Config> sample(Rng& rng, int tries = 2000) const;
  // Whether under 0.5% of the value combinations are legal (a fixed probe with its own generator, so
  // the answer is the space's, whatever was drawn before): rejection would then cost hundreds of
  // legality checks per sample, and a search that draws many samples a round would stall.
  bool sparse() const;
  // A knob's values in numeric order: the search's notion of near, whatever order the template
  // lists them in. place(): a value's position in it, 0 to 1 (0 where the knob has one value).
  const std::vector<int64_t>& ordered(size_t knob) const { return ordered_[knob]; }
  double place(size_t knob, int64_t value) const;
  std::vector<Config> neighbours(const Config& c) const;  // legal one-knob steps to the next value up or down
  // Legal one-knob variants of c that give a knob a value outside `earlier` (knob -> the values an
  // earlier version of the template took): what that version's best could not try. Knobs `earlier`
  // does not name are left alone (nothing is known of them).
  std::vector<Config> with_new_values(const Config& c, const std::map<std::string, std::set<int64_t>>& earlier) const;
  Config mutate(const Config& c, Rng& rng, double rate) const;       // may be illegal
  Config crossover(const Config& a, const Config& b, Rng& rng) const;  // uniform, may be illegal
  // Nearest legal configuration to c (fewest knobs changed), or nullopt.
  std::optional<Config> repair(const Config& c, Rng& rng) const;
  std::vector<Config> enumerate_legal(size_t limit) const;  // in lexicographic index order
  const std::vector<Config>& all_legal() const;             // the same, every one, enumerated once
  // The variant's presets that name a listed value of every knob here and are legal, with their names.
  std::vector<std::pair<std::string, Config>> presets() const;

 private:
  Config draw(Rng& rng) const;  // one random value per knob, legal or not
  // Calls f on every combination of listed values, legal or not, in lexicographic index order,
  // until f returns false; returns whether every combination was seen.
  bool each_combination(const std::function<bool(const Config&)>& f) const;
  // Why a launch of c's plan could not start on the device the fixed bindings describe (threads per
  // block over max_block_threads, dynamic shared memory over smem_optin); "" where each could, or
  // where the bindings name no device.
  std::string over_device_limits(const Bindings& b) const;
  const VariantSpec* variant_;
  const std::vector<KnobSpec>* knobs_;
  const std::vector<Expr>* constraints_;
  const std::vector<Preset>* presets_;
  Bindings fixed_;
  std::vector<std::vector<int64_t>> ordered_;  // each knob's values, sorted
  mutable std::optional<std::vector<Config>> legal_;  // all_legal(), once asked for
  mutable std::optional<bool> sparse_;                // sparse(), once asked for
};

}  // namespace soltune
