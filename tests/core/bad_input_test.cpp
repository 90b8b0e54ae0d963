// Broken inputs: a copy of templates/gelu (or a config) with one thing changed must be refused with
// a soltune::Error naming the file, the line (and column) and what was expected.
#include <gtest/gtest.h>

#include "../support/files.hpp"
#include "../support/macro_variants.hpp"
#include "../support/plan_variants.hpp"
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/problem.hpp"
#include "core/run_config.hpp"
#include "core/task.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) { return test::read_file(p); }
void write(const fs::path& p, const std::string& text) { ASSERT_TRUE(test::write_file(p, text)) << p; }

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "soltune-bad-input-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    templates_ = root_ / "templates";
    fs::create_directories(templates_);
    fs::copy(SOLTUNE_SOURCE_DIR "/templates/gelu", templates_ / "gelu", fs::copy_options::recursive);
    fs::create_directories(root_ / "configs");
    config_ = root_ / "configs" / "run.yaml";
    write(config_,
          "problem: gelu\n"
          "dtypes: [f32, bf16]\n"
          "shapes:\n"
          "  - {n: 1000003}\n"
          "budget: {evals: 16}\n"
          "seed: 1\n"
          "backend: model\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  fs::path problem_yaml() const { return templates_ / "gelu" / "problem.yaml"; }
  fs::path variant_yaml() const { return templates_ / "gelu" / "vectorized.yaml"; }

  // Replaces the first occurrence of `from` in the file (which must hold it: else this throws) and
  // returns the 1-based line where the replacement starts.
  int edit(const fs::path& file, const std::string& from, const std::string& to) {
    return test::replace_in_file(file, from, to);
  }

  ProblemSpec load() const { return load_problem(templates_, "gelu"); }

  // problem.yaml's line `good` (at `line`) with `from` replaced by `to` must fail to load there, at
  // `col`, with `phrase`; the good line is put back after.
  void expect_broken_line(const std::string& good, int line, const std::string& from, const std::string& to, int col,
                          const std::string& phrase) {
    std::string bad = good;
    bad.replace(bad.find(from), from.size(), to);
    edit(problem_yaml(), good, bad);
    expect_error([&] { load(); }, problem_yaml(), line, col, {phrase});
    edit(problem_yaml(), bad, good);
  }

  // broken(from, to, col, phrase): expect_broken_line for the good line `good` at `line`.
  auto breaker(std::string good, int line) {
    return [this, good = std::move(good), line](const std::string& from, const std::string& to, int col,
                                                const std::string& phrase) {
      expect_broken_line(good, line, from, to, col, phrase);
    };
  }

  // The message of the Error `f` throws; checks it starts with (or, wrapped by the config's error,
  // contains) "<file name>:<line>:" and, when col > 0, "<col>:", and that it holds every phrase.
  template <typename F>
  void expect_error(F&& f, const fs::path& file, int line, int col, const std::vector<std::string>& phrases) {
    std::string msg;
    try {
      f();
      ADD_FAILURE() << "no error for a broken " << file.filename();
      return;
    } catch (const Error& e) {
      msg = e.what();
    }
    std::string where = file.filename().string() + ":" + std::to_string(line) + ":";
    if (col > 0) where += std::to_string(col) + ":";
    EXPECT_NE(msg.find(where), std::string::npos) << "expected '" << where << "' in: " << msg;
    // The file is named with its folder, not by its base name only.
    EXPECT_NE(msg.find(file.parent_path().filename().string() + "/" + file.filename().string()), std::string::npos)
        << msg;
    for (const auto& p : phrases) EXPECT_NE(msg.find(p), std::string::npos) << "expected '" << p << "' in: " << msg;
  }

  enum File { problem, variant, config };
  // One broken edit of the copy: `from` in `file` becomes `to`; loading must then fail at the edit's
  // line (plus `below`, for a `to` of several lines whose later one is broken), at column `col` (0:
  // unchecked), saying each phrase.
  struct BrokenEdit {
    std::string what;
    File file;
    std::string from, to;
    int below, col;
    std::vector<std::string> phrases;
  };

  // Each edit made alone: the file is put back after its error is checked.
  void expect_each_refused(const std::vector<BrokenEdit>& edits) {
    for (const auto& e : edits) {
      SCOPED_TRACE(e.what);
      const fs::path file = e.file == problem ? problem_yaml() : e.file == variant ? variant_yaml() : config_;
      const auto original = read(file);
      const int line = edit(file, e.from, e.to) + e.below;
      if (e.file == config)
        expect_error([&] { load_run_config(config_); }, file, line, e.col, e.phrases);
      else
        expect_error([&] { load(); }, file, line, e.col, e.phrases);
      write(file, original);
    }
  }

  fs::path root_, templates_, config_;
};

TEST_F(BadInput, CopiesLoadUnchanged) {
  EXPECT_NO_THROW(load());
  EXPECT_NO_THROW(load_run_config(config_));
  EXPECT_EQ(load_run_config(config_).templates_dir.lexically_normal(), templates_.lexically_normal());
}

TEST_F(BadInput, MalformedYaml) {
  const int line = edit(problem_yaml(), "sizes: [n]", "sizes: [n");
  std::string msg;
  try {
    load();
  } catch (const Error& e) {
    msg = e.what();
  }
  ASSERT_FALSE(msg.empty()) << "an unclosed bracket was accepted";
  EXPECT_EQ(msg.rfind(problem_yaml().string() + ":", 0), 0u) << msg;
  EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
  // yaml-cpp notices the unclosed bracket at the bracket's line or a little after it.
  const auto after = msg.substr(problem_yaml().string().size() + 1);
  const int reported = std::stoi(after);
  EXPECT_GE(reported, line) << msg;
  EXPECT_LE(reported, line + 2) << msg;
  EXPECT_NE(after.find(':'), std::string::npos) << "no column in: " << msg;
}

