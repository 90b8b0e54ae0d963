// The checks of timed repetitions that a problem declares in place of its reference (`check:` in
// problem.yaml). docs/MEASUREMENT.md argues their power.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "core/tolerance.hpp"
#include "eval/builtin_kernels.hpp"
#include "eval/cuda_check.hpp"
#include "eval/cuda_task_state.hpp"
#include "eval/timing_loop.hpp"

namespace soltune {
namespace {
unsigned cdiv(int64_t a, int64_t b) { return static_cast<unsigned>((a + b - 1) / b); }
}  // namespace

std::vector<long long> TaskState::draw_rows(long long m, int64_t r) {
  std::vector<long long> picked;
  std::unordered_set<long long> seen;  // Floyd's sampling
  for (long long j = m - r; j < m; ++j) {
    const auto t = static_cast<long long>(unpredictable() % static_cast<uint64_t>(j + 1));
    const long long row = seen.insert(t).second ? t : j;
    if (row == j) seen.insert(j);
    picked.push_back(row);
  }
  return picked;
}

void TaskState::check_repetition(Accuracy& acc, int set) {
  const auto& call = task_.problem->timed_check;
  if (call && call->routine == "reference_rows") return reference_rows_check(*call, acc, set);  // rows_check.cpp
  if (call && call->routine == "reference_picked") return reference_picked_check(*call, acc, set);
  // gemm_projection and scaled_gemm_projection: the same kernels, the latter with its scales.
  const auto dtypes = gemm_check_dtypes();
  if (!call || std::find(dtypes.begin(), dtypes.end(), task_.dtype) == dtypes.end()) {
    run_reference(set);
    compare_outputs(acc);
    return;
  }
  gemm_projection_check(*call, acc, set);
}

void TaskState::gemm_projection_check(const RoutineCall& call, Accuracy& acc, int set) {
  auto size = [&](const char* name) -> long long {
    const auto it = call.sizes.find(name);
    return it == call.sizes.end() ? 0 : static_cast<long long>(it->second.eval(bind_));
  };
  long long m = size("m"), n = size("n"), k = size("k");
  // The scaled GEMM's dequantizing scales (scaled_gemm_projection: 8-bit A and B, B n x k), in
  // cublaslt_scaled_gemm's modes; problem_parse.cpp pairs the routines with the dtypes.
  const bool scaled = call.routine == "scaled_gemm_projection";
  int trans_b = scaled || size("trans_b") != 0;
  ArgSlot& A = slot(call.operands.at("a"));
  ArgSlot& B = slot(call.operands.at("b"));
  ArgSlot& C = slot(call.operands.at("c"));
  const void* a = A.at(static_cast<size_t>(set));
  const void* b = B.at(static_cast<size_t>(set));
  const void* c = C.data();
  const int64_t r = exact_check_rows(m);
  const void* sa = scaled ? slot(call.operands.at("sa")).at(static_cast<size_t>(set)) : nullptr;
  const void* sb = scaled ? slot(call.operands.at("sb")).at(static_cast<size_t>(set)) : nullptr;
  int scale = scaled ? static_cast<int>(size("scale")) : -1;

  // y, bsum, bmax (k each), z, msum, mmax and the per-row sums of C (w, c2, cabs, unwritten,
  // non-finite: m each), the exact rows' sums and magnitudes (r x n each), the signs (n), two
  // CompareStats, the rows.
  const size_t doubles = static_cast<size_t>(3 * k + 8 * m + 2 * r * n + n);
  const size_t bytes = doubles * 8 + 2 * sizeof(CompareStats) + static_cast<size_t>(r) * 8;
  if (check_ws_.bytes() < bytes) check_ws_ = DeviceBuffer(bytes);
  auto* d = static_cast<double*>(check_ws_.get());
  double *y = d, *bsum = d + k, *bmax = d + 2 * k, *z = d + 3 * k, *msum = z + m, *mmax = z + 2 * m;
  double *w = z + 3 * m, *c2 = w + m, *cabs = w + 2 * m;
  auto* unwr = reinterpret_cast<unsigned long long*>(w + 3 * m);
  auto* nonfin = unwr + m;
  double *row_ref = w + 5 * m, *row_mag = row_ref + r * n, *x = row_mag + r * n;
  auto* stats = reinterpret_cast<CompareStats*>(d + doubles);
  CompareStats* proj_stats = stats;
  CompareStats* row_stats = stats + 1;
  auto* rows = reinterpret_cast<long long*>(stats + 2);
  SOLTUNE_CUDA(cudaMemsetAsync(y, 0, static_cast<size_t>(3 * k) * 8, stream()));
  SOLTUNE_CUDA(cudaMemsetAsync(w, 0, static_cast<size_t>(5 * m) * 8, stream()));
  SOLTUNE_CUDA(cudaMemsetAsync(row_ref, 0, static_cast<size_t>(2 * r * n) * 8, stream()));
  SOLTUNE_CUDA(cudaMemsetAsync(stats, 0, 2 * sizeof(CompareStats), stream()));

  // The rows and the signs are drawn now, after the candidate ran: it could not know them.
  const std::vector<long long> picked = draw_rows(m, r);
  SOLTUNE_CUDA(cudaMemcpyAsync(rows, picked.data(), picked.size() * 8, cudaMemcpyHostToDevice, stream()));
  unsigned long long seed = unpredictable();

  const Tolerance& tol = task_.problem->tolerance.at(task_.dtype);
  double atol = tol.atol, rtol = tol.rtol, mtol = tol.mtol.empty() ? 0.0 : tol.mtol.eval(bind_), zscore = kProjectionZscore;
  const std::string t = "<" + std::string(dtype_cpp(A.dtype)) + ">", tc = "<" + std::string(dtype_cpp(C.dtype)) + ">";
  int r_int = static_cast<int>(r);
  SOLTUNE_CUDA(cudaEventRecord(check_marks_[0].get(), stream()));
  launch_builtin("soltune_proj_signs", {&seed, &n, &x}, dim3(std::min<unsigned>(cdiv(n, 256), 1024u)));
  launch_builtin("soltune_proj_b" + t, {&b, &n, &k, &trans_b, &sb, &scale, &x, &y, &bsum, &bmax}, dim3(cdiv(k, 256), cdiv(n, 256)));
  launch_builtin("soltune_proj_a" + t, {&a, &m, &k, &sa, &scale, &y, &bsum, &bmax, &z, &msum, &mmax}, dim3(cdiv(m * 32, 256)));
  launch_builtin("soltune_proj_c" + tc, {&c, &m, &n, &x, &w, &c2, &cabs, &unwr, &nonfin},
                 dim3(cdiv(m * 32, 256), cdiv(n, kProjColumns)));
  launch_builtin("soltune_proj_rows",
                 {&m, &n, &k, &z, &msum, &mmax, &w, &c2, &cabs, &unwr, &nonfin, &atol, &rtol, &mtol, &zscore, &proj_stats},
                 dim3(cdiv(m, 256)));
  SOLTUNE_CUDA(cudaEventRecord(check_marks_[1].get(), stream()));
  // 256 columns of 16 rows a block, a block an SM (its 32 double accumulators take about 168
  // registers a thread); k split so that the last wave is nearly full.
  const int64_t tiles = int64_t{cdiv(n, 256)} * cdiv(r, kExactRowsPerBlock);
  const int64_t splits = exact_rows_splits(tiles, dev_->sms, k);
  long long k_chunk = (k + splits - 1) / splits;
  k_chunk = (k_chunk + kExactRowsKTile - 1) / kExactRowsKTile * kExactRowsKTile;
  launch_builtin("soltune_gemm_rows" + t,
                 {&a, &b, &m, &n, &k, &trans_b, &sa, &sb, &scale, &rows, &r_int, &k_chunk, &row_ref, &row_mag},
                 dim3(cdiv(n, 256), cdiv(r, kExactRowsPerBlock), cdiv(k, k_chunk)));
  launch_builtin("soltune_rows_compare" + tc, {&c, &n, &rows, &r_int, &row_ref, &row_mag, &atol, &rtol, &mtol, &row_stats},
                 r * n);
  SOLTUNE_CUDA(cudaEventRecord(check_marks_[2].get(), stream()));
  CompareStats cs[2]{};
  SOLTUNE_CUDA(cudaMemcpyAsync(cs, stats, sizeof cs, cudaMemcpyDeviceToHost, stream()));
  SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
  float proj_ms = 0, rows_ms = 0;
  SOLTUNE_CUDA(cudaEventElapsedTime(&proj_ms, check_marks_[0].get(), check_marks_[1].get()));
  SOLTUNE_CUDA(cudaEventElapsedTime(&rows_ms, check_marks_[1].get(), check_marks_[2].get()));
  const CompareStats &proj = cs[0], &exact = cs[1];

  // The projection sees every element: it counts the unwritten and non-finite ones; the exact rows
  // count the elements outside the band, and measure the errors.
  const auto rows_off = static_cast<int64_t>(proj.mismatches - proj.unwritten - proj.nonfinite);
  const auto exact_off = static_cast<int64_t>(exact.mismatches - exact.unwritten - exact.nonfinite);
  acc.checked += static_cast<int64_t>(exact.checked);
  acc.mismatches += exact_off + static_cast<int64_t>(proj.unwritten + proj.nonfinite);
  acc.nonfinite += static_cast<int64_t>(proj.nonfinite);
  acc.unwritten += static_cast<int64_t>(proj.unwritten);
  add_errors(acc, exact, tol.rel_l2);
  const bool band_ok = rows_off == 0 && static_cast<double>(exact_off) <= (1.0 - tol.min_match) * static_cast<double>(exact.checked);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "checked by projection (%lld of %lld rows off, the worst at %.3g of its bound) and %lld exact rows "
                "(on the GPU: %.3f ms and %.3f ms)",
                static_cast<long long>(rows_off), m, proj.max_rel, static_cast<long long>(r), proj_ms, rows_ms);
  acc.detail = buf;
  acc.out_of_bounds += guard_damage(C);
  check_workspaces(acc);
  acc.settle(band_ok);
}

}  // namespace soltune
