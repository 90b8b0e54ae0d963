// The search space of the real gelu `vectorized` variant: keys, legality, sampling, neighbourhoods,
// repair and enumeration.
#include "core/space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/device.hpp"
#include "core/task.hpp"

namespace soltune {
namespace {

class GeluSpace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    spec_ = new ProblemSpec(load_problem(SOLTUNE_SOURCE_DIR "/templates", "gelu"));
  }
  static void TearDownTestSuite() {
    delete spec_;
    spec_ = nullptr;
  }

  const VariantSpec& variant() const { return spec_->variant("vectorized"); }
  Space space(DType t, int64_t n = 1000003) const {
    Task task{spec_, &variant(), t, Shape{{{"n", n}}}};
    return Space(variant(), task.fixed(*find_known_gpu("H200")));
  }
  // A config by knob name; knobs not named keep the first listed value.
  Config config(const Space& s, const std::map<std::string, int64_t>& v) const {
    Config c;
    for (const auto& k : s.knobs()) c.values.push_back(v.count(k.name) ? v.at(k.name) : k.values.front());
    return c;
  }
  static int differing(const Config& a, const Config& b) {
    int d = 0;
    for (size_t i = 0; i < a.values.size(); ++i) d += a.values[i] != b.values[i];
    return d;
  }

  static ProblemSpec* spec_;
};
ProblemSpec* GeluSpace::spec_ = nullptr;

TEST_F(GeluSpace, KnobsInFileOrder) {
  const auto s = space(DType::f32);
  std::vector<std::string> names;
  for (const auto& k : s.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"BLOCK", "VEC", "EPT", "GRID_STRIDE", "BLOCKS_PER_SM", "FAST_TANH",
                                             "CACHE_HINT"}));
  EXPECT_EQ(s.cardinality(), 5.0 * 4 * 4 * 2 * 5 * 2 * 2);
  EXPECT_EQ(s.fixed().at("n"), 1000003);
  EXPECT_EQ(s.fixed().at("dtype_bytes"), 4);
  EXPECT_EQ(s.fixed().at("sms"), find_known_gpu("H200")->sms);
}

TEST_F(GeluSpace, KeyRoundTrip) {
  const auto s = space(DType::bf16);
  const auto c = config(s, {{"BLOCK", 256}, {"VEC", 8}, {"EPT", 4}, {"GRID_STRIDE", 1}, {"BLOCKS_PER_SM", 4},
                            {"FAST_TANH", 1}, {"CACHE_HINT", 1}});
  const auto key = s.key(c);
  EXPECT_EQ(key, "BLOCK=256,VEC=8,EPT=4,GRID_STRIDE=1,BLOCKS_PER_SM=4,FAST_TANH=1,CACHE_HINT=1");
  EXPECT_EQ(s.parse_key(key), c);
  for (const auto& e : s.enumerate_legal(300)) EXPECT_EQ(s.parse_key(s.key(e)), e);
  // Foreign keys: wrong order, missing or extra knobs, junk values.
  EXPECT_THROW(s.parse_key("VEC=8,BLOCK=256,EPT=4,GRID_STRIDE=1,BLOCKS_PER_SM=4,FAST_TANH=1,CACHE_HINT=1"), Error);
  EXPECT_THROW(s.parse_key("BLOCK=256,VEC=8"), Error);
  EXPECT_THROW(s.parse_key(key + ",EXTRA=1"), Error);
  EXPECT_THROW(s.parse_key("BLOCK=abc,VEC=8,EPT=4,GRID_STRIDE=1,BLOCKS_PER_SM=4,FAST_TANH=1,CACHE_HINT=1"), Error);
  EXPECT_THROW(s.parse_key("BLOCK=256x,VEC=8,EPT=4,GRID_STRIDE=1,BLOCKS_PER_SM=4,FAST_TANH=1,CACHE_HINT=1"), Error);
  EXPECT_THROW(s.parse_key(""), Error);
}

// Shape and configuration keys share one form and one reader.
TEST(Keys, ShapeAndConfigurationKeysReadTheSameWay) {
  using Parts = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(key_values("m=4096,n=1024,k=-3"), (Parts{{"m", 4096}, {"n", 1024}, {"k", -3}}));
  EXPECT_EQ(key_values(""), Parts{});
  for (const char* bad : {"m", "m=", "=4", "m=4x", "m=4,n", "m=4.5", "m=99999999999999999999"})
    EXPECT_EQ(key_values(bad), std::nullopt) << bad;
}