TEST_F(BadInput, MalformedConfigYaml) {
  write(config_, "problem: gelu\nshapes: [{n: 10}\nbudget: {evals: 4}\n");
  std::string msg;
  try {
    load_run_config(config_);
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_EQ(msg.rfind(config_.string() + ":", 0), 0u) << msg;
  EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
}

TEST_F(BadInput, UnknownKeyInProblem) {
  const int line = edit(problem_yaml(), "flops: 9 * n", "flopz: 9 * n");
  expect_error([&] { load(); }, problem_yaml(), line, 1, {"unknown key 'flopz'", "expected one of", "flops"});
  // The same error reaches a config that names the problem.
  expect_error([&] { load_run_config(config_); }, problem_yaml(), line, 1, {"unknown key 'flopz'"});
}

TEST_F(BadInput, UnknownKeysNameWhatWasExpected) {
  expect_each_refused({
      {"in a problem's arg", problem, "role: out}", "role: out, int: normal(0, 1)}", 0, 62, {"unknown key 'int'", "init"}},
      {"in a variant", variant, "constraints:", "constraint:", 0, 1, {"unknown key 'constraint'", "constraints"}},
      // "  BLOCK: {vals": the key starts at column 11.
      {"in a knob", variant, "BLOCK: {values:", "BLOCK: {vals:", 0, 11, {"unknown key 'vals'", "values"}},
      {"in a config", config, "seed: 1", "sed: 1", 0, 1, {"unknown key 'sed'", "seed"}},
      {"in a config's budget", config, "{evals: 16}", "{evlas: 16}", 0, 10, {"unknown key 'evlas'", "evals"}},
  });
}

TEST_F(BadInput, UnknownProblemsDtypesAndVariants) {
  expect_each_refused({
      {"problem in a config", config, "problem: gelu", "problem: gelux", 0, 10, {"unknown problem 'gelux'", "gelu"}},
      {"dtype in a problem", problem, "dtypes: [f32, bf16]", "dtypes: [f32, f128]", 0, 15, {"unknown dtype 'f128'", "bf16"}},
      {"dtype in an arg", problem, "kind: scalar, dtype: i64", "kind: scalar, dtype: int64", 0, 0, {"unknown dtype 'int64'"}},
      {"dtype in a config", config, "dtypes: [f32, bf16]", "dtypes: [f32, bf61]", 0, 15, {"unknown dtype 'bf61'"}},
      {"dtype the problem does not support", config, "dtypes: [f32, bf16]", "dtypes: [f64]", 0, 10,
       {"does not support dtype f64"}},
      {"variant in a config", config, "seed: 1", "variants: [vectorised]\nseed: 1", 0, 12,
       {"no variant 'vectorised'", "variants: vectorized"}},
  });
}

TEST_F(BadInput, BrokenExpressionsAndNamesInAVariant) {
  expect_each_refused({
      // The scalar starts at column 5; the second '*' is the expression's 7th character.
      {"a constraint that does not parse", variant, "  - VEC * dtype_bytes <= 16", "  - VEC * * dtype_bytes <= 16", 0, 5,
       {"VEC * * dtype_bytes <= 16", "at column 7"}},
      {"a constraint with an unknown name", variant, "FAST_TANH == 0 || dtype_bytes == 2",
       "FAST_TANH == 0 || dtype_byte == 2", 0, 5, {"constraint", "unknown name 'dtype_byte'", "dtype_bytes"}},
      {"geometry with an unknown name", variant, "block: BLOCK", "block: BLOCKS", 0, 10, {"block", "unknown name 'BLOCKS'"}},
      {"a model hint with an unknown name", variant, "  bytes_in_flight_per_thread: VEC * EPT * dtype_bytes",
       "  bytes_in_flight_per_thread: VEC * EPT * dtype_bytes\n  registers_per_thread: 16 + VEC * EPTS", 1, 25,
       {"registers_per_thread", "unknown name 'EPTS'"}},
      {"a template argument naming no knob", variant, "FAST_TANH, CACHE_HINT]", "FAST_TANH, CACHE_HNT]", 0, 0,
       {"template argument 'CACHE_HNT'", "knob"}},
      {"a template argument that is no expression", variant, "FAST_TANH, CACHE_HINT]", "FAST_TANH, (CACHE_HINT]", 0, 0,
       {"(CACHE_HINT"}},
      {"a kernel argument not declared", variant, "kernel: gelu_tanh", "kernel: gelu_tanh\nargs: [x, y, m]", 1, 0,
       {"kernel argument 'm'"}},
  });
}

TEST_F(BadInput, ShapeMissingASize) {
  const int line = edit(config_, "  - {n: 1000003}", "  - {n: 1000003}\n  - {m: 5}");
  expect_error([&] { load_run_config(config_); }, config_, line + 1, 5, {"missing required key 'n'"});
}

TEST_F(BadInput, ShapeWithUnknownOrBadSize) {
  int line = edit(config_, "{n: 1000003}", "{n: 1000003, m: 5}");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"unknown size 'm'"});
  edit(config_, "{n: 1000003, m: 5}", "{n: 0}");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"size 'n' must be positive"});
  edit(config_, "{n: 0}", "{n: 1e6}");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"expected an integer, got '1e6'"});
}

// The full-range round's `range`: positive finite bounds, min under max, a sign of three, a reason;
// on inputs and constants only, and narrower than the dtype's.
TEST_F(BadInput, MagnitudeRanges) {
  const std::string init = "init: \"normal(0, 3)\",";
  const int line = edit(problem_yaml(), init, init + " range: {min: 0, max: 1, why: w},");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"range's min is a magnitude: a positive number"});
  edit(problem_yaml(), "{min: 0, max: 1,", "{min: 2, max: 1,");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"range's max must be at least its min"});
  edit(problem_yaml(), "{min: 2, max: 1,", "{max: \"sqrt(m)\",");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"range's max", "unknown name 'm'"});
  edit(problem_yaml(), "{max: \"sqrt(m)\", why: w}", "{min: 1.0e-3, max: 10}");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"range needs `why`"});
  edit(problem_yaml(), "{min: 1.0e-3, max: 10}", "{sign: upward, why: w}");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"expected sign 'both', 'positive' or 'negative', got 'upward'"});
  edit(problem_yaml(), "{sign: upward, why: w}", "{sign: both, why: w}");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"range narrows the full-range round"});
  edit(problem_yaml(), "{sign: both, why: w}", "{sign: positive, why: w}");
  auto p = load();
  EXPECT_EQ(p.args[0].range.sign, MagnitudeRange::Sign::positive);
  EXPECT_EQ(p.args[0].range.why, "w");
  EXPECT_TRUE(p.args[0].range.min.empty());  // the dtype's smallest and largest
  // A bound over the sizes is checked for each of the config's shapes, at the shape's line.
  edit(problem_yaml(), "{sign: positive, why: w}", "{max: \"dtype_max / (n - 1000004)\", why: w}");
  EXPECT_NO_THROW(load());
  const int shape = edit(config_, "  - {n: 1000003}", "  - {n: 1000003}");
  expect_error([&] { load_run_config(config_); }, config_, shape, 0,
               {"range's max 'dtype_max / (n - 1000004)' is -3.40282e+38 with dtype_max = 3.40282e+38, n = 1000003",
                "expected a positive finite magnitude"});
  // Not on outputs or scalars.
  const int out = edit(problem_yaml(), "role: out}", "role: out, range: {sign: positive, why: w}}");
  expect_error([&] { load(); }, problem_yaml(), out, 0, {"range applies to inputs (roles in and inout) and constants only"});
  edit(problem_yaml(), "role: out, range: {sign: positive, why: w}}", "role: out}");
  const int scalar = edit(problem_yaml(), "value: n}", "value: n, range: {sign: positive, why: w}}");
  expect_error([&] { load(); }, problem_yaml(), scalar, 0, {"a scalar takes only name, kind, dtype and value"});
}

