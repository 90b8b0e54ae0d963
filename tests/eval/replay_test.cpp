// The replay backend and the landscape file: a landscape survives a round trip through its file,
// answers every recorded configuration as recorded and anything else as illegal, and a damaged or
// foreign file is refused with its name. The recorded H200 landscapes (tests/data) load, carry
// their template's geometry, and their knobs are still the template's.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "../support/errors.hpp"
#include "../support/files.hpp"
#include "../support/synthetic_landscape.hpp"
#include "core/run_config.hpp"
#include "eval/replay_evaluator.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

Landscape small() {
  return test::synthetic_landscape({{"A", {1, 2, 4}}, {"B", {1, 2}}}, {"A * B <= 4"}, [](const Bindings& b) {
    return b.at("A") == 4 ? -1.0 : 10 + b.at("A") + b.at("B");
  });
}

TEST(Replay, LandscapeRoundTripsThroughItsFile) {
  const auto dir = fs::temp_directory_path() / ("soltune-replay-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto l = small();
  l.recorded = "2026-11-29T00:00:00Z";
  l.timing = "gate off, settle 100 us";
  EXPECT_FALSE(l.has_geometry());
  auto& v = l.problem.variants.front();
  v.launch.grid = {Expr("cdiv(n, A * 128)", {})};
  v.launch.block = {Expr("A * 32", {})};
  v.launch.smem = Expr("0", {});
  v.inflight_bytes = Expr("B * dtype_bytes", {});
  v.registers = Expr("A * 8 + 20", {});
  l.problem.bytes = Expr("2 * n * dtype_bytes", {});
  save_landscape(l, dir / "a_landscape.json");
  const auto back = load_landscape(dir / "a_landscape.json");
  // The template's launch geometry and model hints travel with the file (the model's prior).
  ASSERT_TRUE(back.has_geometry());
  EXPECT_EQ(back.variant().launch.grid.at(0).text(), "cdiv(n, A * 128)");
  EXPECT_EQ(back.variant().launch.block.at(0).text(), "A * 32");
  EXPECT_EQ(back.variant().inflight_bytes.text(), "B * dtype_bytes");
  EXPECT_EQ(back.variant().registers.text(), "A * 8 + 20");
  EXPECT_EQ(back.problem.bytes.text(), "2 * n * dtype_bytes");
  EXPECT_TRUE(back.problem.flops.empty());
  EXPECT_EQ(back.task_id, l.task_id);
  EXPECT_EQ(back.timing, "gate off, settle 100 us") << "how it was timed travels with the file";
  EXPECT_EQ(back.results.size(), l.results.size());
  EXPECT_EQ(back.best_us(), 12);
  EXPECT_EQ(back.variant().knobs.size(), 2u);
  EXPECT_EQ(back.variant().constraints.at(0).text(), "A * B <= 4");
  EXPECT_EQ(back.fixed.at("sms"), 132);
  for (const auto& [k, r] : l.results) {
    EXPECT_EQ(back.results.at(k).status, r.status) << k;
    EXPECT_EQ(back.results.at(k).time.median_us, r.time.median_us) << k;
  }
  fs::remove_all(dir);
}

// A recording cut short (a deadline, a crash) is kept for `landscape --resume`, but never replayed:
// a strategy compared on part of a space would be measured on a different problem.
TEST(Replay, PartialLandscapeIsRefusedUnlessAsked) {
  const auto dir = fs::temp_directory_path() / ("soltune-partial-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto l = small();
  l.legal = l.results.size() + 3;
  save_landscape(l, dir / "p_landscape.json");
  test::expect_error_with([&] { load_landscape(dir / "p_landscape.json"); }, {"partial landscape", "p_landscape.json"});
  const auto back = load_landscape(dir / "p_landscape.json", true);
  EXPECT_FALSE(back.complete());
  EXPECT_EQ(back.legal, l.results.size() + 3);
  l.legal = 0;  // unknown: the results are the whole space
  save_landscape(l, dir / "w_landscape.json");
  EXPECT_TRUE(load_landscape(dir / "w_landscape.json").complete());
  fs::remove_all(dir);
}

TEST(Replay, AnswersAsRecordedAndUnknownAsIllegal) {
  const auto l = small();
  ReplayEvaluator ev({&l});
  EXPECT_EQ(ev.device().sms, 132);
  EXPECT_EQ(ev.backend_name(), "replay");
  const auto t = l.task();
  EXPECT_EQ(ev.baseline(t).t_ref_us, 1000);
  const Space s(l.variant(), l.fixed);
  const auto rs = ev.evaluate(t, {s.parse_key("A=1,B=1"), s.parse_key("A=4,B=1"), s.parse_key("A=4,B=2")});
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[0].status, Status::ok);
  EXPECT_EQ(rs[0].time.median_us, 12);
  EXPECT_TRUE(rs[0].acc.pass);
  EXPECT_EQ(rs[1].status, Status::compile_error);
  EXPECT_EQ(rs[2].status, Status::illegal);  // A * B = 8: not legal, never recorded
  EXPECT_NE(rs[2].log.find("not in the landscape"), std::string::npos);
  EXPECT_EQ(ev.evaluations(), 3);
  // A task the landscapes do not record is an error that names what they have.
  auto other = t;
  other.dtype = DType::bf16;
  EXPECT_THROW(ev.baseline(other), Error);
}

TEST(Replay, BadFilesAreRefusedWithTheirName) {
  const auto dir = fs::temp_directory_path() / ("soltune-replay-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not_json", "{ this is not json"},
      {"foreign", R"({"format": "something-else"})"},
      {"missing", R"({"format": "soltune-landscape/1", "task": "x"})"},
  };
  for (const auto& [name, text] : cases) {
    const auto p = dir / (name + ".json");
    ASSERT_TRUE(test::write_file(p, text));
    try {
      load_landscape(p);
      ADD_FAILURE() << name << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(load_landscape(dir / "absent.json"), Error);
  fs::remove_all(dir);
}

// The landscapes recorded on the H200: at least three, of different character, each
// matching its template's space as the repository has it now.
TEST(Replay, RecordedLandscapesMatchTheirTemplates) {
  const fs::path data = SOLTUNE_SOURCE_DIR "/tests/data";
  std::vector<fs::path> files;
  if (fs::exists(data))
    for (const auto& e : fs::directory_iterator(data))
      if (e.path().filename().string().find("landscape") != std::string::npos) files.push_back(e.path());
  ASSERT_GE(files.size(), 3u) << "tests/data should hold the recorded landscapes";
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    const auto l = load_landscape(f);
    EXPECT_EQ(l.kind, TimeKind::measured);
    EXPECT_NE(l.gpu.find("H200"), std::string::npos);
    // Self-contained: its own space and the geometry the model's prior needs, so the template
    // may gain knobs after the recording without changing what replays.
    EXPECT_TRUE(l.has_geometry());
    const Space then(l.variant(), l.fixed);
    EXPECT_EQ(then.enumerate_legal(1u << 22).size(), l.results.size()) << "every legal configuration measured";
    // Every knob it recorded is still in the template, with every value it recorded (a template
    // may gain values as it gains knobs: the recording replays its own space).
    const auto p = load_problem(SOLTUNE_SOURCE_DIR "/templates", l.problem.name);
    const auto& v = p.variant(l.variant().name);
    for (const auto& k : l.variant().knobs) {
      const auto it = std::find_if(v.knobs.begin(), v.knobs.end(), [&](const KnobSpec& n) { return n.name == k.name; });
      ASSERT_NE(it, v.knobs.end()) << k.name << " is no longer a knob of the template";
      for (const auto value : k.values)
        EXPECT_NE(std::find(it->values.begin(), it->values.end(), value), it->values.end())
            << k.name << " no longer takes the recorded value " << value;
    }
  }
}

}  // namespace
}  // namespace soltune
