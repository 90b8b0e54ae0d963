// soltune export after a template edit: results measured with the earlier text are exported where
// that text and today's compile to the same machine code (a comment added), and refused where the
// code changed. Measured results without a GPU: the replay backend on the recorded GELU landscape.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "cli_fixture.hpp"

namespace soltune {
namespace {

class ExportEarlier : public Cli {};

TEST_F(ExportEarlier, ResultsOfAnEarlierTextCountOnlyWhereItsMachineCodeIsTodays) {
  const auto templates = tune_gelu_replay();
  ASSERT_FALSE(HasFailure());
  const auto export_to = [&](const std::string& name) {
    return soltune("export --kb " + q(kb_) + " --problem gelu --templates " + q(templates) + " -o " + q(tmp_ / name));
  };
  auto r = export_to("today.cuh");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.err.find("earlier text"), std::string::npos) << r;
  const auto today = read(tmp_ / "today.cuh");

  // A comment: another source hash, the same machine code. The measurement is exported with a note.
  const auto cu = templates / "gelu" / "vectorized.cu";
  const auto text = read(cu);
  write(cu, "// a comment that moves every line\n" + text);
  r = export_to("comment.cuh");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.err.find("1 tuned shape(s) exported from results of an earlier text"), std::string::npos) << r;
  const auto commented = read(tmp_ / "comment.cuh");
  EXPECT_NE(commented.find("compiles to the same machine code as today's (checked at export)"), std::string::npos);
  EXPECT_NE(commented.find("// a comment that moves every line"), std::string::npos);  // today's source travels
  auto config_of = [](const std::string& h) {
    const auto at = h.find("knobs: ");
    return at == std::string::npos ? std::string() : h.substr(at, h.find(';', at) - at);
  };
  EXPECT_FALSE(config_of(today).empty());
  EXPECT_EQ(config_of(today), config_of(commented));

  // A changed constant: other code, so the earlier results say nothing about it.
  std::string changed = text;
  const auto k = changed.find("0.044715f");
  ASSERT_NE(k, std::string::npos);
  changed.replace(k, 9, "0.044716f");
  write(cu, changed);
  r = export_to("changed.cuh");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("compiles to today's machine code"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(tmp_ / "changed.cuh"));
}

// After an edit that leaves the machine code as it was, a re-tune measures the old best again. Its
// measurement is the one exported, even where the earlier text's was faster: it was taken beside
// today's other configurations. The second tune replays a recording 5% slower than the first.
TEST_F(ExportEarlier, TodaysMeasurementOfAKernelWinsOverAnEarlierOne) {
  const auto templates = tune_gelu_replay();
  ASSERT_FALSE(HasFailure());
  auto slower = nlohmann::json::parse(read(kSource / "tests" / "data" / "gelu_f32_landscape.json"));
  for (auto& [key, res] : slower.at("results").items())
    for (const char* field : {"us", "q1_us", "q3_us"})
      if (res.contains(field) && res[field].is_number()) res[field] = res[field].get<double>() * 1.05;
  write(tmp_ / "slower.json", slower.dump());
  tune_gelu_replay([](const fs::path& gelu) {
    const auto cu = gelu / "vectorized.cu";
    write(cu, "// a comment that moves every line\n" + read(cu));
  }, tmp_ / "slower.json");
  ASSERT_FALSE(HasFailure());
  const auto r = soltune("export --kb " + q(kb_) + " --problem gelu --templates " + q(templates) + " -o " + q(tmp_ / "g.cuh"));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.err.find("today's measurements of those are used"), std::string::npos) << r;
  EXPECT_EQ(r.err.find("exported from results of an earlier text"), std::string::npos) << r;
  EXPECT_EQ(read(tmp_ / "g.cuh").find("measured with an earlier text"), std::string::npos);
}

}  // namespace
}  // namespace soltune
