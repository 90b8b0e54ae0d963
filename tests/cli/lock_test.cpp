// The GPU lock from the command line, without a GPU: the model backend takes none, so two tunes on
// one knowledge base run side by side; every command that measures offers --no-wait.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "cli_fixture.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {
namespace {

class Lock : public Cli {};

TEST_F(Lock, ModelBackendTunesOnOneKnowledgeBaseDoNotWaitForEachOther) {
  const auto locks = tmp_ / "locks";
  ASSERT_EQ(setenv("SOLTUNE_LOCK_DIR", locks.c_str(), 1), 0);
  const auto tune = [&](int i, const std::string& extra) {
    return "( " + q(kSoltune) + " tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals 16 --kb " +
           q(kb_) + extra + " >" + q(tmp_ / ("out" + std::to_string(i))) + " 2>" + q(tmp_ / ("err" + std::to_string(i))) +
           "; echo $? >" + q(tmp_ / ("rc" + std::to_string(i))) + " )";
  };
  // Both at once: one with --no-wait, which would fail at once if the model backend took a lock.
  const auto r = shell("cd " + q(tmp_) + " && " + tune(1, "") + " & " + tune(2, " --no-wait") + " & wait");
  unsetenv("SOLTUNE_LOCK_DIR");
  for (int i : {1, 2}) {
    const auto err = read(tmp_ / ("err" + std::to_string(i)));
    EXPECT_EQ(read(tmp_ / ("rc" + std::to_string(i))), "0\n") << i << "\n" << err << read(tmp_ / ("out" + std::to_string(i)));
    EXPECT_EQ(err.find("in use by"), std::string::npos) << i << "\n" << err;
    EXPECT_EQ(err.find("waiting for it"), std::string::npos) << i << "\n" << err;
  }
  EXPECT_FALSE(fs::exists(locks)) << "the model backend locked a GPU";
  auto kb = KnowledgeBase::open(kb_);
  EXPECT_EQ(kb.runs().size(), 2u);
}

TEST_F(Lock, EveryCommandThatMeasuresOffersNoWait) {
  for (const char* cmd : {"tune", "landscape", "devices"}) {
    const auto r = soltune(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd << "\n" << r;
    EXPECT_NE(r.out.find("--no-wait"), std::string::npos) << cmd << "\n" << r;
  }
}

}  // namespace
}  // namespace soltune
