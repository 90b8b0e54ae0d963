// What `soltune tune` shows: plain lines that name their task (and a failure's reason) when stdout
// is a pipe, a block redrawn in place on a terminal (a pseudo-terminal here), and a summary of at
// most 120 columns that ends with where the results are and what to run next.
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <sstream>

#include "cli_fixture.hpp"

namespace soltune {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

class Progress : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    share_compile_cache();
  }
  // A gelu copy whose space is three configurations: BLOCK 64 fails a static_assert, 256 and 512
  // are fine (a block over the device's threads is not a legal configuration). An exhaustive tune
  // of it into kb_.
  fs::path three_configurations() {
    const auto t = tmp_ / "t";
    fs::create_directories(t);
    fs::copy(kSource / "templates" / "gelu", t / "gelu", fs::copy_options::recursive);
    auto yaml = read(t / "gelu" / "vectorized.yaml");
    yaml = std::regex_replace(yaml, std::regex("BLOCK: \\{values: \\[[^\\]]*\\]"), "BLOCK: {values: [64, 256, 512]");
    for (const char* k : {"VEC", "EPT"})
      yaml = std::regex_replace(yaml, std::regex(std::string(k) + ": \\{values: \\[[^\\]]*\\]"), std::string(k) + ": {values: [4]");
    for (const char* k : {"GRID_STRIDE", "FAST_TANH", "CACHE_HINT"})
      yaml = std::regex_replace(yaml, std::regex(std::string(k) + ": \\{values: \\[[^\\]]*\\]"), std::string(k) + ": {values: [0]");
    yaml = std::regex_replace(yaml, std::regex("BLOCKS_PER_SM: \\{values: \\[[^\\]]*\\]"), "BLOCKS_PER_SM: {values: [1]");
    write(t / "gelu" / "vectorized.yaml", yaml);
    auto cu = read(t / "gelu" / "vectorized.cu");
    const auto body = cu.find('{', cu.find("gelu_tanh("));
    cu.insert(body + 1, "\n  static_assert(BLOCK != 64, \"BLOCK 64 is refused on purpose\");");
    write(t / "gelu" / "vectorized.cu", cu);
    const auto cfg = tmp_ / "three.yaml";
    write(cfg, "problem: gelu\ntemplates: t\ndtypes: [f32]\nshapes: [{n: 100000}]\nbudget: {evals: 3}\n"
               "backend: model\nsearch: {strategy: exhaustive}\n");
    return cfg;
  }

  // Runs soltune on a pseudo-terminal of `cols` x `rows` with TERM=xterm; everything it wrote.
  std::string on_terminal(const std::string& args, int cols, int rows) const {
    winsize ws{};
    ws.ws_col = static_cast<unsigned short>(cols);
    ws.ws_row = static_cast<unsigned short>(rows);
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
    if (pid == 0) {
      setenv("TERM", "xterm", 1);
      unsetenv("SOLTUNE_PROGRESS");
      if (chdir(tmp_.c_str()) != 0) _exit(126);
      const std::string cmd = q(kSoltune) + " " + args;
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    EXPECT_GT(pid, 0);
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO once the child has gone
      out.append(buf, static_cast<size_t>(n));
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ::close(master);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
    return out;
  }
};