TEST_F(BadInput, BudgetThatIsNotPositive) {
  // A budget given is a limit: zero, negative and non-finite are refused alike (leave a key out for
  // no limit), at the value's column.
  const int line = edit(config_, "budget: {evals: 16}", "budget: {evals: -16}");
  expect_error([&] { load_run_config(config_); }, config_, line, 17, {"expected a positive number of evaluations, got -16"});
  edit(config_, "{evals: -16}", "{evals: 0}");
  expect_error([&] { load_run_config(config_); }, config_, line, 17, {"expected a positive number of evaluations, got 0"});
  edit(config_, "{evals: 0}", "{evals: 16, seconds: -1}");
  expect_error([&] { load_run_config(config_); }, config_, line, 30, {"expected a positive number of seconds, got -1"});
  edit(config_, "{evals: 16, seconds: -1}", "{evals: 16, seconds: 0}");
  expect_error([&] { load_run_config(config_); }, config_, line, 30, {"expected a positive number of seconds, got 0"});
  edit(config_, "{evals: 16, seconds: 0}", "{}");
  expect_error([&] { load_run_config(config_); }, config_, line, 9, {"needs evals or seconds"});
  edit(config_, "budget: {}", "budget: {seconds: 30}");
  EXPECT_EQ(load_run_config(config_).budget.seconds, 30);
  EXPECT_EQ(load_run_config(config_).budget.evals, 0);  // no limit on evaluations
}

TEST_F(BadInput, IntegersReadAsYaml12) {
  // 010 is ten (YAML 1.2), not octal eight; 0o and 0x say the base.
  edit(config_, "{n: 1000003}", "{n: 010}");
  EXPECT_EQ(load_run_config(config_).shapes.at(0).dims.at(0).second, 10);
  edit(config_, "{n: 010}", "{n: 0o10}");
  EXPECT_EQ(load_run_config(config_).shapes.at(0).dims.at(0).second, 8);
  edit(config_, "{n: 0o10}", "{n: 0x10}");
  EXPECT_EQ(load_run_config(config_).shapes.at(0).dims.at(0).second, 16);
  const int line = edit(config_, "{n: 0x10}", "{n: 0o19}");
  expect_error([&] { load_run_config(config_); }, config_, line, 9, {"expected an integer, got '0o19'"});
  edit(config_, "{n: 0o19}", "{n: 99999999999999999999}");
  expect_error([&] { load_run_config(config_); }, config_, line, 9, {"out of range"});
}

TEST_F(BadInput, IntegersThatWouldWrapAreRefused) {
  // 2^32 + 1 must not become 1 on its way into an int.
  const int line = edit(config_, "seed: 1\n", "seed: 1\nsearch: {batch: 4294967297}\n") + 1;
  expect_error([&] { load_run_config(config_); }, config_, line, 17, {"batch: expected an integer from 1 to", "4294967297"});
  edit(config_, "seed: 1\n", "seed: -3\n");
  expect_error([&] { load_run_config(config_); }, config_, line - 1, 7, {"seed: expected an integer from 0 to"});
}

TEST_F(BadInput, KeysThatAreListsOrMappings) {
  // yaml-cpp takes `[a, b]: 1` as a key; reading it as a name used to end in "bad conversion" with
  // no file named.
  int line = edit(config_, "seed: 1\n", "seed: 1\n[a, b]: 2\n") + 1;
  expect_error([&] { load_run_config(config_); }, config_, line, 1, {"expected a key", "got a list"});
  edit(config_, "[a, b]: 2\n", "");
  line = edit(config_, "budget: {evals: 16}", "budget: {evals: 16, {x: 1}: 2}");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"expected a key", "got a mapping"});
  edit(config_, "budget: {evals: 16, {x: 1}: 2}", "budget: {evals: 16}");
  line = edit(variant_yaml(), "knobs:", "? [k]\n: 1\nknobs:");
  expect_error([&] { load(); }, variant_yaml(), line, 3, {"expected a key", "got a list"});
}

TEST_F(BadInput, DuplicateKeysAndSecondDocuments) {
  int line = edit(config_, "seed: 1\n", "seed: 1\nseed: 2\n") + 1;
  expect_error([&] { load_run_config(config_); }, config_, line, 1, {"duplicate key 'seed'", "first given on line"});
  edit(config_, "seed: 2\n", "");
  line = edit(config_, "budget: {evals: 16}", "budget: {evals: 16, evals: 8}");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"duplicate key 'evals'"});
  edit(config_, "budget: {evals: 16, evals: 8}", "budget: {evals: 16}");
  line = edit(config_, "seed: 1\n", "seed: 1\n---\nseed: 2\n") + 2;
  expect_error([&] { load_run_config(config_); }, config_, line, 1, {"second YAML document"});
  edit(config_, "---\nseed: 2\n", "");
  line = edit(problem_yaml(), "sizes: [n]", "sizes: [n]\nsizes: [n]") + 1;
  expect_error([&] { load(); }, problem_yaml(), line, 1, {"duplicate key 'sizes'"});
}

TEST_F(BadInput, FolderGivenAsConfig) {
  std::string msg;
  try {
    load_run_config(root_ / "configs");
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("configs: is a folder"), std::string::npos) << msg;
}

TEST_F(BadInput, ScreenBelowOne) {
  const int line = edit(config_, "seed: 1\n", "seed: 1\nsearch: {screen: 4, initial_candidates: 0}\n") + 1;
  expect_error([&] { load_run_config(config_); }, config_, line, 41, {"initial_candidates: expected an integer from 1 to", "got 0"});
}

TEST_F(BadInput, TimingSection) {
  const int line = edit(config_, "seed: 1\n", "seed: 1\ntiming: {gate: false, settle_us: 100, input_sets: 1}\n") + 1;
  const auto c = load_run_config(config_);
  EXPECT_FALSE(c.timing.gate);
  EXPECT_EQ(c.timing.describe(), "gate off, settle 100 us, 1 input set");
  EXPECT_TRUE(RunConfig{}.timing.is_default());
  EXPECT_EQ(RunConfig{}.timing.describe(), "");
  edit(config_, "settle_us: 100,", "settle_us: -5,");
  expect_error([&] { load_run_config(config_); }, config_, line, 34, {"settle_us", "[0, 100000]"});
  edit(config_, "settle_us: -5, input_sets: 1", "settle_us: 5, input_sets: 9");
  expect_error([&] { load_run_config(config_); }, config_, line, 49, {"input_sets", "[0, 8]"});
  edit(config_, "input_sets: 9}", "input_sets: 1, flush_mib: 512}");
  EXPECT_EQ(load_run_config(config_).timing.describe(), "gate off, settle 5 us, 1 input set, flush 512 MiB");
  edit(config_, "flush_mib: 512", "flush_mib: -1");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"flush_mib", "[1, 65536]"});
  edit(config_, "flush_mib: -1", "flush_mib: 0.5");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"flush_mib", "[1, 65536]"});
  edit(config_, "flush_mib: 0.5", "flush_mib: -1");
  edit(config_, ", flush_mib: -1", "");
  edit(config_, "gate: false", "gate: sometimes");
  expect_error([&] { load_run_config(config_); }, config_, line, 16, {"sometimes"});
  edit(config_, "gate: sometimes", "gates: true");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"gates"});
}

