// scripts/same-machine-code, the check of a template refactor without a GPU: run on a copy of the
// committed templates it finds every kernel the same; after an edit of GELU's arithmetic it names
// the kernels that changed and exits 1.
#include <regex>

#include "cli_fixture.hpp"

namespace soltune {
namespace {

class SameMachineCode : public Cli {};

TEST_F(SameMachineCode, NamesTheKernelsAnEditChanged) {
  if (!fs::exists(kSource / ".git")) GTEST_SKIP() << "the source is not a git checkout: the script compares with a commit";
  const fs::path tree = tmp_ / "tree";
  fs::create_directories(tree);
  ASSERT_EQ(shell("git -C " + q(kSource) + " archive HEAD templates configs | tar -x -C " + q(tree)).code, 0);
  const std::string script = "SOLTUNE_BIN=" + q(kSoltune) + " " + q(kSource / "scripts" / "same-machine-code") +
                             " --evals 6 --tree " + q(tree) + " configs/gelu.yaml";
  const std::string to_files = " >" + q(tmp_ / "stdout.txt") + " 2>" + q(tmp_ / "stderr.txt");

  auto r = shell("cd " + q(kSource) + " && " + script + to_files);
  EXPECT_EQ(r.code, 0) << r;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(configs/gelu\.yaml: (\d+) of (\d+) kernels the same)"))) << r;
  EXPECT_EQ(m[1], m[2]) << r;
  EXPECT_GE(std::stoi(m[2]), 4) << r;  // both dtypes and both shapes compiled something

  // sqrt(2/pi) cut to five digits (a float apart): the same kernels, other code.
  test::replace_in_file(tree / "templates" / "gelu" / "vectorized.cu", "0.7978845608028654f", "0.79788f");
  r = shell("cd " + q(kSource) + " && " + script + to_files);
  EXPECT_EQ(r.code, 1) << r;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(configs/gelu\.yaml: (\d+) of (\d+) kernels the same)"))) << r;
  // The reference and baseline kernels are as they were; every tuned kernel is named.
  const int changed = std::stoi(m[2]) - std::stoi(m[1]);
  EXPECT_GT(changed, 0) << r;
  const std::regex named(R"(\n  differs \(text[a-z, ]*\): _Z9gelu_tanh)");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), named), std::sregex_iterator()), changed) << r;

  r = shell("cd " + q(kSource) + " && " + script + " configs/nowhere.yaml" + to_files);
  EXPECT_NE(r.code, 0) << r;
  EXPECT_NE(r.err.find("configs/nowhere.yaml: no such config in HEAD"), std::string::npos) << r;
}

}  // namespace
}  // namespace soltune