TEST_F(GeluSpace, ConstrainedConfigsAreIllegal) {
  const auto f32 = space(DType::f32), bf16 = space(DType::bf16);
  const auto vec8 = config(f32, {{"BLOCK", 256}, {"VEC", 8}});
  EXPECT_FALSE(f32.legal(vec8));  // 8 x 4 bytes > 16
  EXPECT_NE(f32.why_illegal(vec8).find("VEC * dtype_bytes <= 16"), std::string::npos) << f32.why_illegal(vec8);
  EXPECT_TRUE(bf16.legal(vec8));  // 8 x 2 bytes = 16
  EXPECT_TRUE(f32.legal(config(f32, {{"VEC", 4}})));

  // BLOCKS_PER_SM means nothing in one-pass mode.
  EXPECT_FALSE(f32.legal(config(f32, {{"GRID_STRIDE", 0}, {"BLOCKS_PER_SM", 4}})));
  EXPECT_TRUE(f32.legal(config(f32, {{"GRID_STRIDE", 1}, {"BLOCKS_PER_SM", 4}})));
  // The approximate tanh is for bf16 only.
  EXPECT_FALSE(f32.legal(config(f32, {{"FAST_TANH", 1}})));
  EXPECT_TRUE(bf16.legal(config(bf16, {{"FAST_TANH", 1}})));
  // Values that are not listed, and configs of the wrong length.
  EXPECT_FALSE(f32.legal(config(f32, {{"BLOCK", 96}})));
  EXPECT_NE(f32.why_illegal(config(f32, {{"BLOCK", 96}})).find("BLOCK=96"), std::string::npos);
  EXPECT_FALSE(f32.legal(Config{{256, 4}}));
  EXPECT_EQ(f32.why_illegal(config(f32, {})), "");

  // One pass over 2^40 elements with tiles of 64 elements needs more than 2^31 - 1 blocks.
  const auto huge = space(DType::f32, int64_t{1} << 40);
  EXPECT_FALSE(huge.legal(config(huge, {{"BLOCK", 64}, {"VEC", 1}, {"EPT", 1}, {"GRID_STRIDE", 0}})));
  EXPECT_TRUE(huge.legal(config(huge, {{"BLOCK", 64}, {"VEC", 1}, {"EPT", 1}, {"GRID_STRIDE", 1}})));
}

// A configuration whose launch could not start on the device is not legal: threads per block over
// the device's limit (here a device of 512), counted out of the legal set, with the reason.
TEST_F(GeluSpace, LaunchesOverTheDevicesThreadLimitAreIllegal) {
  DeviceInfo small = *find_known_gpu("H200");
  small.max_threads_per_block = 512;
  Task task{spec_, &variant(), DType::f32, Shape{{{"n", 1000003}}}};
  const Space limited(variant(), task.fixed(small)), full = space(DType::f32);
  const auto big = config(full, {{"BLOCK", 1024}, {"VEC", 4}});
  EXPECT_TRUE(full.legal(big));
  EXPECT_EQ(limited.why_illegal(big), "launch of 'gelu_tanh' has 1024 threads a block, over the device's 512");
  EXPECT_LT(limited.all_legal().size(), full.all_legal().size());
  for (const auto& c : limited.all_legal()) EXPECT_LE(c.values[0], 512) << limited.key(c);
  // Without a device in the bindings (a key parsed for export), no limit applies.
  EXPECT_TRUE(Space(variant(), Bindings{{"n", 1000003}, {"dtype_bytes", 4}, {"sms", 132}}).legal(big));
}

TEST_F(GeluSpace, SamplesAreAlwaysLegal) {
  for (auto t : {DType::f32, DType::bf16}) {
    const auto s = space(t);
    std::set<std::string> distinct;
    for (uint64_t seed = 0; seed < 1000; ++seed) {
      Rng rng(seed);
      const auto c = s.sample(rng);
      ASSERT_TRUE(c.has_value()) << "seed " << seed;
      ASSERT_TRUE(s.legal(*c)) << "seed " << seed << ": " << s.key(*c) << ": " << s.why_illegal(*c);
      distinct.insert(s.key(*c));
    }
    EXPECT_GT(distinct.size(), 300u);  // uniform over hundreds of legal configs, not stuck on a few
  }
}

