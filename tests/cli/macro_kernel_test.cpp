// A kernel written as a macro program (knobs as -D definitions) tunes on the model backend, every
// configuration compiled with its own definitions, and exports to a header in which each set of
// definitions has a copy of the source of its own, and no macro reaches the code that includes it.
#include <nlohmann/json.hpp>

#include <set>

#include "../support/files.hpp"
#include "../support/macro_variants.hpp"
#include "../support/npy.hpp"
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
    test::remove_variant(t / "gelu", "vectorized");
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

// The shipped pnpoly, a port of a Kernel Tuner-style kernel: knobs as definitions, a `%`
// restriction, float2 points, the polygon in a __constant__ array read from a .npy file, an int
// output. It tunes on the model backend, a file that does not fit stops the run before it starts,
// and the export takes the polygon as a parameter of its launch function.
TEST_F(MacroKernel, APortedKernelWithConstantMemoryTunesAndExports) {
  const auto t = tmp_ / "templates";
  fs::create_directories(t);
  fs::copy(kSource / "templates" / "pnpoly", t / "pnpoly", fs::copy_options::recursive);
  const auto yaml = t / "pnpoly" / "problem.yaml";
  const auto edited = test::pnpoly_vertices_from_file(read(yaml));
  ASSERT_FALSE(edited.empty());
  write(yaml, edited);
  std::vector<float> poly(1200);
  for (size_t i = 0; i < poly.size(); ++i) poly[i] = static_cast<float>((i * 7919) % 2001) / 1000.0f - 1.0f;
  ASSERT_TRUE(test::write_npy(t / "pnpoly" / "polygon.npy", poly, "<f4", "(600, 2)"));
  const auto cfg = tmp_ / "pnpoly.yaml";
  write(cfg, "problem: pnpoly\nshapes: [{n: 1048576, nv: 600}]\nbudget: {evals: 8}\nseed: 1\nbackend: model\ntemplates: " +
                 t.string() + "\n");
  auto r = soltune("tune " + q(cfg) + " --check");
  ASSERT_EQ(r.code, 0) << r;
  r = soltune("tune " + q(cfg) + " --kb " + q(kb_) + " -q");
  ASSERT_EQ(r.code, 0) << r;
  const auto header = tmp_ / "pnpoly.cuh";
  r = soltune("export --kb " + q(kb_) + " --problem pnpoly --templates " + q(t) + " --allow-predicted -o " + q(header));
  ASSERT_EQ(r.code, 0) << r;
  const auto h = read(header);
  EXPECT_NE(h.find("pnpoly_f32(const float2* points, const float* vertices, int* inside, long long n, long long nv"),
            std::string::npos);
  EXPECT_NE(h.find("cudaMemcpyToSymbolAsync("), std::string::npos);
  EXPECT_NE(h.find("cudaLibraryGetGlobal(&sym, &sym_bytes, kernel.lib, \"vertices\")"), std::string::npos);

  // A polygon of the wrong size, and one of the wrong dtype: refused before anything runs.
  poly.resize(1100);
  ASSERT_TRUE(test::write_npy(t / "pnpoly" / "polygon.npy", poly, "<f4", "(550, 2)"));
  r = soltune("tune " + q(cfg) + " --kb " + q(tmp_ / "other.sqlite"));
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("polygon.npy: 1100 elements, 'vertices' needs 1200 at n=1048576,nv=600"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(tmp_ / "other.sqlite"));
  ASSERT_TRUE(test::write_npy(t / "pnpoly" / "polygon.npy", std::vector<double>(1200), "<f8", "(600, 2)"));
  r = soltune("tune " + q(cfg) + " --check");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("holds '<f8' elements, the argument is f32"), std::string::npos) << r;

  const auto nvcc = test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc on this machine";
  r = shell(q(nvcc) + " -std=c++17 -arch=sm_90 -DEXPORTED='\"" + header.string() + "\"' -o " + q(tmp_ / "check") + " " +
            q(kSource / "tests" / "export" / "pnpoly_export_check.cu") + " > " + q(tmp_ / "stdout.txt") + " 2> " +
            q(tmp_ / "stderr.txt"));
  ASSERT_EQ(r.code, 0) << r;
}

// A source that defines one of the macros soltune sets (unguarded) would compile every
// configuration alike: refused before tuning, naming the line, on any backend.
TEST_F(MacroKernel, ASourceThatRedefinesADefineIsRefusedWithItsLine) {
  const auto t = templates();
  const auto cu = t / "gelu" / "macro.cu";
  const int line = test::replace_in_file(cu, "#ifndef ITEMS\n#define ITEMS 1\n#endif\n", "#define ITEMS 1\n");
  const auto cfg = tmp_ / "macro.yaml";
  write(cfg, "problem: gelu\ndtypes: [f32]\nshapes: [{n: 4099}]\nbudget: {evals: 4}\nbackend: model\ntemplates: " +
                 t.string() + "\n");
  const auto r = soltune("tune " + q(cfg) + " --check");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("macro.cu:" + std::to_string(line) + ": '#define ITEMS' overrides the value soltune defines for it"),
            std::string::npos) << r;
  EXPECT_NE(r.err.find("guard it with #ifndef ITEMS"), std::string::npos) << r;
}

}  // namespace
}  // namespace soltune
