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

// NVRTC names internal-linkage entities (libcu++'s cuda::ptx tags) with a hash and a number of the
// compiling process: a text and the same text with a comment, each compiled by a worker of its own,
// differ in those names (and line tables) alone, and hold the same machine code.
TEST(MachineCode, InternalNamesOfEachCompileDoNotCountAsOtherCode) {
  const std::string text = R"(
#include <cuda/ptx>
template <int N> __global__ void tagged(unsigned long long* out) {
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) cuda::ptx::mbarrier_init(&bar, N);
  __syncthreads();
  cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, &bar);
  out[threadIdx.x] = bar;
}
)";
  // Each compile in a compiler of its own: its own NVRTC worker process.
  auto build = [&](const std::string& source) {
    const Compiler c(default_compiler_options());
    const auto r = c.compile(CompileRequest{source, "tagged.cu", {"tagged<3>"}, "sm_90", {}});
    EXPECT_TRUE(r.ok) << r.log;
    return r.cubin;
  };
  // Whether two workers' names differ varies from run to run: four texts make it near certain.
  const auto one = build(text);
  for (const char* comment : {"// a comment\n", "// another\n\n", "\n\n\n// and a third\n"}) {
    const auto again = build(comment + text);
    ASSERT_NE(one, again);  // line tables, and often the internal names
    EXPECT_TRUE(same_machine_code(one, again)) << comment;
  }
  const auto other = Compiler(default_compiler_options()).compile(CompileRequest{text, "tagged.cu", {"tagged<4>"}, "sm_90", {}});
  ASSERT_TRUE(other.ok) << other.log;
  EXPECT_FALSE(same_machine_code(one, other.cubin));
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