TEST_F(BadInput, BadBackendAndGpu) {
  int line = edit(config_, "backend: model", "backend: opencl");
  expect_error([&] { load_run_config(config_); }, config_, line, 10, {"auto, cuda or model", "opencl"});
  line = edit(config_, "backend: opencl", "backend: model\nmodel_gpu: Voodoo5");
  expect_error([&] { load_run_config(config_); }, config_, line + 1, 12, {"unknown GPU 'Voodoo5'", "H200"});
}

TEST_F(BadInput, QuotedIncludesAreWrittenInPlaceEachFileOnce) {
  // Files shared by several templates: a header without a final newline, another that includes it.
  fs::create_directories(templates_ / "common");
  write(templates_ / "common" / "h.cuh", "// h\nconstexpr int h_value = 1;");
  write(templates_ / "common" / "g.cuh", "#include \"h.cuh\"\n// g\n");
  const auto cu = templates_ / "gelu" / "vectorized.cu";
  const std::string original = read(cu);
  write(cu, "#include \"../common/h.cuh\"\n  #  include \"../common/g.cuh\"\n" + original);
  const auto p = load();
  // h once (g's include of it is dropped), its line ended; the toolkit's <...> includes untouched.
  EXPECT_EQ(p.variants.at(0).source, "// h\nconstexpr int h_value = 1;\n// g\n" + original);
  EXPECT_NE(original.find("#include <"), std::string::npos);
}

TEST_F(BadInput, QuotedIncludeOfAMissingFile) {
  const auto cu = templates_ / "gelu" / "vectorized.cu";
  write(cu, "// a shared helper\n#include \"../common/missing.cuh\"\n" + read(cu));
  expect_error([&] { load(); }, cu, 2, 0, {"no file", "common/missing.cuh", "<...>"});
}

TEST_F(BadInput, MissingSourceFile) {
  fs::remove(templates_ / "gelu" / "vectorized.cu");
  std::string msg;
  try {
    load();
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("vectorized.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("vectorized.cu"), std::string::npos) << msg;
}

}  // namespace
}  // namespace soltune

namespace soltune {
namespace {

TEST_F(BadInput, VariantArchMustBeArchitectureSpecific) {
  const auto text = read(variant_yaml());
  write(variant_yaml(), "arch: sm_90\n" + text);
  expect_error([&] { load(); }, variant_yaml(), 1, 7, {"expected an architecture-specific target such as sm_90a", "cc >= 80"});
  write(variant_yaml(), "arch: sm_90a\n" + text);
  EXPECT_EQ(load().variant("vectorized").arch, "sm_90a");
}

TEST_F(BadInput, VariantDtypesMustBeTheProblems) {
  const auto text = read(variant_yaml());
  write(variant_yaml(), "dtypes: [f16]\n" + text);
  expect_error([&] { load(); }, variant_yaml(), 1, 10, {"dtype f16 is not among problem gelu's dtypes"});
  write(variant_yaml(), "dtypes: [bf16]\n" + text);
  // A config that names the variant for dtypes it does not serve is refused; otherwise its tasks
  // are those of the dtypes it serves.
  write(config_, read(config_) + "variants: [vectorized]\n");
  const auto cfg = load_run_config(config_);
  const auto tasks = config_tasks(cfg);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].dtype, DType::bf16);
  write(config_, "problem: gelu\ndtypes: [f32]\nvariants: [vectorized]\nshapes: [{n: 8}]\nbudget: {evals: 1}\n");
  expect_error([&] { load_run_config(config_); }, config_, 3, 11, {"variant 'vectorized' serves bf16, none of the config's dtypes"});
}

TEST_F(BadInput, MagnitudesAreDeclaredOnOutputsAndNamedByTheReference) {
  edit(problem_yaml(), "role: out}", "role: out, magnitude: true}");
  const int ref = edit(problem_yaml(), "reference:\n", "reference:\n");  // the error names its first key
  expect_error([&] { load(); }, problem_yaml(), ref + 1, 3, {"the reference's args must name 'y.magnitude' once"});
  const int line = edit(problem_yaml(), "role: in, init:", "role: in, magnitude: true, init:");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"magnitude applies to outputs (roles out and inout) only"});
}

// A size its scalar's dtype cannot hold is refused at the shape that gives it, before anything runs.
TEST_F(BadInput, ASizePastItsScalarsDtypeIsRefused) {
  edit(problem_yaml(), "{name: n, kind: scalar, dtype: i64", "{name: n, kind: scalar, dtype: i32");
  EXPECT_NO_THROW(load_run_config(config_));  // n = 1000003 fits
  const int line = edit(config_, "{n: 1000003}", "{n: 3000000000}");
  expect_error([&] { load_run_config(config_); }, config_, line, 5,
               {"scalar 'n' = 3000000000 at this shape overflows its dtype i32 (-2147483648 to 2147483647)"});
}

// An inout buffer is drawn like an input and checked like an output: the reference reads it and
// writes what the kernel must leave there to `<name>.out`, named once.
TEST_F(BadInput, InoutBuffersNameTheirResultInTheReference) {
  edit(problem_yaml(), "role: in, init:", "role: inout, init:");
  const auto p = load();
  EXPECT_EQ(p.args[0].role, Role::inout);
  EXPECT_EQ(p.reference.args, (std::vector<std::string>{"x", "x.out", "y", "n"}));  // the default
  const int args = edit(problem_yaml(), "reference:\n", "reference:\n  args: [x, y, n]\n") + 1;
  expect_error([&] { load(); }, problem_yaml(), args, 9, {"buffer 'x' has role inout", "'x.out' once"});
  edit(problem_yaml(), "args: [x, y, n]", "args: [x, x.out, y.out, n]");
  expect_error([&] { load(); }, problem_yaml(), args, 9, {"reference argument 'y.out': no buffer 'y' has role inout"});
  edit(problem_yaml(), "args: [x, x.out, y.out, n]", "args: [x, x.out, x.out, y, n]");
  expect_error([&] { load(); }, problem_yaml(), args, 9, {"'x.out' once"});
  // An output is the kernel's to write: an init there is a mistake, which names the role to use.
  const int out = edit(problem_yaml(), "role: out}", "role: out, init: \"normal(0, 1)\"}");
  expect_error([&] { load(); }, problem_yaml(), out, 0, {"it takes no init (role inout"});
}

