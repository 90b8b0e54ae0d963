#pragma once
// Kernels soltune itself runs on the device: seeded random input draws, the output comparison
// against the double-precision reference, the L2 flush, the timing gate and the ceiling probes.
// Compiled with NVRTC like every candidate (and cached), so the binary carries no fat binary and
// starts without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace soltune {

// Mirrors the device struct in the kernel source; the compare kernel accumulates into it.
struct CompareStats {
  unsigned long long checked, mismatches, nonfinite, unwritten;
  double max_abs, max_rel, sq_err, sq_ref;
};

// The GEMM check's exact rows (soltune_gemm_rows): rows of C a block takes, and the k of a step;
// the projection's columns of C a warp sums (soltune_proj_c). The kernel source is given these values.
inline constexpr int kExactRowsPerBlock = 16, kExactRowsKTile = 16, kProjColumns = 2048;

// The chunks of k the exact rows' `tiles` blocks are split into, with `slots` blocks resident on the
// device at once and k of `k`: the grid's last wave as full as it gets, each split a small penalty
// (its partial sums are added by atomics), chunks of at least 256 k.
int exact_rows_splits(int64_t tiles, int64_t slots, int64_t k);

const std::string& builtin_kernels_source();
// The dtypes the GEMM check's kernels are built for (problem.yaml's `check: {routine: gemm_projection}`
// or scaled_gemm_projection): A's and B's, and C's.
std::vector<DType> gemm_check_dtypes();
std::vector<DType> gemm_check_output_dtypes();
// Name expressions the evaluator asks NVRTC for: fill and compare for each storage dtype, the
// flush, the gate, the probes.
std::vector<std::string> builtin_name_expressions();
// The wgmma tensor-ceiling probes, compiled apart for sm_90a (wgmma exists only there).
const std::string& wgmma_probe_source();
std::vector<std::string> wgmma_probe_name_expressions();

}  // namespace soltune