TEST_F(GeluSpace, SameSeedSameSamples) {
  const auto s = space(DType::bf16);
  Rng a(1234), b(1234), c(4321);
  std::vector<Config> sa, sb, sc;
  for (int i = 0; i < 50; ++i) {
    sa.push_back(*s.sample(a));
    sb.push_back(*s.sample(b));
    sc.push_back(*s.sample(c));
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
}

TEST_F(GeluSpace, NeighboursAreLegalOneKnobSteps) {
  for (auto t : {DType::f32, DType::bf16}) {
    const auto s = space(t);
    Rng rng(7);
    for (int i = 0; i < 100; ++i) {
      const auto c = *s.sample(rng);
      const auto ns = s.neighbours(c);
      EXPECT_FALSE(ns.empty()) << s.key(c);
      std::set<Config> unique(ns.begin(), ns.end());
      EXPECT_EQ(unique.size(), ns.size()) << s.key(c);
      for (const auto& n : ns) {
        EXPECT_TRUE(s.legal(n)) << s.key(n);
        EXPECT_EQ(differing(c, n), 1) << s.key(c) << " -> " << s.key(n);
      }
    }
  }
  // An interior point: BLOCK 256 steps to 128 and 512, and only those for BLOCK.
  const auto s = space(DType::f32);
  const auto c = config(s, {{"BLOCK", 256}, {"VEC", 2}, {"EPT", 2}});
  int block_steps = 0;
  for (const auto& n : s.neighbours(c))
    if (n.values[0] != 256) {
      ++block_steps;
      EXPECT_TRUE(n.values[0] == 128 || n.values[0] == 512) << s.key(n);
    }
  EXPECT_EQ(block_steps, 2);
}

TEST_F(GeluSpace, NewValuesAreLegalOneKnobVariantsOutsideTheEarlierValues) {
  const auto s = space(DType::f32);
  const auto c = config(s, {{"BLOCK", 256}, {"VEC", 4}, {"EPT", 2}});
  // An earlier text offered BLOCK 128 and 256 and no cache hint; GRID_STRIDE and the rest unknown.
  const std::map<std::string, std::set<int64_t>> earlier{{"BLOCK", {128, 256}}, {"CACHE_HINT", {0}}, {"FAST_TANH", {0}}};
  std::set<std::string> keys;
  for (const auto& n : s.with_new_values(c, earlier)) {
    EXPECT_TRUE(s.legal(n)) << s.key(n);
    EXPECT_EQ(differing(c, n), 1) << s.key(n);
    keys.insert(s.key(n));
  }
  // FAST_TANH 1 is new but illegal at f32; knobs `earlier` does not name stay as they are.
  EXPECT_EQ(keys, (std::set<std::string>{s.key(config(s, {{"BLOCK", 64}, {"VEC", 4}, {"EPT", 2}})),
                                         s.key(config(s, {{"BLOCK", 512}, {"VEC", 4}, {"EPT", 2}})),
                                         s.key(config(s, {{"BLOCK", 1024}, {"VEC", 4}, {"EPT", 2}})),
                                         s.key(config(s, {{"BLOCK", 256}, {"VEC", 4}, {"EPT", 2}, {"CACHE_HINT", 1}}))}));
  // Nothing new: nothing to try.
  std::map<std::string, std::set<int64_t>> all;
  for (const auto& k : s.knobs()) all[k.name].insert(k.values.begin(), k.values.end());
  EXPECT_TRUE(s.with_new_values(c, all).empty());
  EXPECT_TRUE(s.with_new_values(c, {}).empty());
}

TEST_F(GeluSpace, RepairReturnsLegal) {
  const auto s = space(DType::f32);
  const auto legal = config(s, {{"VEC", 4}});
  Rng rng(3);
  EXPECT_EQ(s.repair(legal, rng), legal);  // already legal: unchanged
  // One bad knob: fixed by changing that knob only.
  const auto vec8 = config(s, {{"BLOCK", 512}, {"VEC", 8}, {"EPT", 4}});
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng r(seed);
    const auto fixed = s.repair(vec8, r);
    ASSERT_TRUE(fixed.has_value());
    EXPECT_TRUE(s.legal(*fixed)) << s.key(*fixed);
    EXPECT_EQ(differing(vec8, *fixed), 1) << s.key(*fixed);
  }
  // Two bad knobs (VEC too wide for f32, BLOCKS_PER_SM in one-pass mode): legal after repair.
  const auto two = config(s, {{"VEC", 8}, {"GRID_STRIDE", 0}, {"BLOCKS_PER_SM", 4}, {"FAST_TANH", 1}});
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng r(seed);
    const auto fixed = s.repair(two, r);
    ASSERT_TRUE(fixed.has_value());
    EXPECT_TRUE(s.legal(*fixed)) << s.key(*fixed);
  }
  // Random (possibly illegal) mutants and crossovers always repair to legal configs.
  Rng r(11);
  for (int i = 0; i < 200; ++i) {
    const auto a = *s.sample(r), b = *s.sample(r);
    const auto m = s.mutate(s.crossover(a, b, r), r, 0.5);
    const auto fixed = s.repair(m, r);
    ASSERT_TRUE(fixed.has_value());
    EXPECT_TRUE(s.legal(*fixed)) << s.key(*fixed);
  }
}