// baseline.library: a routine soltune knows, each of its operands a buffer of the task's dtype (or the
// routine's own, for the scales) in the right role, each of its sizes an expression over the problem's sizes; the matmul problem's loads.
TEST_F(BadInput, LibraryBaselines) {
  const std::string good = "  library: {routine: cublaslt_gemm, label: cuBLAS, a: x, b: x, c: y, m: n, n: 1, k: 1}\n";
  const int line = edit(problem_yaml(), "baseline:\n", "baseline:\n" + good) + 1;
  const auto p = load();
  ASSERT_TRUE(p.baseline_library);
  EXPECT_EQ(p.baseline_library->label, "cuBLAS");
  ASSERT_EQ(p.baseline_library->steps.size(), 1u);
  EXPECT_EQ(p.baseline_library->steps[0].call->operands.at("c"), "y");
  EXPECT_EQ(p.baseline_label, "baseline");  // the kernels' label where none is given
  const auto broken = breaker(good, line);
  broken("routine: cublaslt_gemm", "routine: cublas_gemm", 22, "unknown library routine 'cublas_gemm' (known: cublaslt_gemm, cublaslt_scaled_gemm)");
  broken("a: x,", "a: y,", 55, "'y' must be an input for cublaslt_gemm's a");
  broken("c: y,", "c: x,", 67, "'x' must be an output for cublaslt_gemm's c");
  broken("c: y,", "c: t0,", 67, "'t0' is not a buffer of the task's dtype among the problem's args (c of cublaslt_gemm)");
  broken(" c: y,", "", 12, "cublaslt_gemm needs its operand 'c'");
  broken(", k: 1}", "}", 12, "cublaslt_gemm needs its size 'k'");
  broken("n: 1,", "n: rows,", 0, "rows");
  broken("k: 1}", "k: 1, lda: 4}", 0, "'lda' is no operand or size of cublaslt_gemm");
  broken("label: cuBLAS, ", "", 12, "label");
  // An operand of a dtype of its own (the scales are f32 whatever the task's dtype).
  broken("routine: cublaslt_gemm, label: cuBLAS, a: x, b: x,", "routine: cublaslt_scaled_gemm, label: cuBLAS, a: x, b: x, sa: x, sb: x,",
         0, "'x' is not a buffer of f32 among the problem's args (sa of cublaslt_scaled_gemm)");
  EXPECT_TRUE(load_problem(SOLTUNE_SOURCE_DIR "/templates", "matmul").baseline_library);
  // Steps: routine calls (whose operands may be the baseline's temps) around the baseline's launches,
  // each named by its kernel (one launch of it), at least one call.
  edit(problem_yaml(), good, "");
  const std::string steps =
      "  library: {label: cuBLAS, steps: [{routine: cublaslt_gemm, a: x, b: x, c: t0, m: n, n: 1, k: 1, batch: 2, alpha: 0.5}, "
      "{launch: op_tanh}]}\n";
  const int at = edit(problem_yaml(), "baseline:\n", "baseline:\n" + steps) + 1;
  const auto q = load();
  ASSERT_TRUE(q.baseline_library);
  EXPECT_EQ(q.baseline_library->label, "cuBLAS");
  ASSERT_EQ(q.baseline_library->steps.size(), 2u);
  EXPECT_EQ(q.baseline_library->steps[0].call->operands.at("c"), "t0");
  EXPECT_DOUBLE_EQ(q.baseline_library->steps[0].call->sizes.at("alpha").eval({}), 0.5);
  EXPECT_FALSE(q.baseline_library->steps[1].call);
  EXPECT_EQ(q.baseline[static_cast<size_t>(q.baseline_library->steps[1].launch)].kernel, "op_tanh");
  const auto broken_steps = breaker(steps, at);
  broken_steps("{launch: op_tanh}", "{launch: op_scale}", 0, "the baseline launches 'op_scale' more than once");
  broken_steps("{launch: op_tanh}", "{launch: op_sine}", 0, "no launch of 'op_sine' among the baseline's launches");
  broken_steps("{routine: cublaslt_gemm, a: x, b: x, c: t0, m: n, n: 1, k: 1, batch: 2, alpha: 0.5}, ", "", 0,
               "a library's steps call at least one of its routines");
  broken_steps("c: t0,", "c: t9,", 0, "'t9' is not a buffer of the task's dtype among the problem's args or the baseline's temps");
  broken_steps("label: cuBLAS, ", "", 0, "label");
  const auto attention = load_problem(SOLTUNE_SOURCE_DIR "/templates", "attention");
  ASSERT_TRUE(attention.baseline_library);
  EXPECT_EQ(attention.baseline_library->steps.size(), 3u);
  const auto fp8 = load_problem(SOLTUNE_SOURCE_DIR "/templates", "matmul_fp8");
  ASSERT_TRUE(fp8.baseline_library);
  EXPECT_EQ(fp8.baseline_library->steps.at(0).call->routine, "cublaslt_scaled_gemm");
  EXPECT_EQ(fp8.baseline_library->steps.at(0).call->operands.at("sb"), "sb");
}

// check: a check routine soltune knows, over buffers and sizes as a library baseline's, without a label.
TEST_F(BadInput, TimedChecks) {
  const std::string good = "check: {routine: gemm_projection, a: x, b: x, c: y, m: n, n: 1, k: 1}\n";
  const int line = edit(problem_yaml(), "baseline:\n", good + "baseline:\n");
  const auto p = load();
  ASSERT_TRUE(p.timed_check);
  EXPECT_EQ(p.timed_check->operands.at("c"), "y");
  const auto broken = breaker(good, line);
  broken("routine: gemm_projection", "routine: freivalds", 18, "unknown check routine 'freivalds' (known: gemm_projection, scaled_gemm_projection, reference_rows, reference_picked)");
  broken("routine: gemm_projection,", "routine: gemm_projection, label: x,", 42, "a check has no label");
  broken("c: y,", "c: x,", 50, "'x' must be an output for gemm_projection's c");
  broken(", k: 1}", "}", 8, "gemm_projection needs its size 'k'");
  EXPECT_TRUE(load_problem(SOLTUNE_SOURCE_DIR "/templates", "matmul").timed_check);
  // The projection of an 8-bit float product needs its scales: refused at load, not at a check.
  edit(problem_yaml(), "dtypes: [f32, bf16]", "dtypes: [f32, bf16, e4m3]");
  edit(problem_yaml(), "  bf16: {atol: 1.0e-3, rtol: 8.0e-3, rel_l2: 1.0e-2}\n",
       "  bf16: {atol: 1.0e-3, rtol: 8.0e-3, rel_l2: 1.0e-2}\n  e4m3: {atol: 1.0e-3, rtol: 8.0e-3, rel_l2: 1.0e-2}\n");
  expect_error([&] { load(); }, problem_yaml(), line + 1, 18, {"gemm_projection reads no scales: 8-bit e4m3 needs scaled_gemm_projection"});
  EXPECT_EQ(load_problem(SOLTUNE_SOURCE_DIR "/templates", "matmul_fp8").timed_check->routine, "scaled_gemm_projection");
}

