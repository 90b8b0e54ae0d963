// The shipped templates and configs load; geometry and NVRTC name expressions of gelu.
#include "core/problem.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include <filesystem>

#include "../support/errors.hpp"
#include "core/array_file.hpp"
#include "core/device.hpp"
#include "core/run_config.hpp"
#include "core/space.hpp"
#include "core/task.hpp"
#include "../support/files.hpp"
#include "refused.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;
const fs::path kTemplates = SOLTUNE_SOURCE_DIR "/templates";
const fs::path kConfigs = SOLTUNE_SOURCE_DIR "/configs";

TEST(Problem, EveryShippedTemplateLoads) {
  const auto names = list_problems(kTemplates);
  ASSERT_FALSE(names.empty());
  EXPECT_NE(std::find(names.begin(), names.end(), "gelu"), names.end());
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    ProblemSpec p;
    ASSERT_NO_THROW(p = load_problem(kTemplates, name));
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.variants.empty());
    EXPECT_FALSE(p.dtypes.empty());
    EXPECT_FALSE(p.baseline.empty());
    EXPECT_FALSE(p.reference_source.empty());
    for (const auto& v : p.variants) {
      EXPECT_FALSE(v.source.empty()) << v.name;
      EXPECT_FALSE(v.knobs.empty()) << v.name;
      EXPECT_TRUE(fs::exists(v.source_path)) << v.source_path;
    }
  }
}

// Every dtype by name, its C++ type and width; the vector types CUDA has.
TEST(DTypes, NamesTypesAndVectors) {
  for (const DType t : all_dtypes()) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_EQ(dtype_cpp(parse_dtype("u8")), "unsigned char");
  EXPECT_EQ(dtype_cpp(parse_dtype("i8")), "signed char");
  EXPECT_EQ(dtype_cpp(parse_dtype("bool")), "bool");
  EXPECT_EQ(dtype_bytes(parse_dtype("u64")), 8);
  EXPECT_FALSE(dtype_is_float(parse_dtype("u32")));
  EXPECT_TRUE(dtype_is_float(DType::bf16));
  EXPECT_EQ(dtype_vector_cpp(DType::f32, 4), "float4");
  EXPECT_EQ(dtype_vector_cpp(DType::u8, 4), "uchar4");
  EXPECT_EQ(dtype_vector_cpp(DType::i64, 2), "longlong2");
  EXPECT_EQ(dtype_vector_cpp(DType::f64, 4), "");  // 32-byte vectors are deprecated in CUDA 13
  EXPECT_EQ(dtype_vector_cpp(DType::boolean, 2), "");
  EXPECT_THROW(parse_dtype("int"), Error);
}

// OCP's 8-bit floats: one byte, CUDA's storage types, their finite ranges (e4m3 has no infinity and
// stops at 448), no vector types (CUDA's __nv_fp8x4_e4m3 is not a vector of the scalar type).
TEST(DTypes, EightBitFloats) {
  EXPECT_EQ(parse_dtype("e4m3"), DType::e4m3);
  EXPECT_EQ(parse_dtype("e5m2"), DType::e5m2);
  EXPECT_EQ(dtype_cpp(DType::e4m3), "__nv_fp8_e4m3");
  EXPECT_EQ(dtype_cpp(DType::e5m2), "__nv_fp8_e5m2");
  for (const DType t : {DType::e4m3, DType::e5m2}) {
    EXPECT_EQ(dtype_bytes(t), 1);
    EXPECT_TRUE(dtype_is_float(t));
    EXPECT_EQ(dtype_vector_cpp(t, 2), "");
    EXPECT_EQ(npy_descr(t), "");  // NumPy has no 8-bit float: given data comes as a raw file
  }
  EXPECT_EQ(dtype_finite_range(DType::e4m3).max_finite, 448.0);
  EXPECT_EQ(dtype_finite_range(DType::e4m3).min_subnormal, 0x1p-9);
  EXPECT_EQ(dtype_finite_range(DType::e5m2).max_finite, 57344.0);
  EXPECT_EQ(dtype_finite_range(DType::e5m2).min_subnormal, 0x1p-16);
}

