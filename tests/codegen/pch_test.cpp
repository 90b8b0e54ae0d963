// NVRTC's automatic precompiled headers (-pch, used by the compile workers) change compile time
// only: every shipped template compiles to the same code with and without them, whether the
// compile creates the PCH or uses it. And a PCH heap too small for a template costs no compile.
#include <cuda.h>  // CUDA_VERSION
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>

#include "codegen/compiler.hpp"
#include "codegen/nvrtc_program.hpp"
#include "codegen/nvrtc_worker.hpp"
#include "core/run_config.hpp"
#include "core/space.hpp"

namespace soltune {
namespace {

const std::filesystem::path kRoot = SOLTUNE_SOURCE_DIR;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A CUBIN's sections by name (ELF64, little-endian).
std::map<std::string, std::string> sections(const std::vector<char>& elf) {
  auto u = [&](size_t at, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(static_cast<unsigned char>(elf.at(at + i))) << (8 * i);
    return static_cast<size_t>(v);
  };
  const size_t shoff = u(0x28, 8), shentsize = u(0x3A, 2), shnum = u(0x3C, 2), shstrndx = u(0x3E, 2);
  const auto header = [&](size_t i) { return shoff + i * shentsize; };
  const size_t names = u(header(shstrndx) + 0x18, 8);
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < shnum; ++i) {
    const size_t h = header(i), type = u(h + 4, 4), off = u(h + 0x18, 8), size = u(h + 0x20, 8);
    const std::string name(&elf.at(names + u(h, 4)));
    out[name] = type == 8 /* NOBITS */ ? "" : std::string(&elf.at(off), size);
  }
  return out;
}

// NVRTC names internal-linkage entities _ZN<n>_INTERNAL_<8 hex>_<n>_<file>_cu_<8 hex>_<pid>...,
// which differ from compile to compile (two plain compiles differ too), in the string tables,
// the symbol table's name offsets and the embedded PTX. Everything else must match: the SASS
// (.text.*), constant banks, kernel info, relocations, line tables.
const std::set<std::string> kNameSections = {".strtab", ".symtab", ".debug_str", ".nv_debug_ptx_txt"};

void expect_same_code(const CompileResult& plain, const CompileResult& pch, const std::string& what) {
  ASSERT_TRUE(plain.ok) << what << ":\n" << plain.log;
  ASSERT_TRUE(pch.ok) << what << " with -pch:\n" << pch.log;
  const auto sa = sections(plain.cubin), sb = sections(pch.cubin);
  ASSERT_EQ(sa.size(), sb.size()) << what;
  for (const auto& [name, bytes] : sa) {
    ASSERT_TRUE(sb.count(name)) << what << ": no section " << name << " with -pch";
    if (!kNameSections.count(name)) {
      EXPECT_TRUE(sb.at(name) == bytes) << what << ": section " << name << " differs";
    }
  }
  EXPECT_TRUE(sa.count(".text." + plain.kernels.at(0).lowered_name)) << what << ": no code found";
  ASSERT_EQ(plain.kernels.size(), pch.kernels.size()) << what;
  for (size_t i = 0; i < plain.kernels.size(); ++i) {
    const auto &a = plain.kernels[i].res, &b = pch.kernels[i].res;
    EXPECT_TRUE(a.parsed && b.parsed) << what;
    EXPECT_EQ(a.registers, b.registers) << what;
    EXPECT_EQ(a.spill_stores, b.spill_stores) << what;
    EXPECT_EQ(a.spill_loads, b.spill_loads) << what;
    EXPECT_EQ(a.stack, b.stack) << what;
    EXPECT_EQ(a.smem_static, b.smem_static) << what;
  }
}

TEST(AutoPch, ShippedTemplatesCompileToTheSameCode) {
  if (!Compiler::supports_auto_pch()) GTEST_SKIP() << "NVRTC older than 12.8";
  CompilerOptions o = default_compiler_options();
  o.cache_dir.clear();
  const Compiler plain(o);
  o.timeout_s = 600;
  o.isolate_command = {FAKE_NVRTC_WORKER};
  const Compiler pooled(o);
  const auto dev = *find_known_gpu("H200");
  for (const auto& name : list_problems(kRoot / "templates")) {
    const auto p = load_problem(kRoot / "templates", name);
    const auto shapes = load_run_config(kRoot / "configs" / (name + ".yaml")).shapes;
    ASSERT_FALSE(shapes.empty()) << name;
    std::vector<std::pair<std::string, CompileRequest>> rs;
    for (const auto& v : p.variants) {
      // The config's first task where the variant has legal points (a variant whose rows must fit
      // in shared memory may have none at some).
      bool found = false;
      for (size_t i = 0; i < p.dtypes.size() * shapes.size() && !found; ++i) {
        const DType dt = p.dtypes[i / shapes.size()];
        const Task t{&p, &v, dt, shapes[i % shapes.size()]};
        const Space space(v, t.fixed(dev));
        Rng rng(Rng::mix(29, std::hash<std::string>{}(t.id())));
        for (int k = 0; k < 2; ++k) {  // the first creates the PCH in the worker, the second uses it
          const auto cfg = space.sample(rng);
          if (!cfg) break;
          found = true;
          const auto expr = name_expression(v.launch, dt, space.bind(*cfg));
          rs.push_back({t.id() + " " + expr, {v.source, v.source_path.filename().string(), {expr}, variant_arch(v, "sm_90"),
                                              define_options(v, dt, space.bind(*cfg))}});
        }
      }
      ASSERT_TRUE(found) << name << "/" << v.name << ": no legal point at any task of its config";
    }
    const Task t{&p, &p.variants.front(), p.dtypes.back(), shapes.front()};
    const auto b = t.fixed(dev);
    std::vector<std::string> names;
    for (const auto& l : p.baseline) names.push_back(name_expression(l, p.dtypes.back(), b));
    rs.push_back({name + " baseline", {p.baseline_source, "baseline.cu", names, "sm_90", {}}});
    rs.push_back({name + " reference",
                  {p.reference_source, "reference.cu", {name_expression(p.reference, p.dtypes.back(), b)}, "sm_90", {}}});
    for (const auto& [what, r] : rs) {
      auto loud = r;  // the PCH messages say that it was created or used: this test is about both
      loud.extra_options.push_back("-pch-messages=true");
      const auto with = pooled.compile(loud);
      if (contains(r.source, "#include")) {
        EXPECT_TRUE(contains(with.log, "precompiled header")) << what << ": no PCH created or used:\n" << with.log;
      }
      expect_same_code(plain.compile(r), with, what);
    }
  }
  EXPECT_EQ(pooled.compile_workers_started(), 1u);
}

#if CUDA_VERSION >= 12080
TEST(AutoPch, ExhaustedHeapIsGrownOnceAndCostsNoCompile) {
  if (!Compiler::supports_auto_pch()) GTEST_SKIP() << "NVRTC older than 12.8";
  const char* src = R"(#include <cuda_bf16.h>
template <int N> __global__ void k(__nv_bfloat16* x) { x[threadIdx.x] = __float2bfloat16(N); }
)";
  const CompileRequest r{src, "heap.cu", {"k<3>"}, "sm_90", {}};
  const std::vector<std::string> opts = {"--gpu-architecture=sm_90", "--std=c++17", "--ptxas-options=-v", "-pch"};
  auto with_includes = opts;
  for (const auto& d : default_compiler_options().include_dirs) with_includes.push_back("--include-path=" + d);
  ASSERT_EQ(nvrtcSetPCHHeapSize(1 << 16), NVRTC_SUCCESS);  // far too small for cuda_bf16.h
  const auto first = nvrtc_compile(r, with_includes);
  EXPECT_TRUE(first.ok) << first.log;
  size_t heap = 0;
  ASSERT_EQ(nvrtcGetPCHHeapSize(&heap), NVRTC_SUCCESS);
  EXPECT_GT(heap, size_t(1) << 20) << "the heap was not grown";
  const auto second = nvrtc_compile(r, with_includes);
  EXPECT_TRUE(second.ok) << second.log;
  EXPECT_TRUE(contains(second.log, "creating precompiled header")) << second.log;
  const auto third = nvrtc_compile(r, with_includes);
  EXPECT_TRUE(contains(third.log, "using precompiled header")) << third.log;
}
#endif

}  // namespace
}  // namespace soltune