// A baseline launch may run only at some shapes (`when:`, over the sizes): an unknown name there is
// refused with its line.
TEST_F(BadInput, BaselineLaunchesRunWhereTheirConditionHolds) {
  const std::string tanh = "    - {kernel: op_tanh, template_args: [T], args: [t0, t0, n], grid: \"cdiv(n, 256)\", block: 256}\n";
  const std::string when = "    - {kernel: op_tanh, template_args: [T], args: [t0, t0, n], grid: \"cdiv(n, 256)\", block: 256, when: \"n > 100\"}\n";
  const int line = edit(problem_yaml(), tanh, when);
  const auto p = load();
  const auto it = std::find_if(p.baseline.begin(), p.baseline.end(), [](const LaunchSpec& l) { return l.kernel == "op_tanh"; });
  ASSERT_NE(it, p.baseline.end());
  EXPECT_EQ(it->when.text(), "n > 100");
  edit(problem_yaml(), "when: \"n > 100\"", "when: \"rows > 100\"");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"rows"});
}

// reference_rows: `rows` names a size that is every output's first dimension; no inout buffer, no
// constant of those rows. The fused GEMMs check their timed repetitions so.
TEST_F(BadInput, ChecksOnSampledRows) {
  const std::string good = "check: {routine: reference_rows, rows: n}\n";
  const int line = edit(problem_yaml(), "baseline:\n", good + "baseline:\n");
  const auto p = load();
  ASSERT_TRUE(p.timed_check);
  EXPECT_EQ(p.timed_check->sizes.at("rows").text(), "n");
  const auto broken = breaker(good, line);
  broken("rows: n}", "rows: 2 * n}", 40, "first dimension), not '2 * n'");
  broken("rows: n}", "rows: cols}", 0, "cols");
  broken(", rows: n}", "}", 8, "reference_rows needs its size 'rows'");
  const int y = edit(problem_yaml(), "shape: [n], role: out}", "shape: [1, n], role: out}");
  expect_error([&] { load(); }, problem_yaml(), line, 40, {"output 'y' does not have n as its first dimension"});
  edit(problem_yaml(), "shape: [1, n], role: out}", "shape: [n], role: out}");
  (void)y;
  // reference_picked: the reference source's kernel for picked rows is named.
  edit(problem_yaml(), good, "check: {routine: reference_picked, rows: n, group: n, tile: 8}\n");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"reference_picked needs `kernel`"});
  edit(problem_yaml(), "tile: 8}", "tile: 8, kernel: gelu_reference_picked}");
  EXPECT_EQ(load().timed_check->kernel, "gelu_reference_picked");
  EXPECT_EQ(load_problem(SOLTUNE_SOURCE_DIR "/templates", "attention").timed_check->kernel, "attention_reference_picked");
  for (const char* name : {"matmul_epilogue", "swiglu"}) {
    const auto q = load_problem(SOLTUNE_SOURCE_DIR "/templates", name);
    ASSERT_TRUE(q.timed_check) << name;
    EXPECT_EQ(q.timed_check->routine, "reference_rows") << name;
  }
}

// A tolerance is needed where a float output takes it: an integer output compares exactly (or as
// its own dtype's tolerance allows), so a problem of integer outputs gives none for its float dtype.
TEST_F(BadInput, ToleranceOnlyWhereAFloatOutputTakesIt) {
  const int line = edit(problem_yaml(), "  bf16: {atol: 1.0e-3, rtol: 8.0e-3, rel_l2: 1.0e-2}\n", "");
  expect_error([&] { load(); }, problem_yaml(), line - 1, 0, {"no tolerance for dtype bf16: output 'y' is bf16"});
  const auto pnpoly = root_ / "templates" / "pnpoly";
  fs::copy(SOLTUNE_SOURCE_DIR "/templates/pnpoly", pnpoly, fs::copy_options::recursive);
  const auto p = load_problem(templates_, "pnpoly");  // its only output is i32; no f32 tolerance given
  EXPECT_EQ(p.tolerance.count(DType::f32), 0u);
  EXPECT_EQ(p.tolerance.count(DType::i32), 1u);
}

// The reference and the baseline take `defines:` over sizes, as a variant does: naive kernels sized
// by the same macros as the tuned ones. A macro their source never names, or a name that is not a
// size, is refused where it is written.
TEST_F(BadInput, ReferenceAndBaselineDefines) {
  const auto baseline = templates_ / "gelu" / "baseline.cu";
  write(baseline, read(baseline) + "\n#ifndef GELU_WIDTH\n#error GELU_WIDTH must be defined\n#endif\n");
  const std::string good = "  source: baseline.cu\n  defines: {GELU_WIDTH: n, GELU_T: T}\n";
  const int line = edit(problem_yaml(), "  source: baseline.cu\n", good) + 1;
  write(baseline, read(baseline) + "#define GELU_USE_T GELU_T\n");
  const auto p = load();
  EXPECT_EQ(define_options(p.baseline_defines, DType::bf16, Bindings{{"n", 4096}}),
            (std::vector<std::string>{"-DGELU_WIDTH=4096", "-DGELU_T=__nv_bfloat16"}));
  EXPECT_TRUE(p.reference_defines.empty());
  const auto broken = breaker("  defines: {GELU_WIDTH: n, GELU_T: T}\n", line);
  broken("GELU_WIDTH: n", "GELU_WIDTH: BLOCK", 25, "unknown name 'BLOCK'");
  broken("GELU_T: T}", "GELU_T: T, NEVER_SEEN: n}", 51, "define 'NEVER_SEEN' is never named in baseline.cu");
  // The reference's source takes its own.
  const auto reference = templates_ / "gelu" / "reference.cu";
  write(reference, read(reference) + "\n#if defined(GELU_REF_N) && GELU_REF_N < 1\n#error\n#endif\n");
  edit(problem_yaml(), "  source: reference.cu\n", "  source: reference.cu\n  defines: {GELU_REF_N: n}\n");
  EXPECT_EQ(define_options(load().reference_defines, DType::f32, Bindings{{"n", 7}}), std::vector<std::string>{"-DGELU_REF_N=7"});
}

// A key written without a value is refused where it is written; the default comes from leaving it out.
TEST_F(BadInput, AKeyWithoutAValueIsRefused) {
  for (const std::string key : {"seed", "kb", "arch", "model_gpu"}) {
    const auto text = read(config_);
    const int line = edit(config_, "seed: 1\n", "seed: 1\n" + key + ":\n") + 1;
    if (key == "seed") edit(config_, "seed: 1\n", "");
    expect_error([&] { load_run_config(config_); }, config_, key == "seed" ? line - 1 : line, 1,
                 {key + ": has no value; leave the key out for the default"});
    write(config_, text);
  }
  EXPECT_NO_THROW(load_run_config(config_));
}