TEST(Problem, EveryShippedConfigLoads) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kConfigs)) {
    if (e.path().extension() != ".yaml") continue;
    SCOPED_TRACE(e.path().string());
    RunConfig c;
    ASSERT_NO_THROW(c = load_run_config(e.path()));
    EXPECT_FALSE(c.shapes.empty());
    EXPECT_FALSE(c.dtypes.empty());
    EXPECT_TRUE(c.budget.evals > 0 || c.budget.seconds > 0);
    EXPECT_EQ(c.spec.name, c.problem);
    ++n;
  }
  EXPECT_GE(n, 1);
}

// Attention's shapes that make no sense are refused where the config gives them, with why: a head
// dimension it has no kernel for, query heads that do not share key/value heads evenly, a causal
// mask that leaves queries without a key, an empty sequence.
TEST(Problem, AttentionRefusesShapesWithoutMeaning) {
  const test::TempDir dir("attention-shapes");
  const auto cfg = dir.path() / "a.yaml";
  auto refused = [&](const std::string& shape, const std::string& why) {
    ASSERT_TRUE(test::write_file(cfg, "problem: attention\ntemplates: " + kTemplates.string() + "\nshapes:\n  - " + shape +
                                           "\nbudget: {evals: 4}\n"));
    test::expect_error_with([&] { load_run_config(cfg); }, {"a.yaml:4:", why});
  };
  refused("{b: 1, h: 8, h_kv: 8, s_q: 64, s_k: 64, d: 96}", "size 'd' takes 64, 128, 256");
  refused("{b: 1, h: 6, h_kv: 4, s_q: 64, s_k: 64, d: 64}", "h must be a multiple of h_kv");
  refused("{b: 1, h: 8, h_kv: 8, s_q: 65, s_k: 64, d: 64, causal: 1}", "leaves the first s_q - s_k queries without a key");
  refused("{b: 1, h: 8, h_kv: 8, s_q: 64, s_k: 0, d: 64}", "size 's_k' must be positive");
  ASSERT_TRUE(test::write_file(cfg, "problem: attention\ntemplates: " + kTemplates.string() +
                                        "\nshapes:\n  - {b: 1, h: 8, h_kv: 2, s_q: 65, s_k: 64, d: 64}\nbudget: {evals: 4}\n"));
  EXPECT_EQ(load_run_config(cfg).shapes.at(0).key(), "b=1,h=8,h_kv=2,s_q=65,s_k=64,d=64,causal=0");
}