TEST_F(Progress, PlainLinesNameTheTaskAndEveryFailuresReason) {
  const auto cfg = three_configurations();
  const auto r = soltune("tune " + q(cfg) + " --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "escape sequences in a pipe:\n" << r;
  int lines = 0;
  for (const auto& l : lines_of(r.out)) {
    if (l.rfind("[", 0) != 0) continue;
    ++lines;
    EXPECT_NE(l.find("gelu/vectorized/f32/n=100000"), std::string::npos) << l;
    if (l.find("BLOCK=64,") != std::string::npos) {
      EXPECT_NE(l.find("compile_error: "), std::string::npos) << l;
      EXPECT_NE(l.find("BLOCK 64 is refused on purpose"), std::string::npos) << l;
    }
    EXPECT_EQ(l.find("/0]"), std::string::npos) << l;
  }
  EXPECT_EQ(lines, 3) << r;
}

TEST_F(Progress, ATimeBudgetShowsNoEvaluationTotal) {
  const auto cfg = three_configurations();
  write(cfg, std::regex_replace(read(cfg), std::regex("budget: \\{evals: 3\\}"), "budget: {seconds: 60}"));
  const auto r = soltune("tune " + q(cfg) + " --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("[   1] gelu/"), std::string::npos) << r;
  EXPECT_NE(r.out.find("budget: 60 s"), std::string::npos) << r;
}

TEST_F(Progress, TheSummaryFitsIn120ColumnsAndSaysWhatToRunNext) {
  // softmax: long task ids and long configurations.
  const auto r = soltune("tune " + q(kSource / "configs" / "softmax.yaml") + " --backend model --evals 8 --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  const auto at = r.out.find("\nsummary");
  ASSERT_NE(at, std::string::npos) << r;
  // Up to the commands to run next, which hold the user's paths as they are.
  const auto summary = lines_of(r.out.substr(at + 1, r.out.find("\nresults: ") - at));
  for (const auto& l : summary) EXPECT_LE(l.size(), 120u) << l;
  // Each task's figures, then its configuration on a line of its own.
  int configs = 0;
  for (size_t i = 0; i + 1 < summary.size(); ++i)
    if (summary[i].rfind("softmax/", 0) == 0 && summary[i].find("  ") != std::string::npos &&
        summary[i + 1].rfind("  ", 0) == 0 && summary[i + 1].find("BLOCK=") != std::string::npos)
      ++configs;
  EXPECT_GE(configs, 8) << r;
  EXPECT_NE(r.out.find("results: 8 new in " + kb_.string()), std::string::npos) << r;
  EXPECT_NE(r.out.find("kb best --kb " + kb_.string() + " --problem softmax"), std::string::npos) << r;
  EXPECT_NE(r.out.find("export --kb " + kb_.string() + " --problem softmax -o softmax.cuh --allow-predicted"),
            std::string::npos) << r;
}

// The model predicts one time for most GELU candidates at a million elements (latency-bound: knobs
// that only change the arithmetic do not move it): the summary says it cannot rank them. Softmax's
// candidates it tells apart, and says nothing.
TEST_F(Progress, TheSummarySaysWhenThePredictionsTie) {
  auto r = soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals 40 -q --kb " + q(kb_));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("gelu/vectorized/f32/n=1000003: predictions tie for [0-9]+% of its [0-9]+ "
                                                  "candidates: the model cannot tell them apart")))
      << r;
  r = soltune("tune " + q(kSource / "configs" / "softmax.yaml") + " --backend model --evals 16 -q --kb " + q(tmp_ / "b.sqlite"));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out.find("predictions tie"), std::string::npos) << r;
}

TEST_F(Progress, OnATerminalABlockIsRedrawnInPlace) {
  const auto out = on_terminal("tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals 12 --kb " +
                               q(kb_), 100, 30);
  // Redrawn: cursor up to the block's first line (CSI n F), each line cleared as it is written.
  EXPECT_TRUE(std::regex_search(out, std::regex("\x1b\\[[0-9]+F"))) << out;
  EXPECT_NE(out.find("\x1b[2K"), std::string::npos);
  // The block: per task evaluations, failures, best and SOL, then the run's budget left.
  EXPECT_TRUE(std::regex_search(out, std::regex("task +evals +fail +best us +SOL +time"))) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("gelu/vectorized/f32/n=268435456 +[0-9]+ +[0-9]+ +[0-9.]+ +0\\.[0-9]{3}")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("[0-9]+/12 evaluated, 0:[0-9]{2} elapsed, left: [0-9]+ evaluations, "
                                                "[0-9]+:[0-9]{2}")))
      << out;
  EXPECT_NE(out.find("new best  gelu/vectorized/"), std::string::npos) << out;
  EXPECT_EQ(out.find("[   1/12]"), std::string::npos) << "plain lines on a terminal";
  // No block line is wider than the terminal (a wrapped line would break the redraw).
  for (const auto& l : lines_of(out))
    if (l.find("\x1b[2K") != std::string::npos) {
      EXPECT_LE(l.size(), 100u + 16) << l;
    }
  EXPECT_NE(out.find("summary (predicted)"), std::string::npos) << out;
}

}  // namespace
}  // namespace soltune
