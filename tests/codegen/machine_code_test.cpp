// same_machine_code on real NVRTC output (no GPU needed): texts that differ only in comments and
// layout compile to the same code; a changed constant, another instantiation or another
// architecture do not; bytes that are not an ELF file are an Error.
#include "codegen/machine_code.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "codegen/compiler.hpp"
#include "core/error.hpp"

#include "../support/scale_kernel.hpp"

namespace soltune {
namespace {

std::vector<char> cubin(const std::string& source, const std::string& expr, const std::string& arch = "sm_90") {
  const Compiler c(default_compiler_options());
  const auto r = c.compile(CompileRequest{source, "scale.cu", {expr}, arch, {}});
  EXPECT_TRUE(r.ok) << r.log;
  return r.cubin;
}

TEST(MachineCode, CommentsAndLayoutDoNotCountOtherCodeDoes) {
  const std::string text = test::kScale;
  const auto base = cubin(text, "scale<float, 3>");
  // The same code on other lines: the line tables differ, the code does not.
  const std::string moved = "// a comment that moves every line down\n\n\n" + text + "\n// and one at the end\n";
  const auto same = cubin(moved, "scale<float, 3>");
  ASSERT_NE(base, same);  // the files themselves differ (line tables)
  EXPECT_TRUE(same_machine_code(base, same));
  EXPECT_TRUE(same_machine_code(base, base));

  std::string edited = text;
  edited.replace(edited.find("T(N)"), 4, "T(N + 1)");
  EXPECT_FALSE(same_machine_code(base, cubin(edited, "scale<float, 3>")));
  EXPECT_FALSE(same_machine_code(base, cubin(text, "scale<float, 4>")));
  EXPECT_FALSE(same_machine_code(base, cubin(text, "scale<double, 3>")));
  const auto archs = Compiler::supported_archs();
  if (std::find(archs.begin(), archs.end(), "sm_80") != archs.end()) {
    EXPECT_FALSE(same_machine_code(base, cubin(text, "scale<float, 3>", "sm_80")));
  }
}

TEST(MachineCode, BytesThatAreNotAnElfFileAreAnError) {
  const auto base = cubin(test::kScale, "scale<float, 3>");
  const std::string junk = "not an ELF file at all, but long enough to hold a header of sixty-four bytes";
  EXPECT_THROW(same_machine_code(std::vector<char>(junk.begin(), junk.end()), base), Error);
  EXPECT_THROW(same_machine_code(std::vector<char>(base.begin(), base.begin() + 40), base), Error);
  auto cut = base;
  cut.resize(cut.size() / 2);  // the section headers (at the end) now point past it
  EXPECT_THROW(same_machine_code(cut, base), Error);
}

}  // namespace
}  // namespace soltune
