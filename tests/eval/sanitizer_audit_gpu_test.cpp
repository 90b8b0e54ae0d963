// GPU test (label gpu): the compute-sanitizer audit. Kernels with shared-memory races that rarely
// or never show in their results (the checked launches can pass them) fail racecheck; correct
// kernels, a shipped template's among them, pass every tool.
#include <gtest/gtest.h>

#include <string>

#include "core/rng.hpp"
#include "core/space.hpp"
#include "eval/sanitizer_audit.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

struct SmemKernel {
  const char* name;
  const char* body;  // x, y, n, i (the element index), t (threadIdx.x) and s (BLOCK floats of shared memory) in scope
};

const SmemKernel kRacy[] = {
    // Reads the value another warp wrote to shared memory without a barrier, after a delay long
    // enough that the other warp has written it nearly always: right in practice, a race by rule.
    {"neighbour",
     "s[t] = i < n ? gelu(float(x[i])) : 0.0f; const long long t0 = clock64(); while (clock64() - t0 < 20000) {} "
     "const int u = (t + 32) % BLOCK; const long long j = blockIdx.x * static_cast<long long>(BLOCK) + u; "
     "if (j < n) y[j] = T(s[u]);"},
    // Reuses the buffer for a second phase without the barrier that keeps the first phase's
    // readers ahead of the second phase's writers (a write-after-read race at warp boundaries).
    {"reuse",
     "s[t] = i < n ? float(x[i]) : 0.0f; __syncthreads(); const float left = s[(t + BLOCK - 1) % BLOCK]; "
     "const long long l = blockIdx.x * static_cast<long long>(BLOCK) + (t + BLOCK - 1) % BLOCK; "
     "s[t] = i < n ? gelu(float(x[i])) : 0.0f; __syncthreads(); "
     "if (i < n) y[i] = T(s[t] + (l < n && left != float(x[l]) ? 1.0f : 0.0f));"},
};

// The same exchange as `neighbour`, with the barrier it needs.
const SmemKernel kCorrect = {"synced",
                             "s[t] = i < n ? gelu(float(x[i])) : 0.0f; __syncthreads(); const int u = (t + 32) % BLOCK; "
                             "const long long j = blockIdx.x * static_cast<long long>(BLOCK) + u; if (j < n) y[j] = T(s[u]);"};

std::filesystem::path smem_problem() {
  const auto root = test::copy_problem("gelu", "audit");
  std::vector<SmemKernel> all(std::begin(kRacy), std::end(kRacy));
  all.push_back(kCorrect);
  for (const auto& k : all)
    test::add_gelu_variant(root / "gelu", k.name,
                           std::string("__device__ inline float gelu(float v) { return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }\n"
                                       "template <typename T, int BLOCK>\n__global__ void smem_kernel(const T* x, T* y, long long n) {\n"
                                       "  __shared__ float s[BLOCK];\n  const int t = threadIdx.x;\n"
                                       "  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + t;\n  ") +
                               k.body + "\n}\n",
                           "smem_kernel");
  return root;
}

class SanitizerAuditGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SOLTUNE_REQUIRE_GPU();
    const auto s = find_compute_sanitizer();
    // A GPU machine without the sanitizer cannot audit: that is a failure here, never a skip.
    ASSERT_TRUE(s.has_value()) << "compute-sanitizer not found on a machine with a GPU";
    sanitizer_ = *s;
    device_ = cuda_devices().devices.at(0);
  }
  AuditOptions options(const std::filesystem::path& templates) const {
    AuditOptions o;
    o.sanitizer = sanitizer_;
    o.worker.command = {test::soltune_binary(), "worker"};
    o.worker.templates = templates;
    o.worker.eval.seed = 11;
    o.timeout_s = 300;
    return o;
  }
  static std::string verdicts(const std::vector<ToolAudit>& v) {
    std::string s;
    for (const auto& a : v) s += a.tool + ": " + std::string(audit_verdict_name(a.verdict)) + " " + a.log + "\n";
    return s;
  }
  std::filesystem::path sanitizer_;
  DeviceInfo device_;
  Compiler compiler_{default_compiler_options()};
};

TEST_F(SanitizerAuditGpu, SharedMemoryRacesFailRacecheckWhateverTheirResults) {
  const auto root = smem_problem();
  const auto p = load_problem(root, "gelu");
  for (const auto& k : kRacy) {
    const Task t{&p, &p.variant(k.name), DType::f32, Shape{{{"n", 100003}}}};
    const auto v = audit_kernel(compiler_, options(root), device_, t, Config{{256}});
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(overall_verdict(v), AuditVerdict::failed) << k.name << "\n" << verdicts(v);
    EXPECT_EQ(v[1].tool, "racecheck");
    EXPECT_EQ(v[1].verdict, AuditVerdict::failed) << k.name << "\n" << verdicts(v);
    EXPECT_GT(v[1].errors, 0) << k.name;
    EXPECT_NE(v[1].log.find("smem_kernel"), std::string::npos) << k.name << ": the finding names the kernel\n" << v[1].log;
    // No memory error (memcheck may still fail it: serialised, the race can show in its results).
    EXPECT_EQ(v[0].errors, 0) << k.name << "\n" << verdicts(v);
    EXPECT_NE(v[3].verdict, AuditVerdict::failed) << k.name << ": initcheck finds nothing uninitialized\n" << verdicts(v);
  }
}

TEST_F(SanitizerAuditGpu, CorrectKernelsPassEveryTool) {
  const auto root = smem_problem();
  const auto p = load_problem(root, "gelu");
  const Task t{&p, &p.variant(kCorrect.name), DType::f32, Shape{{{"n", 100003}}}};
  auto v = audit_kernel(compiler_, options(root), device_, t, Config{{256}});
  EXPECT_EQ(overall_verdict(v), AuditVerdict::passed) << verdicts(v);

  // A shipped template with shared memory, cp.async staging and a tree reduction.
  const auto templates = test::source_dir() / "templates";
  const auto softmax = load_problem(templates, "softmax");
  const Task st{&softmax, &softmax.variant("cached"), DType::f32, Shape{{{"rows", 256}, {"cols", 4096}}}};
  const Space space(*st.variant, st.fixed(device_));
  Rng rng(3);
  for (const char* want : {"STAGE=2", "REDUCE=1"}) {
    std::optional<Config> c;
    for (int tries = 0; tries < 20000 && !c; ++tries)
      if (auto s = space.sample(rng); s && space.key(*s).find(want) != std::string::npos) c = s;
    ASSERT_TRUE(c.has_value()) << want;
    v = audit_kernel(compiler_, options(templates), device_, st, *c);
    EXPECT_EQ(overall_verdict(v), AuditVerdict::passed) << space.key(*c) << "\n" << verdicts(v);
  }
}

}  // namespace
}  // namespace soltune