// A size of a few values (a layout flag): a shape gives one of them or, with a default, none.
TEST_F(BadInput, SizeOfAFewValues) {
  edit(problem_yaml(), "sizes: [n]", "sizes: [n, {name: mode, values: [0, 1], default: 0, doc: a flag}]");
  EXPECT_NO_THROW(load());
  const auto c = load_run_config(config_);
  ASSERT_EQ(c.shapes.size(), 1u);
  EXPECT_EQ(c.shapes[0].key(), "n=1000003,mode=0");  // left out: the default
  int line = edit(config_, "{n: 1000003}", "{n: 1000003, mode: 2}");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"size 'mode' takes 0, 1 (a flag), got 2"});
  edit(config_, "mode: 2", "mode: 1");
  EXPECT_EQ(load_run_config(config_).shapes[0].key(), "n=1000003,mode=1");
  line = edit(problem_yaml(), "default: 0", "default: 3");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"the default is not among size 'mode''s values"});
  edit(problem_yaml(), "default: 3", "default: 0, step: 1");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"step"});
}

// Named values (an activation): a shape writes a value or its name; an unknown name is refused with
// every value and name; names must match the values one to one.
TEST_F(BadInput, SizeValuesByName) {
  edit(problem_yaml(), "sizes: [n]", "sizes: [n, {name: act, values: [0, 4], names: [none, silu], default: silu}]");
  EXPECT_EQ(load_run_config(config_).shapes[0].key(), "n=1000003,act=4");  // the default, by its name
  int line = edit(config_, "{n: 1000003}", "{n: 1000003, act: none}");
  EXPECT_EQ(load_run_config(config_).shapes[0].key(), "n=1000003,act=0");
  edit(config_, "act: none", "act: gelu");
  expect_error([&] { load_run_config(config_); }, config_, line, 0, {"size 'act' takes 0 (none), 4 (silu), got gelu"});
  edit(config_, "act: gelu", "act: 4");
  EXPECT_EQ(load_run_config(config_).shapes[0].key(), "n=1000003,act=4");
  line = edit(problem_yaml(), "names: [none, silu]", "names: [none]");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"size 'act' names 1 values of 2"});
  edit(problem_yaml(), "names: [none]", "names: [none, none]");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"a value's name must be distinct"});
}

// A problem's rules over its sizes (`requires:`): a shape that breaks one is refused where the
// config gives it, with the rule's why; a rule naming what is not a size is refused where it is written.
TEST_F(BadInput, AShapeBreakingAProblemRuleIsRefusedWithItsWhy) {
  edit(problem_yaml(), "sizes: [n]", "sizes: [n]\nrequires:\n  - {expr: \"mod(n, 2) == 1\", why: \"n must be odd\"}");
  EXPECT_EQ(load().broken_rule(Bindings{{"n", 4}}), "n must be odd (mod(n, 2) == 1)");
  EXPECT_NO_THROW(load_run_config(config_));  // n = 1000003
  const int line = edit(config_, "{n: 1000003}", "{n: 1000004}");
  expect_error([&] { load_run_config(config_); }, config_, line, 0,
               {"problem 'gelu' refuses this shape: n must be odd (mod(n, 2) == 1)"});
  const int rule = edit(problem_yaml(), "mod(n, 2)", "mod(m, 2)");
  expect_error([&] { load(); }, problem_yaml(), rule, 0, {"requires", "'m'"});
}

// The exported header's launch functions have locals of their own (the plan p, the stream, the
// embedded kernel): an argument or size of the same name is refused where the problem names it.
TEST_F(BadInput, AnArgumentNamedLikeTheHeadersOwnIsRefused) {
  int line = edit(problem_yaml(), "{name: y,", "{name: kernel,");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"argument 'kernel': the exported header uses this name for its own"});
  edit(problem_yaml(), "{name: kernel,", "{name: y,");
  line = edit(problem_yaml(), "sizes: [n]", "sizes: [n, stream]");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"size 'stream': the exported header uses this name"});
}

// A plan of several launches: every name a launch passes must be declared, every scratch buffer
// passed somewhere, and tensor maps go to the main kernel only.
TEST_F(BadInput, PlansOfSeveralLaunches) {
  test::add_two_step_gelu(templates_ / "gelu");
  const fs::path v = templates_ / "gelu" / "twostep.yaml";
  {
    const auto p = load();
    const auto& t = p.variant("twostep");
    ASSERT_EQ(t.after.size(), 1u);
    EXPECT_EQ(t.after[0].kernel, "gelu_second");
    EXPECT_EQ(t.after[0].when.text(), "STEPS == 2");
    ASSERT_EQ(t.scratch.size(), 1u);
    EXPECT_EQ(t.scratch[0].name, "tmp");
    EXPECT_EQ(t.all_launches().size(), 2u);
  }
  int line = edit(v, "args: [tmp, y, n]", "args: [tmp, y, count]");
  expect_error([&] { load(); }, v, line, 0, {"kernel argument 'count'"});
  edit(v, "args: [tmp, y, count]", "args: [y, y, n]");
  edit(v, "args: [x, y, tmp, n]", "args: [x, y, n]");
  line = edit(v, "  - {name: tmp", "  - {name: tmp");
  expect_error([&] { load(); }, v, line, 0, {"scratch buffer 'tmp' is passed to none of the variant's launches"});
  edit(v, "{name: tmp,", "{name: x,");
  expect_error([&] { load(); }, v, line, 0, {"scratch buffer 'x' shadows an argument"});
  edit(v, "{name: x,", "{name: tmp,");
  edit(v, "args: [x, y, n]", "args: [x, y, tmp, n]");
  line = edit(v, "when: STEPS == 2}", "when: STEPS == 2, cluster: [2]}");
  expect_error([&] { load(); }, v, line, 0, {"cluster"});
  edit(v, ", cluster: [2]}", "}");
  line = edit(v, "when: STEPS == 2}", "when: WIDTH == 2}");
  expect_error([&] { load(); }, v, line, 0, {"WIDTH"});
  // A launch after the kernel may overlap the one before it; the plan's first launch never does.
  edit(v, "when: WIDTH == 2}", "when: STEPS == 2, programmatic: true}");
  EXPECT_TRUE(load().variant("twostep").after.at(0).programmatic);
  edit(v, "programmatic: true}", "programmatic: sometimes}");
  expect_error([&] { load(); }, v, line, 0, {"expected true or false, got 'sometimes'"});
  edit(v, ", programmatic: sometimes}", "}");
  line = edit(v, "after:\n", "before:\n  - {kernel: gelu_second, template_args: [T], args: [tmp, y, n], grid: 1, block: 32, "
                              "programmatic: true}\nafter:\n") + 1;
  expect_error([&] { load(); }, v, line, 0, {"'programmatic' is for the launches after the main kernel"});
}