TEST_F(GeluSpace, EnumerateLegalMatchesBruteForce) {
  for (auto t : {DType::f32, DType::bf16}) {
    const auto s = space(t);
    const auto& k = s.knobs();
    const int64_t bytes = dtype_bytes(t);
    // Brute force over the cartesian product, with the constraints written out by hand.
    size_t count = 0, count_legal = 0;
    for (auto block : k[0].values)
      for (auto vec : k[1].values)
        for (auto ept : k[2].values)
          for (auto gs : k[3].values)
            for (auto bps : k[4].values)
              for (auto fast : k[5].values)
                for (auto hint : k[6].values) {
                  const bool ok = vec * bytes <= 16 && (gs == 1 || bps == 1) && (fast == 0 || bytes == 2);
                  count += ok;
                  count_legal += s.legal(Config{{block, vec, ept, gs, bps, fast, hint}});
                }
    const auto all = s.enumerate_legal(1u << 20);
    EXPECT_EQ(all.size(), count) << dtype_name(t);
    EXPECT_EQ(all.size(), count_legal) << dtype_name(t);
    EXPECT_EQ(count, t == DType::f32 ? 720u : 1920u);  // 5 blocks x vec x 4 EPT x 6 (GS, BPS) x fast x 2
    EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));  // listed values are ascending here
    EXPECT_EQ(std::set<Config>(all.begin(), all.end()).size(), all.size());
    for (const auto& c : all) EXPECT_TRUE(s.legal(c));
    // The limit is respected, and a limited enumeration is a prefix of the full one.
    const auto first = s.enumerate_legal(10);
    ASSERT_EQ(first.size(), 10u);
    EXPECT_TRUE(std::equal(first.begin(), first.end(), all.begin()));
  }
}

TEST_F(GeluSpace, IsNotSparse) { EXPECT_FALSE(space(DType::f32).sparse()); }

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

// The shipped presets (the problem's fallback first, then PyTorch eager's launch) resolve to their
// knob values where they are legal.
TEST_F(GeluSpace, PresetsResolveWhereLegal) {
  ASSERT_FALSE(variant().presets.empty());
  for (DType t : {DType::f32, DType::bf16}) {
    const auto s = space(t);
    const auto p = s.presets();
    ASSERT_EQ(p.size(), 2u) << dtype_name(t);
    EXPECT_EQ(p[0].first, "fallback");
    EXPECT_EQ(p[1].first, "pytorch eager");
    EXPECT_EQ(s.key(p[1].second), "BLOCK=128,VEC=4,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0");
    EXPECT_TRUE(s.legal(p[0].second));
    EXPECT_TRUE(s.legal(p[1].second));
  }
}

// A preset whose expressions give no listed value, or an illegal configuration, is left out.
TEST(Presets, UnlistedOrIllegalOnesAreLeftOut) {
  VariantSpec v;
  v.knobs = {KnobSpec{"A", {1, 2, 4}, ""}, KnobSpec{"B", {1, 2}, ""}};
  v.constraints = {Expr("A * B <= n", {})};
  v.presets = {Preset{"fits", {Expr("n / 3", {}), Expr("1", {})}}, Preset{"not listed", {Expr("n / 2", {}), Expr("1", {})}},
               Preset{"fraction", {Expr("n / 4", {}), Expr("1", {})}}, Preset{"illegal", {Expr("4", {}), Expr("2", {})}}};
  const Space s(v, Bindings{{"n", 6.0}});
  const auto p = s.presets();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].first, "fits");
  EXPECT_EQ(s.key(p[0].second), "A=2,B=1");
}

