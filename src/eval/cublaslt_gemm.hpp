#pragma once
// cuBLASLt as a GEMM baseline: C = A B in problem.yaml's matmul layout (A m x k and C m x n
// row-major, B k x n row-major or, with trans_b, n x k row-major), f32 accumulation, planned as
// torch.matmul plans it (the algorithm heuristic's first choice, a 32 MiB workspace); or the scaled
// 8-bit product of matmul_fp8, C = (sa A)(sb B)^T in bf16, as torch._scaled_mm plans it. The library is
// loaded at run time from the toolkit, so soltune starts without it; where it is missing, or refuses
// a case, plan() says why and the problem's own baseline kernels serve instead.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/dtype.hpp"

namespace soltune {

struct GemmShape {
  DType dtype = DType::f32;
  int64_t m = 0, n = 0, k = 0;
  bool trans_b = false;
  // matmul_fp8's scale mode (0 per tensor, 1 per row, 2 per block; templates/matmul_fp8/problem.yaml):
  // the scaled product, B n x k and C bf16. Unset: C = A B in dtype.
  std::optional<int64_t> scale;
  int64_t batch = 1;   // products in a row, each matrix right after the one before (attention's heads)
  double alpha = 1.0;  // C = alpha A B (attention's 1 / sqrt(d))
};

class LtGemm {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // torch's cuBLASLt workspace on sm_90

  // A planned matmul, or null with `why` (the library missing, a dtype it does not take, no algorithm
  // for the case). Throws nothing: the baseline falls back. A scaled product plans with the scales
  // of one input set (sa, sb: device pointers).
  static std::unique_ptr<LtGemm> plan(const GemmShape& s, std::string& why, const void* sa = nullptr,
                                      const void* sb = nullptr);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Queues C = A B, or C = (sa A)(sb B)^T where planned scaled, on the stream; `workspace` holds
  // kWorkspaceBytes. Returns cudaErrorUnknown where the library reports a failure (its status in
  // last_error()).
  cudaError_t run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream,
                  const float* sa = nullptr, const float* sb = nullptr);
  const std::string& last_error() const { return last_error_; }
  // "cuBLASLt 13.0.2, algorithm 23 (tile 256x128, 1 split), the heuristic's first of 1"
  const std::string& description() const { return description_; }

 private:
  LtGemm() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string description_, last_error_;
  bool scaled_ = false;
  float alpha_ = 1.0f;
};

}  // namespace soltune
