// The cache key and the entry format, without compiling anything.
#include "codegen/nvrtc_cache.hpp"

#include <gtest/gtest.h>

namespace soltune {
namespace {

CompileResult sample() {
  CompileResult r;
  r.ok = true;
  r.log = "ptxas info    : Used 8 registers\n";
  r.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\x01', '\xff'};
  r.key = std::string(32, 'a');
  r.kernels.push_back({"k<1>", "_Z1kILi1EEvv",
                       {8, 1, 2, 3, 4, 360, true,
                        {{PtxasNote::Kind::setmaxnreg_ignored, "(C7508) Potential Performance Loss: ...", 2}}}});
  r.kernels.push_back({"k<2>", "_Z1kILi2EEvv", {}});
  return r;
}

TEST(NvrtcCacheKey, StableAndLengthPrefixed) {
  const CompileRequest a{"src", "a.cu", {"ab", "c"}, "sm_90", {}};
  const CompileRequest b{"src", "a.cu", {"a", "bc"}, "sm_90", {}};
  const std::vector<std::string> opts = {"-x"};
  EXPECT_EQ(nvrtc_cache_key(a, opts, 13000), nvrtc_cache_key(a, opts, 13000));
  EXPECT_NE(nvrtc_cache_key(a, opts, 13000), nvrtc_cache_key(b, opts, 13000));
  EXPECT_NE(nvrtc_cache_key(a, {"-x", "-y"}, 13000), nvrtc_cache_key(a, {"-x -y"}, 13000));
  EXPECT_NE(nvrtc_cache_key(a, opts, 13000), nvrtc_cache_key(a, opts, 12080));
  const std::string k = nvrtc_cache_key(a, opts, 13000);
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(NvrtcCacheEntry, RoundTrips) {
  const CompileResult r = sample();
  const auto back = decode_cache_entry(encode_cache_entry(r), r.key);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->ok, r.ok);
  EXPECT_EQ(back->log, r.log);
  EXPECT_EQ(back->cubin, r.cubin);
  EXPECT_EQ(back->key, r.key);
  ASSERT_EQ(back->kernels.size(), 2u);
  EXPECT_EQ(back->kernels[0].lowered_name, "_Z1kILi1EEvv");
  EXPECT_EQ(back->kernels[0].res.cmem, 360);
  EXPECT_EQ(back->kernels[0].res.stack, 3);
  EXPECT_TRUE(back->kernels[0].res.parsed);
  ASSERT_EQ(back->kernels[0].res.notes.size(), 1u);
  EXPECT_EQ(back->kernels[0].res.notes[0].kind, PtxasNote::Kind::setmaxnreg_ignored);
  EXPECT_EQ(back->kernels[0].res.notes[0].line, "(C7508) Potential Performance Loss: ...");
  EXPECT_EQ(back->kernels[0].res.notes[0].count, 2);
  EXPECT_FALSE(back->kernels[1].res.parsed);
  EXPECT_TRUE(back->kernels[1].res.notes.empty());
  EXPECT_FALSE(decode_cache_entry(encode_cache_entry(r), std::string(32, 'b'))) << "another key's entry";
}

// Every truncation and every single-byte change is rejected, never a crash or a wrong result.
TEST(NvrtcCacheEntry, RejectsEveryTruncationAndFlip) {
  const CompileResult r = sample();
  const std::string bytes = encode_cache_entry(r);
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode_cache_entry(bytes.substr(0, n), r.key)) << "length " << n;
  EXPECT_FALSE(decode_cache_entry(bytes + "x", r.key));
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_FALSE(decode_cache_entry(bad, r.key)) << "byte " << i;
  }
}

}  // namespace
}  // namespace soltune