// A space where 1 in 2048 value combinations is legal: rejection would fail almost every time,
// so samples come from the enumeration, uniformly, and a seed still gives the same samples.
TEST(SparseSpace, SamplesComeFromTheLegalOnesUniformly) {
  VariantSpec v;
  for (const char* k : {"A", "B", "C", "D", "E", "F"}) v.knobs.push_back(KnobSpec{k, {0, 1, 2, 3, 4, 5, 6, 7}, ""});
  v.constraints = {Expr("A <= 1 && B == 1 && C == 1 && D == 1", {})};
  const Space s(v, Bindings{});
  EXPECT_TRUE(s.sparse());
  Rng rng(5);
  std::map<std::string, int> seen;
  for (int i = 0; i < 12800; ++i) {
    const auto c = s.sample(rng);
    ASSERT_TRUE(c && s.legal(*c));
    ++seen[s.key(*c)];
  }
  EXPECT_EQ(seen.size(), 128u);  // every legal configuration, about 100 times each
  for (const auto& [key, n] : seen) EXPECT_GT(n, 50) << key;
  const Space fresh(v, Bindings{});  // not asked anything before: the same samples
  Rng a(9), b(9);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.key(*s.sample(a)), fresh.key(*fresh.sample(b)));
}

// A shape no configuration serves: the first constraint that every configuration meeting the ones
// before it breaks, its sides at the nearest miss, and the knobs it was tried at.
TEST(EmptySpace, NamesTheConstraintThatExcludesTheShape) {
  VariantSpec v;
  v.knobs = {KnobSpec{"BLOCK", {32, 64, 256, 1024}, ""}, KnobSpec{"EPT", {1, 2, 4}, ""}, KnobSpec{"VEC", {1, 2}, ""}};
  v.constraints = {Expr("BLOCK >= 64", {}), Expr("cols <= BLOCK * EPT * 32", {})};
  EXPECT_EQ(Space(v, Bindings{{"cols", 4096}}).why_empty(), "");
  EXPECT_EQ(Space(v, Bindings{{"cols", 1048576}}).why_empty(),
            "constraint 'cols <= BLOCK * EPT * 32' fails for every BLOCK, EPT that the constraints before it allow: "
            "at best 1048576 > 131072 (BLOCK=1024, EPT=4)");
  v.constraints = {Expr("cc >= 90", {})};  // no knob: the shape or the device alone
  EXPECT_EQ(Space(v, Bindings{{"cc", 80}}).why_empty(), "constraint 'cc >= 90' fails for this shape and device: 80 < 90");
  v.constraints = {Expr("EPT == 8 || EPT * VEC <= cols", {})};  // shown whole, with the values it reads
  EXPECT_EQ(Space(v, Bindings{{"cols", 0}}).why_empty(),
            "constraint 'EPT == 8 || EPT * VEC <= cols' fails for every EPT, VEC (cols=0), e.g. at EPT=1, VEC=1");
  // A constraint that states its reason ({expr, why}) gives it there and for a configuration.
  v.constraints = {Expr("mod(cols, 8) == 0", {})};
  v.constraint_why = {"16-byte rows: cols a multiple of 8"};
  EXPECT_EQ(Space(v, Bindings{{"cols", 1001}}).why_empty(),
            "constraint 'mod(cols, 8) == 0' (16-byte rows: cols a multiple of 8) fails for this shape and device: 1 != 0");
  EXPECT_EQ(Space(v, Bindings{{"cols", 1001}}).why_illegal(Config{{32, 1, 1}}),
            "constraint 'mod(cols, 8) == 0' is false: 16-byte rows: cols a multiple of 8");
}

// The shape that motivated it: one softmax row of 2^20 f32 values is longer than a register-held
// row may be.
TEST(EmptySpace, SoftmaxCachedSaysWhyOneRowOfAMillionIsTooLong) {
  const auto p = load_problem(SOLTUNE_SOURCE_DIR "/templates", "softmax");
  const auto& v = p.variant("cached");
  const Task t{&p, &v, DType::f32, Shape{{{"rows", 1}, {"cols", 1 << 20}}}};
  const auto why = Space(v, t.fixed(*find_known_gpu("H200"))).why_empty();
  EXPECT_NE(why.find("constraint 'cols <= 512 * TPR' fails for every TPR"), std::string::npos) << why;
  EXPECT_NE(why.find("1048576 > 524288 (TPR=1024)"), std::string::npos) << why;
}

}  // namespace
}  // namespace soltune