// A note named from common/notes.yaml: its text is the catalogue's; an unknown name, a missing
// catalogue, or a note with both a name and a text of its own are refused at the note's line.
TEST_F(BadInput, ANamedNoteComesFromTheCatalogue) {
  int line = edit(variant_yaml(), "knobs:\n", "notes:\n  - {when: BLOCK > 0, note: shared}\nknobs:\n") + 1;
  expect_error([&] { load(); }, variant_yaml(), line, 0, {"note 'shared': no ", "common/notes.yaml to take it from"});
  fs::create_directories(templates_ / "common");
  write(templates_ / "common" / "notes.yaml", "shared: \"a note named once\"\nother: another\n");
  EXPECT_EQ(load().variant("vectorized").notes.at(0).text, "a note named once");
  edit(variant_yaml(), "note: shared}", "note: shraed}");
  expect_error([&] { load(); }, variant_yaml(), line, 0, {"unknown note 'shraed'", "has: shared, other)"});
  edit(variant_yaml(), "note: shraed}", "note: shared, text: mine}");
  expect_error([&] { load(); }, variant_yaml(), line, 0, {"one of the two"});
}

// A knob the kernel never sees (a macro of a Kernel Tuner kernel, used verbatim) would tune nothing.
TEST_F(BadInput, AKnobThatReachesNothingIsRefused) {
  const int line = edit(variant_yaml(), "knobs:\n", "knobs:\n  block_size_x: [16, 32]\n");
  expect_error([&] { load(); }, variant_yaml(), line + 1, 0,
               {"knob 'block_size_x' reaches neither a template argument, a definition (defines:)",
                "every value would compile to the same kernel"});
}

// Knobs as preprocessor definitions: a mapping (macro: expression, or T for the element type) or a
// list of knob and size names. A knob that reaches only a definition is a knob; a macro the source
// never names, a name outside the knobs and sizes, a malformed or reserved name and a repeated one
// are refused with the file and line.
TEST_F(BadInput, MacroKnobsAreDefinitions) {
  test::add_macro_gelu(templates_ / "gelu");
  const fs::path v = templates_ / "gelu" / "macro.yaml";
  {
    const auto p = load();
    const auto& m = p.variant("macro");
    ASSERT_EQ(m.defines.size(), 3u);
    EXPECT_TRUE(m.defines[2].type);
    Bindings b{{"n", 1000}, {"block_size_x", 256}, {"ITEMS", 4}};
    EXPECT_EQ(define_options(m, DType::bf16, b),
              (std::vector<std::string>{"-Dblock_size_x=256", "-DITEMS=4", "-Dreal=__nv_bfloat16"}));
    EXPECT_EQ(name_expression(m.launch, DType::f32, b), "gelu_macro");
  }
  int line = edit(v, "defines: {block_size_x: block_size_x, ITEMS: ITEMS, real: T}", "defines: [block_size_x, ITEMS]");
  EXPECT_EQ(define_options(load().variant("macro"), DType::f32, Bindings{{"block_size_x", 64}, {"ITEMS", 2}}),
            (std::vector<std::string>{"-Dblock_size_x=64", "-DITEMS=2"}));
  edit(v, "[block_size_x, ITEMS]", "{block_size_x: block_size_x, ITEMS: \"ITEMS * dtype_bytes / 4\", real: T}");
  EXPECT_EQ(define_options(load().variant("macro"), DType::f32, Bindings{{"block_size_x", 64}, {"ITEMS", 2}})[1], "-DITEMS=2");
  EXPECT_EQ(define_options(load().variant("macro"), DType::bf16, Bindings{{"block_size_x", 64}, {"ITEMS", 2}})[1], "-DITEMS=1");
  edit(v, "ITEMS: \"ITEMS * dtype_bytes / 4\"", "ITEMS: ITEMS");
  edit(v, "ITEMS: ITEMS,", "ITEMS: ITEMS, TILES: ITEMS,");
  expect_error([&] { load(); }, v, line, 0, {"define 'TILES' is never named in macro.cu", "same kernel"});
  edit(v, " TILES: ITEMS,", "");
  edit(v, "ITEMS: ITEMS,", "ITEMS: WIDTH,");
  expect_error([&] { load(); }, v, line, 0, {"define 'ITEMS'", "WIDTH"});
  edit(v, "ITEMS: WIDTH,", "ITEMS: ITEMS,");
  edit(v, "real: T", "2real: T");
  expect_error([&] { load(); }, v, line, 0, {"define '2real': expected a C identifier"});
  edit(v, "2real: T", "__CUDA_ARCH__: ITEMS");
  expect_error([&] { load(); }, v, line, 0, {"belong to the compiler"});
  edit(v, "__CUDA_ARCH__: ITEMS", "real: T");
  edit(v, "defines: {block_size_x: block_size_x, ITEMS: ITEMS, real: T}", "defines: []");
  expect_error([&] { load(); }, v, line, 0, {"`defines` is empty"});
  edit(v, "defines: []", "defines: [block_size_x, ITEMS, ITEMS]");
  expect_error([&] { load(); }, v, line, 0, {"define 'ITEMS' given twice"});
}

// A buffer a kernel takes as CUDA vectors: `vec` elements per item, counted in the element total,
// the vector type in what soltune passes; a width CUDA has no vector of is refused.
TEST_F(BadInput, VectorBuffers) {
  int line = edit(problem_yaml(), "{name: x, kind: buffer, dtype: T, shape: [n], role: in,",
                  "{name: x, kind: buffer, dtype: T, shape: [n], role: in, vec: 2,");
  {
    const auto p = load();
    const auto* x = p.find_arg("x");
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->lanes, 2);
    EXPECT_EQ(x->item_cpp(DType::f32), "float2");
    EXPECT_EQ(x->item_cpp(DType::bf16), "__nv_bfloat162");
    EXPECT_EQ(buffer_elements(*x, Bindings{{"n", 10}}), 20);
  }
  edit(problem_yaml(), "vec: 2,", "vec: 4,");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"buffer 'x': CUDA has no vector of 4 bf16 elements"});
  edit(problem_yaml(), "dtype: T, shape: [n], role: in, vec: 4,", "dtype: bool, shape: [n], role: in, vec: 2,");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"CUDA has no vector of 2 bool elements"});
  edit(problem_yaml(), "vec: 2,", "vec: 5,");
  expect_error([&] { load(); }, problem_yaml(), line, 0, {"expected an integer from 1 to 4, got 5"});
}

// The reference and the baseline may compile a size in (a template argument over the sizes), not a
// name the problem does not have.
TEST_F(BadInput, ReferenceTemplateArgumentsAreOverTheSizes) {
  int line = edit(problem_yaml(), "  kernel: gelu_reference\n  template_args: [T]", "  kernel: gelu_reference\n  template_args: [T, \"n % 2\"]");
  {
    const auto p = load();
    ASSERT_EQ(p.reference.template_values.size(), 2u);
    EXPECT_EQ(name_expression(p.reference, DType::f32, Bindings{{"n", 7}}), "gelu_reference<float, 1>");
  }
  edit(problem_yaml(), "[T, \"n % 2\"]", "[T, \"m\"]");
  expect_error([&] { load(); }, problem_yaml(), line + 1, 0, {"template argument 'm'", "over the sizes (n; unknown name 'm')"});
}

}  // namespace
}  // namespace soltune