TEST(Problem, GeluConfigContents) {
  const auto c = load_run_config(kConfigs / "gelu.yaml");
  EXPECT_EQ(c.problem, "gelu");
  EXPECT_EQ(c.dtypes, (std::vector<DType>{DType::f32, DType::bf16}));
  ASSERT_EQ(c.shapes.size(), 2u);
  EXPECT_EQ(c.shapes[0].key(), "n=268435456");
  EXPECT_EQ(c.shapes[1].at("n"), 1000003);
  EXPECT_EQ(c.budget.evals, 320);
  EXPECT_EQ(c.budget.seconds, 900);
  EXPECT_EQ(c.seed, 42u);
  EXPECT_EQ(c.model_gpu, "H200");
  // {gpu} becomes the device's slug, relative to the config's folder.
  const auto kb = kb_path(c, *find_known_gpu("H200"));
  EXPECT_EQ(kb.filename(), "nvidia-h200.sqlite");
  EXPECT_EQ(kb.parent_path().filename(), "kb");
  EXPECT_EQ(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
}

TEST(Problem, GeluSpec) {
  const auto p = load_problem(kTemplates, "gelu");
  EXPECT_EQ(p.sizes, (std::vector<std::string>{"n"}));
  ASSERT_EQ(p.args.size(), 3u);
  EXPECT_TRUE(p.args[0].is_buffer);
  EXPECT_EQ(p.args[0].role, Role::in);
  EXPECT_EQ(p.args[0].init.kind, InitSpec::Kind::normal);
  EXPECT_EQ(p.args[0].init.b, 3);
  ASSERT_EQ(p.args[0].edge_inits.size(), 2u);
  EXPECT_EQ(p.args[0].edge_inits[0].kind, InitSpec::Kind::uniform);
  EXPECT_EQ(p.args[0].edge_inits[0].b, 3.0e38);
  EXPECT_EQ(p.args[0].edge_inits[1].b, 1.0e-37);
  EXPECT_EQ(p.args[1].role, Role::out);
  EXPECT_FALSE(p.args[2].is_buffer);
  EXPECT_EQ(p.args[2].resolve_dtype(DType::bf16), DType::i64);
  EXPECT_EQ(p.args[0].resolve_dtype(DType::bf16), DType::bf16);
  EXPECT_EQ(p.baseline.size(), 8u);
  EXPECT_EQ(p.baseline_temps.size(), 2u);
  EXPECT_GT(p.tolerance.at(DType::bf16).rtol, p.tolerance.at(DType::f32).rtol);  // bf16 rounds coarser
  EXPECT_THROW(p.variant("scalar"), Error);
  EXPECT_EQ(p.find_arg("nope"), nullptr);

  Task t{&p, &p.variant("vectorized"), DType::f32, Shape{{{"n", 1000003}}}};
  EXPECT_EQ(t.id(), "gelu/vectorized/f32/n=1000003");
  EXPECT_EQ(t.flops(), 9.0 * 1000003);
  EXPECT_EQ(t.bytes(), 2.0 * 1000003 * 4);
  t.dtype = DType::bf16;
  EXPECT_EQ(t.bytes(), 2.0 * 1000003 * 2);
  EXPECT_EQ(buffer_elements(p.args[0], t.sizes()), 1000003);
}

TEST(Problem, GeluGeometry) {
  const auto p = load_problem(kTemplates, "gelu");
  const auto& v = p.variant("vectorized");
  const auto h200 = *find_known_gpu("H200");
  Task t{&p, &v, DType::f32, Shape{{{"n", 1000003}}}};
  const Space s(v, t.fixed(h200));
  // One pass: a block per tile of 256 x 4 x 4 = 4096 elements: ceil(1000003 / 4096) = 245 blocks.
  auto g = eval_geometry(v.launch, s.bind(s.parse_key(
                                       "BLOCK=256,VEC=4,EPT=4,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0")));
  EXPECT_EQ(g.grid, (std::array<int64_t, 3>{245, 1, 1}));
  EXPECT_EQ(g.block, (std::array<int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(g.smem, 0);
  EXPECT_EQ(g.str(), "grid=(245,1,1) block=(256,1,1) smem=0");
  // Grid-stride: min(sms x 2, ceil(1000003 / 128)) = min(264, 7813) blocks on an H200 (132 SMs).
  ASSERT_EQ(h200.sms, 132);
  g = eval_geometry(v.launch, s.bind(s.parse_key(
                                  "BLOCK=128,VEC=1,EPT=1,GRID_STRIDE=1,BLOCKS_PER_SM=2,FAST_TANH=0,CACHE_HINT=0")));
  EXPECT_EQ(g.grid[0], 264);
  EXPECT_EQ(g.block[0], 128);
  EXPECT_EQ(g.threads(), 264 * 128);
  // Grid-stride, but fewer tiles than SM slots: the tile count wins. 1024 x 4 x 8 = 32768 -> 31.
  g = eval_geometry(v.launch, s.bind(s.parse_key(
                                  "BLOCK=1024,VEC=4,EPT=8,GRID_STRIDE=1,BLOCKS_PER_SM=16,FAST_TANH=0,CACHE_HINT=0")));
  EXPECT_EQ(g.grid[0], 31);
  // The reference and the baseline launches.
  g = eval_geometry(p.reference, t.fixed(h200));
  EXPECT_EQ(g.grid[0], 3907);  // ceil(1000003 / 256)
  EXPECT_EQ(g.block[0], 256);
  // A zero-sized grid is refused.
  Task empty{&p, &v, DType::f32, Shape{{{"n", 0}}}};
  EXPECT_THROW(eval_geometry(p.reference, empty.fixed(h200)), Error);
}

TEST(Problem, NameExpression) {
  const auto p = load_problem(kTemplates, "gelu");
  const auto& v = p.variant("vectorized");
  Task t{&p, &v, DType::f32, Shape{{{"n", 1000003}}}};
  const Space s(v, t.fixed(*find_known_gpu("H200")));
  const auto b = s.bind(s.parse_key("BLOCK=256,VEC=4,EPT=2,GRID_STRIDE=1,BLOCKS_PER_SM=8,FAST_TANH=0,CACHE_HINT=1"));
  EXPECT_EQ(name_expression(v.launch, DType::f32, b), "gelu_tanh<float, 256, 4, 2, 1, 0, 1>");
  EXPECT_EQ(name_expression(v.launch, DType::bf16, b), "gelu_tanh<__nv_bfloat16, 256, 4, 2, 1, 0, 1>");
  EXPECT_EQ(name_expression(p.reference, DType::bf16, {}), "gelu_reference<__nv_bfloat16>");
  EXPECT_EQ(name_expression(p.baseline[1], DType::f32, {}), "op_scale<float, 0>");
  EXPECT_EQ(name_expression(p.baseline[3], DType::f32, {}), "op_scale<float, 1>");
  LaunchSpec plain;
  plain.kernel = "k";
  EXPECT_EQ(name_expression(plain, DType::f32, {}), "k");
}

TEST(Problem, ATemplateArgumentMayNameASize) {
  const auto p = load_problem(kTemplates, "rmsnorm");
  const auto& v = p.variant("looped");
  const auto sizes = size_template_args(v, p);
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0].text(), "WIDTH * cols");
  EXPECT_TRUE(size_template_args(load_problem(kTemplates, "softmax").variant("cached"), p).empty());
  Task t{&p, &v, DType::f32, Shape{{{"rows", 8192}, {"cols", 4096}}}};
  const Space s(v, t.fixed(*find_known_gpu("H200")));
  const auto c = s.parse_key("TPR=512,RPB=1,VEC=4,UNROLL=1,STAGE=0,PERSIST=0,BPS=4,HINT=0,WIDTH=1");
  EXPECT_EQ(name_expression(v.launch, DType::f32, s.bind(c)), "rmsnorm_looped<float, 512, 1, 4, 1, 0, 0, 4, 0, 1, 4096>");
  // An export binds the same from the specialization's knob values and tuned sizes.
  EXPECT_EQ(name_expression(v.launch, DType::f32, specialization_bindings(v, c.values, t.shape.dims)),
            "rmsnorm_looped<float, 512, 1, 4, 1, 0, 0, 4, 0, 1, 4096>");
  // Without WIDTH the size is not compiled in: one kernel for every width.
  const auto generic = s.parse_key("TPR=512,RPB=1,VEC=4,UNROLL=1,STAGE=0,PERSIST=0,BPS=4,HINT=0,WIDTH=0");
  EXPECT_EQ(name_expression(v.launch, DType::f32, s.bind(generic)), "rmsnorm_looped<float, 512, 1, 4, 1, 0, 0, 4, 0, 0, 0>");
}

TEST(Problem, WorkspaceArgument) {
  const auto p = load_problem(kTemplates, "l1norm");
  const auto* ws = p.find_arg("ws");
  ASSERT_NE(ws, nullptr);
  EXPECT_TRUE(ws->is_buffer);
  EXPECT_EQ(ws->role, Role::workspace);
  EXPECT_EQ(role_name(ws->role), "workspace");
  EXPECT_EQ(ws->resolve_dtype(DType::bf16), DType::i32);
  // Its shape sees the device symbols: [4 + 16 * sms] on an H200 (132 SMs).
  Task t{&p, &p.variants.front(), DType::f32, Shape{{{"n", 1000003}}}};
  EXPECT_EQ(buffer_elements(*ws, t.fixed(*find_known_gpu("H200"))), 4 + 16 * 132);
  // Not part of the problem's bytes: x read once, y written.
  EXPECT_EQ(t.bytes(), 1000003.0 * 4 + 4);
  // The reference and the variant are passed it.
  EXPECT_NE(std::find(p.reference.args.begin(), p.reference.args.end(), "ws"), p.reference.args.end());
  for (const auto& v : p.variants)
    EXPECT_NE(std::find(v.launch.args.begin(), v.launch.args.end(), "ws"), v.launch.args.end()) << v.name;
}

// A copy of templates/l1norm with one line of problem.yaml changed must be refused at that line.
TEST(Problem, WorkspaceMistakesAreRefusedWithFileAndLine) {
  struct Case {
    std::string from, to, phrase;
  };
  const std::vector<Case> cases = {
      {"role: workspace}", "role: scratch}", "expected role 'in', 'out', 'inout' or 'workspace', got 'scratch'"},
      {"role: workspace}", "role: workspace, init: \"normal(0, 1)\"}", "a workspace starts zeroed"},
      // Only a workspace's shape may depend on the device.
      {"shape: [1], role: out}", "shape: [sms], role: out}", "uses unknown name 'sms'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.to);
    const test::TempDir root("workspace");
    fs::copy(kTemplates / "l1norm", root.path() / "l1norm", fs::copy_options::recursive);
    const int line = test::replace_in_file(root.path() / "l1norm" / "problem.yaml", c.from, c.to);
    test::expect_load_refused(root.path(), "l1norm", {"problem.yaml:" + std::to_string(line) + ":", c.phrase});
  }
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

TEST(RunConfig, StopConditions) {
  const auto dir = std::filesystem::temp_directory_path() / ("soltune-stop-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string head = "problem: gelu\nshapes: [{n: 1024}]\nbudget: {evals: 8}\ntemplates: " SOLTUNE_SOURCE_DIR "/templates\n";
  std::ofstream(dir / "ok.yaml") << head << "stop: {target_sol: 0.98, stagnation: 40}\n";
  const auto c = load_run_config(dir / "ok.yaml");
  EXPECT_EQ(c.stop.target_sol, 0.98);
  EXPECT_EQ(c.stop.stagnation, 40);
  std::ofstream(dir / "bad.yaml") << head << "stop: {target: 0.98}\n";
  test::expect_error_with([&] { load_run_config(dir / "bad.yaml"); }, {"bad.yaml:5", "unknown key 'target'"});
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

// Loads a copy of the gelu templates whose vectorized.yaml reads `text`: it must be refused with an
// error naming vectorized.yaml, `line` and `phrase`.
void expect_refused(const std::string& text, int line, const std::string& phrase) {
  const test::TempDir root("refused");
  fs::copy(kTemplates / "gelu", root.path() / "gelu", fs::copy_options::recursive);
  ASSERT_TRUE(test::write_file(root.path() / "gelu" / "vectorized.yaml", text));
  test::expect_load_refused(root.path(), "gelu", {"vectorized.yaml:" + std::to_string(line) + ":", phrase});
}

// A preset must give every knob a value and name only knobs; the error names the file and line.
TEST(Problem, PresetMistakesAreRefusedWithFileAndLine) {
  const auto original = test::read_file(kTemplates / "gelu" / "vectorized.yaml");
  const std::string from = "FAST_TANH: 0, CACHE_HINT: 0}";
  for (const auto& [to, phrase] : std::vector<std::pair<std::string, std::string>>{
           {"FAST_TANH: 0}", "gives no value for knob 'CACHE_HINT'"},
           {"FAST_TANH: 0, CACHE_HINT: 0, WARP: 1}", "'WARP' is not a knob of this variant"},
           {"FAST_TANH: 0, CACHE_HINT: BLOCK}", "uses unknown name 'BLOCK'"}}) {
    SCOPED_TRACE(to);
    auto text = original;
    const auto pos = text.rfind(from);
    ASSERT_NE(pos, std::string::npos);
    text.replace(pos, from.size(), to);
    expect_refused(text, 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n')), phrase);
  }
}

// `let:` names a derived quantity once: constraints and the launch read it spelled out, and the
// shipped GEMMs' shared memory is the same with it as without.
TEST(Problem, LetsAreSpelledOutWhereNamed) {
  const auto p = load_problem(kTemplates, "matmul");
  const auto& v = p.variant("wgmma_ws");
  EXPECT_EQ(v.launch.smem.text(), "(STAGES * (BM + BN) * 64 * dtype_bytes + EPI * BM * BN * dtype_bytes + 1024)");
  EXPECT_TRUE(std::any_of(v.constraints.begin(), v.constraints.end(), [&](const Expr& c) {
    return c.text() == v.launch.smem.text() + " <= smem_optin";
  }));

  const auto original = test::read_file(kTemplates / "gelu" / "vectorized.yaml");
  const auto with_lets = [&](const std::string& lets, const std::string& smem) {
    auto text = original;
    const auto at = text.find("constraints:");
    text.insert(at, lets);
    const auto sm = text.find("smem: ");
    if (sm != std::string::npos) text.replace(sm, text.find('\n', sm) - sm, "smem: " + smem);
    else text.replace(text.find("launch:\n"), 8, "launch:\n  smem: " + smem + "\n");
    return text;
  };
  {
    test::TempDir root("soltune_let_");
    fs::copy(kTemplates / "gelu", root.path() / "gelu", fs::copy_options::recursive);
    ASSERT_TRUE(test::write_file(root.path() / "gelu" / "vectorized.yaml",
                                 with_lets("let:\n  per_block: BLOCK * VEC\n  bytes: per_block * dtype_bytes\n", "bytes * 2")));
    const auto g = load_problem(root.path(), "gelu");
    EXPECT_EQ(g.variant("vectorized").launch.smem.text(), "((BLOCK * VEC) * dtype_bytes) * 2");
  }
  const int line = 1 + static_cast<int>(std::count(original.begin(), original.begin() + static_cast<long>(original.find("constraints:")), '\n'));
  for (const auto& [lets, phrase] : std::vector<std::pair<std::string, std::string>>{
           {"let:\n  BLOCK: 2\n", "let 'BLOCK' shadows a knob, size or device symbol"},
           {"let:\n  bad: WARP * 2\n", "uses unknown name 'WARP'"},
           {"let:\n  a: b + 1\n  b: 2\n", "uses unknown name 'b'"}}) {  // a let names only those before it
    SCOPED_TRACE(lets);
    expect_refused(with_lets(lets, "0"), line + 1, phrase);
  }
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

// A variant's notes: shown where their `when` holds for a configuration (the shipped norms say that
// HINT 3 leaves y's lines kept in L2), over knobs, sizes and dtype_bytes only.
TEST(Problem, NotesHoldWhereTheirConditionDoes) {
  const auto p = load_problem(kTemplates, "rmsnorm");
  const auto& v = p.variant("rowreg");
  ASSERT_EQ(v.notes.size(), 1u);
  const std::vector<std::pair<std::string, int64_t>> sizes{{"rows", 32768}, {"cols", 1024}};
  std::vector<int64_t> knobs;
  for (const auto& k : v.knobs) knobs.push_back(k.values.front());
  const auto at = [&](int64_t hint) {
    for (size_t i = 0; i < v.knobs.size(); ++i)
      if (v.knobs[i].name == "HINT") knobs[i] = hint;
    return notes_for(v, DType::bf16, knobs, sizes);
  };
  EXPECT_TRUE(at(0).empty());
  ASSERT_EQ(at(3).size(), 1u);
  EXPECT_NE(at(3).front().find("evict_last"), std::string::npos) << at(3).front();
}

// A note's condition may not name a device symbol (an exported kernel runs on any device), and its
// text may not be empty or missing; the error names the file and line.
TEST(Problem, NoteMistakesAreRefusedWithFileAndLine) {
  const auto original = test::read_file(kTemplates / "gelu" / "vectorized.yaml");
  const int line = 2 + static_cast<int>(std::count(original.begin(), original.end(), '\n'));
  for (const auto& [note, phrase] : std::vector<std::pair<std::string, std::string>>{
           {"notes:\n  - {when: sms > 100, text: a note}\n", "uses unknown name 'sms'"},
           {"notes:\n  - {when: VEC == 4, text: \"\"}\n", "a note's text is empty"},
           {"notes:\n  - {when: VEC == 4}\n", "a note takes its words from `text:` or names one of common/notes.yaml"}}) {
    SCOPED_TRACE(note);
    expect_refused(original + note, line, phrase);
  }
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

// A vector buffer's lanes are part of its shape (the parser appends them): its elements, and the
// device memory a task holds, count them once.
TEST(Problem, VectorBuffersCountTheirLanesOnce) {
  const auto p = load_problem(SOLTUNE_SOURCE_DIR "/templates", "pnpoly");
  const ArgSpec* points = p.find_arg("points");
  ASSERT_NE(points, nullptr);
  ASSERT_EQ(points->lanes, 2);
  const Task t{&p, &p.variants.front(), DType::f32, parse_shape(p, "n=1000,nv=20")};
  EXPECT_EQ(buffer_elements(*points, t.sizes()), 2000);
  // The same bytes declared as scalars: the same device memory.
  auto scalars = p;
  for (auto& a : scalars.args)
    if (a.name == "points") a.lanes = 1;
  const Task s{&scalars, &scalars.variants.front(), DType::f32, t.shape};
  EXPECT_DOUBLE_EQ(task_device_bytes(t, 3), task_device_bytes(s, 3));
}

}  // namespace
}  // namespace soltune
