// A kernel written as a macro program (knobs as -D definitions) tunes on the model backend, every
// configuration compiled with its own definitions, and exports to a header in which each set of
// definitions has a copy of the source of its own, and no macro reaches the code that includes it.
#include <nlohmann/json.hpp>

#include <set>

#include "../support/macro_variants.hpp"
#include "cli_fixture.hpp"

namespace soltune {
namespace {

class MacroKernel : public Cli {
 protected:
  // tmp_/templates/gelu with the macro variant alone.
  fs::path templates() const {
    const auto t = tmp_ / "templates";
    fs::create_directories(t);
    fs::copy(kSource / "templates" / "gelu", t / "gelu", fs::copy_options::recursive);
    fs::remove(t / "gelu" / "vectorized.yaml");
    test::add_macro_gelu(t / "gelu");
    return t;
  }
};

TEST_F(MacroKernel, TunesOnTheModelBackendAndExportsWithoutLeakingMacros) {
  const auto t = templates();
  const auto cfg = tmp_ / "macro.yaml";
  write(cfg, "problem: gelu\ndtypes: [f32, bf16]\nshapes: [{n: 1048576}, {n: 4099}]\nbudget: {evals: 60}\nseed: 2\n"
             "backend: model\ntemplates: " + t.string() + "\n");
  auto r = soltune("tune " + q(cfg) + " --kb " + q(kb_) + " -q");
  ASSERT_EQ(r.code, 0) << r;
  r = soltune("kb show 1 --kb " + q(kb_) + " --json");
  ASSERT_EQ(r.code, 0) << r;
  // 13 legal configurations of 15 (block_size_x 32 only with ITEMS 1) per task, each compiled: the
  // registers ptxas reports differ between them, so the definitions reached the compiles.
  const auto j = nlohmann::json::parse(r.out)["results"];
  std::set<std::string> keys;
  std::set<int> registers;
  for (const auto& row : j) {
    EXPECT_TRUE(row["status"] == "ok" || row["status"] == "slow") << row.dump();
    keys.insert(row["config_key"].get<std::string>());
    registers.insert(row["registers"].get<int>());
  }
  EXPECT_EQ(keys.size(), 13u);
  EXPECT_GE(registers.size(), 2u) << "every configuration compiled to the same kernel";

  const auto header = tmp_ / "gelu.cuh";
  r = soltune("export --kb " + q(kb_) + " --problem gelu --templates " + q(t) + " --allow-predicted -o " + q(header));
  ASSERT_EQ(r.code, 0) << r;
  const auto text = read(header);
  EXPECT_NE(text.find("#pragma push_macro(\"block_size_x\")"), std::string::npos);
  EXPECT_NE(text.find("#pragma pop_macro(\"TILE\")"), std::string::npos) << "the source's own macro is scoped too";
  EXPECT_NE(text.find("namespace v_macro_"), std::string::npos);
  const auto nvcc = test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc on this machine";
  // The caller's own block_size_x survives the header; TILE and ITEMS stay undefined.
  write(tmp_ / "main.cu", "#define block_size_x 7\n#include \"gelu.cuh\"\n"
                          "static_assert(block_size_x == 7, \"the caller's macro was changed\");\n"
                          "#if defined(TILE) || defined(ITEMS) || defined(real)\n#error a kernel's macro leaked\n#endif\n"
                          "#undef block_size_x\n#include \"" + (kSource / "tests" / "export" / "gelu_export_check.cu").string() + "\"\n");
  const std::string build = q(nvcc) + " -std=c++17 -arch=sm_90 -DEXPORTED='\"" + header.string() + "\"' -I" + q(tmp_) +
                            " -o " + q(tmp_ / "check") + " " + q(tmp_ / "main.cu");
  r = shell(build + " > " + q(tmp_ / "stdout.txt") + " 2> " + q(tmp_ / "stderr.txt"));
  ASSERT_EQ(r.code, 0) << r;
}

}  // namespace
}  // namespace soltune
