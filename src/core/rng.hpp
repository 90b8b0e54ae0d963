#pragma once
// Seeded randomness with results that do not depend on the standard library's distributions
// (which differ between implementations): a seed in, the same proposals out, everywhere.
#include <cstdint>
#include <random>
#include <sstream>
#include <string>

namespace soltune {

class Rng {
 public:
  explicit Rng(uint64_t seed) : eng_(seed) {}
  uint64_t next() { return eng_(); }
  // Uniform in [0, n) by rejection, so every value is equally likely.
  uint64_t below(uint64_t n) {
    if (n <= 1) return 0;
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = eng_(); while (x >= limit);
    return x % n;
  }
  double uniform() { return static_cast<double>(eng_() >> 11) * (1.0 / 9007199254740992.0); }
  bool chance(double p) { return uniform() < p; }
  // The generator's full state as text (checkpoints): the same state, the same numbers after it.
  std::string state() const {
    std::ostringstream s;
    s << eng_;
    return s.str();
  }
  // A derived seed for a sub-stream (a task, an input draw), stable across runs.
  static uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::mt19937_64 eng_;
};

}  // namespace soltune
