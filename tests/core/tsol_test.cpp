// Each shipped problem's T_SOL on the H200's datasheet ceilings (4.8 TB/s, 66.9 TFLOP/s FP32,
// 989.4 TFLOP/s 16-bit tensor), against values worked out by hand from its flops and bytes.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/device.hpp"
#include "core/problem.hpp"
#include "core/task.hpp"

namespace soltune {
namespace {

const std::filesystem::path kTemplates = SOLTUNE_SOURCE_DIR "/templates";

double t_sol(const std::string& problem, DType dt, const std::vector<std::pair<std::string, int64_t>>& dims) {
  static std::map<std::string, ProblemSpec> loaded;
  if (!loaded.count(problem)) loaded[problem] = load_problem(kTemplates, problem);
  const auto& p = loaded.at(problem);
  const Task t{&p, &p.variants.front(), dt, Shape{dims}};
  return t.t_sol_us(find_known_gpu("H200")->datasheet);
}

TEST(TSol, MemoryBoundProblemsAtTheCopyRate) {
  // GELU, n = 2^28: 2 n elements moved; f32 2^31 B / 4.8e12 B/s = 447.392 us (the 9n FLOPs need 36 us).
  EXPECT_NEAR(t_sol("gelu", DType::f32, {{"n", 1 << 28}}), 447.3924, 1e-3);
  EXPECT_NEAR(t_sol("gelu", DType::bf16, {{"n", 1 << 28}}), 223.6962, 1e-3);
  // Softmax 8192 x 8192 f32: 2 * 2^26 * 4 B = 536870912 B -> 111.848 us.
  EXPECT_NEAR(t_sol("softmax", DType::f32, {{"rows", 8192}, {"cols", 8192}}), 111.8481, 1e-3);
  // LayerNorm 8192 x 4096 f32: (2 * 2^25 + 2 * 4096) * 4 B (x, y, weight, bias) -> 55.931 us.
  EXPECT_NEAR(t_sol("layernorm", DType::f32, {{"rows", 8192}, {"cols", 4096}}), 55.9309, 1e-3);
  // RMSNorm, the same without a bias: (2 * 2^25 + 4096) * 4 B -> 55.927 us.
  EXPECT_NEAR(t_sol("rmsnorm", DType::f32, {{"rows", 8192}, {"cols", 4096}}), 55.9275, 1e-3);
  // L1 norm, n = 2^28 f32: read n * 4 B and write one value -> 223.696 us.
  EXPECT_NEAR(t_sol("l1norm", DType::f32, {{"n", 1 << 28}}), 223.6962, 1e-3);
}

TEST(TSol, MatmulCountsSixteenBitFlopsAgainstTensorCores) {
  const std::vector<std::pair<std::string, int64_t>> cube{{"m", 4096}, {"n", 4096}, {"k", 4096}};
  // 2 * 4096^3 = 137438953472 FLOP at 989.4 TFLOP/s = 138.911 us (its 100.7 MB need 21 us).
  EXPECT_NEAR(t_sol("matmul", DType::bf16, cube), 138.9114, 1e-3);
  EXPECT_NEAR(t_sol("matmul", DType::f16, cube), 138.9114, 1e-3);
  // f32 on the FP32 units: at 66.9 TFLOP/s, 2054.394 us.
  EXPECT_NEAR(t_sol("matmul", DType::f32, cube), 2054.3939, 1e-3);
  // 1000 x 1000 x 999 f32: 1.998e9 FLOP -> 29.865 us; 1793^3 bf16: 1.1528e10 FLOP -> 11.652 us.
  EXPECT_NEAR(t_sol("matmul", DType::f32, {{"m", 1000}, {"n", 1000}, {"k", 999}}), 29.8655, 1e-3);
  EXPECT_NEAR(t_sol("matmul", DType::bf16, {{"m", 1793}, {"n", 1793}, {"k", 1793}}), 11.6520, 1e-3);
}

TEST(TSol, EightBitProblemsFallBackToTheSixteenBitRateWithoutEightBitTensorCores) {
  Ceilings a100 = find_known_gpu("A100")->datasheet;
  EXPECT_EQ(a100.tensor_8, 0);
  EXPECT_EQ(a100.rate(ComputeUnit::tensor_8), a100.tensor_16);
  const Ceilings h200 = find_known_gpu("H200")->datasheet;
  EXPECT_DOUBLE_EQ(h200.rate(ComputeUnit::tensor_8), 1978.9e12);
  EXPECT_DOUBLE_EQ(h200.rate(ComputeUnit::fp32), 66.9e12);
}

}  // namespace
}  // namespace soltune
