#pragma once
// The fixture the command-line tests share: the real `soltune` binary run in a temporary folder of
// its own, with a compile cache of its own, stdout and stderr captured apart.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "../support/files.hpp"

namespace soltune {
namespace {  // each test file gets its own copy

namespace fs = std::filesystem;

const fs::path kSoltune = SOLTUNE_BINARY_DIR "/src/cli/soltune";
const fs::path kSource = SOLTUNE_SOURCE_DIR;

[[maybe_unused]] std::string read(const fs::path& p) { return test::read_file(p); }
[[maybe_unused]] void write(const fs::path& p, const std::string& text) { test::write_file(p, text); }

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

struct Result {
  int code = -1;
  std::string out, err;
};

std::ostream& operator<<(std::ostream& o, const Result& r) {
  return o << "exit " << r.code << "\n--- stdout:\n" << r.out << "\n--- stderr:\n" << r.err;
}

// A command's exit code, and the phrases its stderr must hold (each named where it is missing).
[[maybe_unused]] void expect_run(const Result& r, int code, std::initializer_list<std::string_view> says) {
  EXPECT_EQ(r.code, code) << r;
  for (const auto said : says) EXPECT_NE(r.err.find(said), std::string::npos) << "stderr lacks: " << said << "\n" << r;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kSoltune)) << kSoltune;
    std::string t = (fs::temp_directory_path() / "soltune-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    tmp_ = t;
    // A compile cache of this test's own: no effects across tests, or from earlier runs.
    ASSERT_EQ(setenv("SOLTUNE_CACHE_DIR", (tmp_ / "cache").c_str(), 1), 0);
    kb_ = tmp_ / "kb.sqlite";
  }
  // For tests whose runs only need their kernels compiled, not a cold cache: test::shared_compile_cache().
  static void share_compile_cache() { ASSERT_EQ(setenv("SOLTUNE_CACHE_DIR", test::shared_compile_cache().c_str(), 1), 0); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  // Runs `soltune ARGS` in the temp folder; stdout and stderr captured separately.
  Result soltune(const std::string& args) const {
    const std::string cmd = "cd " + q(tmp_) + " && " + q(kSoltune) + " " + args + " >" + q(tmp_ / "stdout.txt") +
                            " 2>" + q(tmp_ / "stderr.txt");
    return shell(cmd);
  }
  // The same, killed after `seconds` (exit 124): a hang fails the test, not the suite.
  Result soltune_within(const std::string& args, int seconds) const {
    const std::string cmd = "cd " + q(tmp_) + " && timeout " + std::to_string(seconds) + " " + q(kSoltune) + " " + args +
                            " >" + q(tmp_ / "stdout.txt") + " 2>" + q(tmp_ / "stderr.txt");
    return shell(cmd);
  }
  Result shell(const std::string& cmd) const {
    Result r;
    const int st = std::system(cmd.c_str());
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = read(tmp_ / "stdout.txt");
    r.err = read(tmp_ / "stderr.txt");
    return r;
  }

  // A model-backend tune of configs/gelu.yaml (4 tasks) into kb_.
  Result tune_gelu(int evals = 16) const {
    return soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals " +
                   std::to_string(evals) + " --kb " + q(kb_));
  }

  // A copy of the shipped gelu templates in tmp_/templates, and an f32 2^28 tune of it into kb_ with
  // the replay backend on the recorded landscape (measured results without a GPU). `edit` changes
  // the copy before the tune. Returns the copy's folder.
  // `landscape`: another recording to replay (default the shipped one). Called again, it tunes the
  // copy as it then is.
  fs::path tune_gelu_replay(const std::function<void(const fs::path& gelu_dir)>& edit = {},
                            fs::path landscape = kSource / "tests" / "data" / "gelu_f32_landscape.json") const {
    const auto templates = tmp_ / "templates";
    if (!fs::exists(templates / "gelu")) {
      fs::create_directories(templates);
      fs::copy(kSource / "templates" / "gelu", templates / "gelu", fs::copy_options::recursive);
    }
    if (edit) edit(templates / "gelu");
    const auto cfg = tmp_ / "gelu.yaml";
    write(cfg, "problem: gelu\nvariants: [vectorized]\ndtypes: [f32]\nshapes: [{n: 268435456}]\nbudget: {evals: 12}\n"
               "seed: 5\ntemplates: " + templates.string() + "\n");
    const auto r = soltune("tune " + q(cfg) + " --backend replay --landscape " + q(landscape) + " --kb " + q(kb_) + " -q");
    EXPECT_EQ(r.code, 0) << r;
    return templates;
  }

  fs::path tmp_, kb_;
};

}  // namespace
}  // namespace soltune
