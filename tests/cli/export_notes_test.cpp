// soltune export writes a variant's notes beside each kernel whose configuration makes them hold,
// in the header and in the JSON. Measured results without a GPU: the replay backend on the
// recorded GELU landscape.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "cli_fixture.hpp"

namespace soltune {
namespace {

class ExportNotes : public Cli {};

TEST_F(ExportNotes, NotesThatHoldAreWrittenBesideTheKernel) {
  const auto templates = tune_gelu_replay([&](const fs::path& gelu) {
    const auto yaml = gelu / "vectorized.yaml";
    write(yaml, read(yaml) +
                    "notes:\n"
                    "  - {when: BLOCK > 0, text: every block size}\n"
                    "  - {when: BLOCK < 0, text: no block size}\n"
                    "  - {when: dtype_bytes == 4 && n > 1000, text: f32 at this size}\n"
                    "  - {when: BLOCK > 0, note: named}\n");
    fs::create_directories(gelu.parent_path() / "common");
    write(gelu.parent_path() / "common" / "notes.yaml", "named: a note several variants name\n");
  });
  ASSERT_FALSE(HasFailure());
  const std::string common = "export --kb " + q(kb_) + " --problem gelu --templates " + q(templates);
  auto r = soltune(common + " -o " + q(tmp_ / "gelu.cuh"));
  ASSERT_EQ(r.code, 0) << r;
  const auto h = read(tmp_ / "gelu.cuh");
  EXPECT_NE(h.find("// note: every block size\n"), std::string::npos);
  EXPECT_NE(h.find("// note: f32 at this size\n"), std::string::npos);
  EXPECT_EQ(h.find("no block size"), std::string::npos);
  EXPECT_NE(h.find("// note: a note several variants name\n"), std::string::npos);

  r = soltune(common + " --format json -o " + q(tmp_ / "gelu.json"));
  ASSERT_EQ(r.code, 0) << r;
  const auto j = nlohmann::json::parse(read(tmp_ / "gelu.json"));
  ASSERT_EQ(j.at("specializations").size(), 2u);  // the tuned kernel and the fallback, whose notes hold too
  for (const auto& s : j["specializations"])
    EXPECT_EQ(s.at("notes"), nlohmann::json({"every block size", "f32 at this size", "a note several variants name"})) << s.at("fallback");
}

}  // namespace
}  // namespace soltune
