// Kill-and-resume: a model-backend run is killed (SIGKILL) at several moments and resumed each time;
// the final knowledge base must hold exactly what one uninterrupted run records: no duplicate, no
// lost evaluation, the same budget and, the model backend being deterministic, the same sequence.
// Ctrl-C (SIGINT) marks the run interrupted and --resume finishes it.
#include <gtest/gtest.h>

#include "../support/files.hpp"
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "core/child_process.hpp"
#include "core/rng.hpp"
#include "kb/knowledge_base.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;
const std::string kSoltune = SOLTUNE_BINARY_DIR "/src/cli/soltune";
const std::string kConfig = SOLTUNE_SOURCE_DIR "/configs/gelu.yaml";
constexpr int kEvals = 40;

class Resume : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("soltune-resume-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // No compile cache: each candidate then takes a real NVRTC compile, long enough to be killed in.
    setenv("SOLTUNE_CACHE_DIR", "off", 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> args(const fs::path& kb, bool resume) const {
    std::vector<std::string> a{kSoltune, "tune", kConfig, "--backend", "model", "--evals", std::to_string(kEvals),
                               "--seed", "5", "--kb", kb.string(), "-q"};
    if (resume) a.push_back("--resume");
    return a;
  }
  static std::string run_to_end(const std::vector<std::string>& a, const fs::path& log = "/dev/null") {
    std::string cmd;
    for (const auto& s : a) cmd += "'" + s + "' ";
    return std::to_string(std::system((cmd + "> '" + log.string() + "' 2>&1").c_str()));
  }
  static std::string read_all(const fs::path& p) { return test::read_file(p); }
  static std::string shell_word(const std::string& w) {
    std::string out = "'";
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  static size_t count(const fs::path& kb) {
    if (!fs::exists(kb)) return 0;
    const auto store = KnowledgeBase::open(kb);
    const auto runs = store.runs();
    return runs.empty() ? 0 : store.results(runs.back().id).size();
  }
  // (task, key, status, time) in recording order.
  static std::vector<std::string> sequence(const fs::path& kb) {
    const auto store = KnowledgeBase::open(kb);
    std::vector<std::string> out;
    for (const auto& run : store.runs())
      for (const auto& r : store.results(run.id))
        out.push_back(r.dtype + "/" + r.shape_key + "/" + r.config_key + "/" + r.status + "/" + std::to_string(r.time_us));
    return out;
  }
  fs::path dir_;
};

TEST_F(Resume, KilledAtRandomMomentsThenResumedEqualsOneUninterruptedRun) {
  const auto a = dir_ / "a.sqlite", b = dir_ / "b.sqlite";
  ASSERT_EQ(run_to_end(args(a, false)), "0");
  const auto expected = sequence(a);
  ASSERT_EQ(expected.size(), static_cast<size_t>(kEvals));

  // Three kills at random moments (drawn from a seeded generator: random, and the same in every run
  // of this test), each after a random number of recorded results.
  Rng rng(2026);
  std::vector<size_t> thresholds;
  for (int k = 0; k < 3; ++k) thresholds.push_back(1 + rng.below(kEvals - 8));
  std::sort(thresholds.begin(), thresholds.end());
  int killed_mid_run = 0;
  for (size_t threshold : thresholds) {
    ChildProcess p(args(b, fs::exists(b)));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (count(b) < threshold && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    const size_t at_kill = count(b);
    p.kill();  // SIGKILL: no chance to tidy up
    if (at_kill < static_cast<size_t>(kEvals)) ++killed_mid_run;
  }
  EXPECT_GE(killed_mid_run, 2) << "the run finished before it could be killed: the test proves little";
  ASSERT_EQ(run_to_end(args(b, true), dir_ / "final.log"), "0");
  // The search state rebuilt by the replay equals the checkpoints written before the last kill.
  const auto log = read_all(dir_ / "final.log");
  EXPECT_NE(log.find("checkpoint(s) matched the replayed search exactly"), std::string::npos) << log;
  EXPECT_EQ(log.find("differs from its checkpoint"), std::string::npos) << log;
  {
    const auto store = KnowledgeBase::open(b);
    const auto cps = store.checkpoints(store.runs().front().id);
    EXPECT_EQ(cps.size(), 4u);  // one per task
    for (const auto& [task, cp] : cps) {
      EXPECT_EQ(cp.first, kEvals / 4) << task;
      EXPECT_NE(cp.second.find(";rng="), std::string::npos) << task;
    }
  }

  const auto store = KnowledgeBase::open(b);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u) << "a resume continues the run; it does not start another";
  EXPECT_EQ(runs[0].status, "finished");
  const auto got = sequence(b);
  EXPECT_EQ(got.size(), static_cast<size_t>(kEvals)) << "same budget as one uninterrupted run";
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size()) << "no duplicate";
  EXPECT_EQ(got, expected);
}

TEST_F(Resume, InterruptMarksTheRunAndResumeFinishesIt) {
  const auto b = dir_ / "b.sqlite";
  {
    ChildProcess p(args(b, false));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (count(b) < 5 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    ASSERT_EQ(::kill(p.pid(), SIGINT), 0);
    EXPECT_EQ(p.exit_text(60), "exit code 130");  // after the batch in flight
  }
  {
    const auto store = KnowledgeBase::open(b);
    ASSERT_EQ(store.runs().size(), 1u);
    EXPECT_EQ(store.runs()[0].status, "interrupted");
  }
  ASSERT_EQ(run_to_end(args(b, true)), "0");
  EXPECT_EQ(sequence(b).size(), static_cast<size_t>(kEvals));
  // Nothing left to resume: a clear error, not a new run.
  EXPECT_NE(run_to_end(args(b, true)), "0");
}

// A resume continues only what it can continue: a run still going is refused with its process, and
// a setting the search depends on that differs (the strategy, the config's search block, the
// budget) is named with both values, in the user's units.
TEST_F(Resume, WhatCannotBeContinuedIsRefusedNamingWhy) {
  const auto b = dir_ / "b.sqlite";
  const auto log = dir_ / "refused.txt";
  // A budget far larger than the test waits for: the run is still going when the resume is tried,
  // however slowly the refused command starts.
  auto with = [&](bool resume, std::vector<std::string> extra) {
    auto a = args(b, resume);
    a[static_cast<size_t>(std::find(a.begin(), a.end(), "--evals") - a.begin()) + 1] = "2000";
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  {
    ChildProcess p(with(false, {}));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (count(b) < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    ASSERT_GE(count(b), 2u);
    // The first run is alive: a second one resuming it is refused, and records nothing.
    EXPECT_NE(run_to_end(with(true, {}), log), "0");
    EXPECT_NE(read_all(log).find("is still going: soltune process " + std::to_string(p.pid())), std::string::npos)
        << read_all(log);
    ASSERT_EQ(::kill(p.pid(), SIGINT), 0);
    EXPECT_EQ(p.exit_text(60), "exit code 130");
  }
  const size_t kept = count(b);
  EXPECT_NE(run_to_end(with(true, {"--strategy", "random"}), log), "0");
  EXPECT_NE(read_all(log).find("search.strategy: soltune then, random now"), std::string::npos) << read_all(log);
  EXPECT_NE(run_to_end(args(b, true), log), "0");  // --evals 40
  EXPECT_NE(read_all(log).find("budget.evals: 2000 then, 40 now"), std::string::npos) << read_all(log);
  EXPECT_EQ(count(b), kept);  // nothing was run by the refused resumes
}

// A checkout moved (or a config copied elsewhere): --resume from the new path continues the run
// its config of the same name started, where the settings are the same, and says where it started;
// where they differ, the refusal names that run and its path.
TEST_F(Resume, AConfigThatMovedResumesItsRunOrNamesIt) {
  const auto b = dir_ / "b.sqlite";
  const auto log = dir_ / "log.txt";
  std::string text = read_all(kConfig);
  text += "\ntemplates: " + std::string(SOLTUNE_SOURCE_DIR) + "/templates\n";
  const auto old_dir = dir_ / "old" / "configs", new_dir = dir_ / "new" / "configs";
  fs::create_directories(old_dir);
  test::write_file(old_dir / "gelu.yaml", text);
  auto with = [&](const fs::path& config, bool resume, const std::string& seed) {
    auto a = args(b, resume);
    a[2] = config.string();
    a[static_cast<size_t>(std::find(a.begin(), a.end(), "--seed") - a.begin()) + 1] = seed;
    return a;
  };
  {
    ChildProcess p(with(old_dir / "gelu.yaml", false, "5"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (count(b) < 5 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    ASSERT_EQ(::kill(p.pid(), SIGINT), 0);
    EXPECT_EQ(p.exit_text(60), "exit code 130");
  }
  fs::create_directories(new_dir.parent_path());
  fs::rename(old_dir, new_dir);
  // Another seed: refused, naming the run and where it started.
  EXPECT_NE(run_to_end(with(new_dir / "gelu.yaml", true, "6"), log), "0");
  EXPECT_NE(read_all(log).find("run 1 of " + fs::weakly_canonical(old_dir / "gelu.yaml").string() + " (interrupted"),
            std::string::npos) << read_all(log);
  // The same settings: continued to the budget's end, saying where the run started.
  EXPECT_EQ(run_to_end(with(new_dir / "gelu.yaml", true, "5"), log), "0") << read_all(log);
  EXPECT_NE(read_all(log).find("the run was started from " + fs::weakly_canonical(old_dir / "gelu.yaml").string()),
            std::string::npos) << read_all(log);
  EXPECT_EQ(sequence(b).size(), static_cast<size_t>(kEvals));
  EXPECT_EQ(KnowledgeBase::open(b).runs().size(), 1u);
}

// A kill or a closed terminal stops a run as Ctrl-C does: the batch in flight ends, the run is marked
// interrupted and says how to continue, and the exit status is 128 + the signal's number.
TEST_F(Resume, TermAndHangupInterruptLikeCtrlC) {
  for (const int sig : {SIGTERM, SIGHUP}) {
    const auto b = dir_ / ("sig" + std::to_string(sig) + ".sqlite");
    ChildProcess p(args(b, false));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (count(b) < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    ASSERT_EQ(::kill(p.pid(), sig), 0);
    EXPECT_EQ(p.exit_text(60), "exit code " + std::to_string(128 + sig));
    const auto store = KnowledgeBase::open(b);
    EXPECT_EQ(store.runs().back().status, "interrupted") << sig;
  }
}

// The line Ctrl-C prints, run as printed (by a shell, from the same folder), finishes the run: it
// repeats the knowledge base, the budget, the seed and the backend, quoted where a shell needs it.
TEST_F(Resume, TheInterruptHintRepeatsEveryOptionTheResumeNeeds) {
  const auto kb = dir_ / "it's a kb" / "b.sqlite";
  fs::create_directories(kb.parent_path());
  const auto err = dir_ / "stderr.txt";
  {
    std::string cmd = "cd '" + dir_.string() + "' && exec";
    for (const auto& a : args(kb, false)) cmd += " " + shell_word(a);
    ChildProcess p({"/bin/sh", "-c", cmd + " 2>'" + err.string() + "'"});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (count(kb) < 5 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    ASSERT_EQ(::kill(p.pid(), SIGINT), 0);
    EXPECT_EQ(p.exit_text(60), "exit code 130");
  }
  const std::string text = read_all(err);
  const std::string lead = "interrupted; continue with: ";
  const auto at = text.find(lead);
  ASSERT_NE(at, std::string::npos) << text;
  const std::string hint = text.substr(at + lead.size(), text.find('\n', at) - at - lead.size());
  for (const char* part : {"--kb", "--evals 40", "--seed 5", "--backend model", "--resume"})
    EXPECT_NE(hint.find(part), std::string::npos) << part << " missing from: " << hint;
  const std::string log = (dir_ / "resumed.txt").string();
  ASSERT_EQ(std::system(("cd '" + dir_.string() + "' && " + hint + " > '" + log + "' 2>&1").c_str()), 0)
      << hint << "\n" << read_all(log);
  EXPECT_EQ(sequence(kb).size(), static_cast<size_t>(kEvals));
  EXPECT_NE(hint.find("it'\\''s a kb/b.sqlite"), std::string::npos) << "the knowledge base, quoted: " << hint;
}

// A run that stops on an error of the machine (here a full file system of the test's own) keeps
// what it recorded, is marked stopped, and says how to continue; continued once there is room, it
// records what one uninterrupted run does.
TEST_F(Resume, ARunStoppedByAFullDiskResumesToTheUninterruptedRun) {
  const auto a = dir_ / "a.sqlite";
  ASSERT_EQ(run_to_end(args(a, false)), "0");
  const auto disk = dir_ / "disk";
  fs::create_directories(disk);
  const auto kb = disk / "kb.sqlite";
  std::string tune;
  for (const auto& w : args(kb, false)) tune += " " + shell_word(w);
  // In a mount namespace of its own (root: unshare -m; otherwise in a user namespace), so that the
  // mount ends with the shell. The hint is taken from the error's last line and run as printed.
  const std::string script =
      "mount -t tmpfs -o size=200k tmpfs " + shell_word(disk.string()) + " || exit 99\n" + tune +
      " 2> " + shell_word((dir_ / "err1.txt").string()) + "\necho \"first exit $?\"\n"
      "mount -o remount,size=8m " + shell_word(disk.string()) + "\n"
      "hint=$(tail -n 1 " + shell_word((dir_ / "err1.txt").string()) + ")\n"
      "eval \"$hint\" > /dev/null 2>&1\necho \"second exit $?\"\n"
      "cp " + shell_word(kb.string()) + " " + shell_word((dir_ / "copy.sqlite").string()) + "\n";
  const auto script_file = dir_ / "script.sh";
  test::write_file(script_file, script);
  const auto out = dir_ / "out.txt";
  const std::string unshare = geteuid() == 0 ? "unshare -m" : "unshare -rm";
  std::system((unshare + " sh " + shell_word(script_file.string()) + " > " + shell_word(out.string()) + " 2>&1").c_str());
  const std::string said = read_all(out);
  if (said.find("first exit") == std::string::npos)
    GTEST_SKIP() << "cannot mount a small file system here (" << unshare << "): " << said;
  const std::string err = read_all(dir_ / "err1.txt");
  EXPECT_NE(said.find("first exit 1"), std::string::npos) << said << err;
  EXPECT_NE(err.find("disk is full"), std::string::npos) << err;
  EXPECT_NE(err.find("the run stopped; what it recorded is kept"), std::string::npos) << err;
  EXPECT_NE(said.find("second exit 0"), std::string::npos) << said << err;
  EXPECT_EQ(sequence(dir_ / "copy.sqlite"), sequence(a));
  const auto store = KnowledgeBase::open(dir_ / "copy.sqlite");
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].status, "finished");
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

TEST_F(Resume, EarlierRunsAtOtherShapesSeedANewOne) {
  const auto kb = dir_ / "kb.sqlite";
  ASSERT_EQ(run_to_end({kSoltune, "tune", kConfig, "--backend", "model", "--evals", "8", "--kb", kb.string(), "-q"}), "0");
  // The same problem at a shape never tuned: it starts from what did best at the other shapes.
  const auto cfg = dir_ / "small.yaml";
  std::ofstream(cfg) << "problem: gelu\ndtypes: [f32]\nshapes: [{n: 4096}]\nbudget: {evals: 4}\nseed: 1\n"
                     << "templates: " << SOLTUNE_SOURCE_DIR << "/templates\n";
  const auto log = dir_ / "log";
  const std::string cmd = "'" + kSoltune + "' tune '" + cfg.string() + "' --backend model --kb '" + kb.string() + "' > '" +
                          log.string() + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(log);
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(out.find("gelu/vectorized/f32/n=4096: seeded with 2 configuration(s)"), std::string::npos) << out;
  // The seeds are the other shapes' best configurations, evaluated first and for real here.
  const auto store = KnowledgeBase::open(kb);
  const auto best = store.best("gelu");
  std::set<std::string> seeds;
  for (const auto& r : best)
    if (r.dtype == "f32" && r.shape_key != "n=4096") seeds.insert(r.config_key);
  const auto runs = store.runs();
  const auto results = store.results(runs.back().id);
  ASSERT_GE(results.size(), 2u);
  EXPECT_TRUE(seeds.count(results[0].config_key)) << results[0].config_key;
  EXPECT_TRUE(seeds.count(results[1].config_key)) << results[1].config_key;
  EXPECT_EQ(results[0].shape_key, "n=4096");
}

TEST_F(Resume, AnEditedTemplatesNewValuesAreTriedOnTheOldBest) {
  // An earlier text of the gelu template (another comment, so another source hash) with fewer knob
  // values, searched to the end; then the shipped text, which has more. Its first proposals are the
  // old best, then the old best with each value the earlier text lacked, one knob at a time.
  const auto old_templates = dir_ / "templates";
  fs::create_directories(old_templates);
  fs::copy(SOLTUNE_SOURCE_DIR "/templates/gelu", old_templates / "gelu", fs::copy_options::recursive);
  std::ofstream(old_templates / "gelu" / "vectorized.cu", std::ios::app) << "// an earlier text\n";
  const auto yaml = old_templates / "gelu" / "vectorized.yaml";
  std::string text = read_all(yaml);
  const std::map<std::string, std::string> narrower{
      {"BLOCK", "[128, 256]"}, {"VEC", "[4]"}, {"EPT", "[1, 2]"}, {"GRID_STRIDE", "[0]"}, {"CACHE_HINT", "[0]"}};
  for (const auto& [knob, values] : narrower) {
    const auto at = text.find("  " + knob + ": {values: [");
    ASSERT_NE(at, std::string::npos) << knob;
    const auto from = text.find('[', at), to = text.find(']', at);
    text.replace(from, to - from + 1, values);
  }
  std::ofstream(yaml) << text;
  auto config = [&](const fs::path& templates, int evals) {
    const auto cfg = dir_ / ("cfg" + std::to_string(evals) + ".yaml");
    std::ofstream(cfg) << "problem: gelu\nvariants: [vectorized]\ndtypes: [f32]\nshapes: [{n: 1048576}]\n"
                       << "budget: {evals: " << evals << "}\nseed: 3\ntemplates: " << templates.string() << "\n";
    return cfg.string();
  };
  const auto kb = dir_ / "kb.sqlite";
  ASSERT_EQ(run_to_end({kSoltune, "tune", config(old_templates, 40), "--backend", "model", "--kb", kb.string(), "-q"}), "0");
  ASSERT_EQ(run_to_end({kSoltune, "tune", config(SOLTUNE_SOURCE_DIR "/templates", 16), "--backend", "model", "--kb",
                        kb.string(), "-q"}),
            "0");
  const auto store = KnowledgeBase::open(kb);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  const auto old_results = store.results(runs[0].id);
  ASSERT_EQ(old_results.size(), 4u);  // 128 or 256 threads, 1 or 2 vectors: every one measured
  const auto results = store.results(runs[1].id);
  std::string listed;
  for (const auto& r : results) listed += r.config_key + " (" + r.proposer + ")\n";
  // The old best (the first of the fastest, as the knowledge base orders them), then the new values
  // on it, in knob order: BLOCK 64, 512, 1024, VEC 1, 2, EPT 4, 8, a grid-stride loop, the cache hint
  // (FAST_TANH 1 is new too, but not at f32; BLOCKS_PER_SM needs the grid-stride loop as well).
  const auto best = *std::min_element(old_results.begin(), old_results.end(), [](const auto& x, const auto& y) {
    return x.time_us < y.time_us;  // the first of equals: min_element keeps the earliest
  });
  auto with = [&](const std::string& knob, const std::string& value) {
    std::string key = "," + best.config_key + ",";
    const auto at = key.find("," + knob + "=") + knob.size() + 2;
    key.replace(at, key.find(',', at) - at, value);
    return key.substr(1, key.size() - 2);
  };
  const std::vector<std::string> want{best.config_key, with("BLOCK", "64"), with("BLOCK", "512"),
                                      with("BLOCK", "1024"), with("VEC", "1"), with("VEC", "2"), with("EPT", "4"),
                                      with("EPT", "8"), with("GRID_STRIDE", "1"), with("CACHE_HINT", "1")};
  // Before them all, the problem's fallback (the first preset: today's text has not measured it).
  ASSERT_GE(results.size(), want.size() + 1) << listed;
  EXPECT_EQ(results[0].proposer, "archivist.preset") << listed;
  EXPECT_EQ(results[0].config_key, "BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=1,BLOCKS_PER_SM=8,FAST_TANH=0,CACHE_HINT=0") << listed;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(results[i + 1].config_key, want[i]) << i << "\n" << listed;
    EXPECT_EQ(results[i + 1].proposer, "archivist.seed") << i << "\n" << listed;
  }
}

}  // namespace
}  // namespace soltune
