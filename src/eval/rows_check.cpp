// The check of timed repetitions by the reference on rows drawn at random (check routine
// reference_rows): for problems whose rows are independent and whose reference costs as much as the
// work it checks (a GEMM with a non-linear epilogue), the reference recomputes a sample of the
// outputs' rows from inputs cut to those rows. docs/MEASUREMENT.md argues its power.
#include <algorithm>
#include <cstdio>

#include "eval/builtin_kernels.hpp"
#include "eval/cuda_check.hpp"
#include "eval/cuda_task_state.hpp"
#include "eval/timing_loop.hpp"

namespace soltune {
namespace {

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

void TaskState::reference_rows_check(const RoutineCall& call, Accuracy& acc, int set) {
  const std::string& size = call.sizes.at("rows").text();  // a size's name (problem_parse.cpp)
  const auto m = static_cast<long long>(bind_.at(size));
  const int64_t r = reference_check_rows(m);

  // Every buffer whose first dimension is the rows' is cut to them: inputs gathered, outputs (and
  // their magnitudes) recomputed into doubles of their own.
  struct Cut {
    ArgSlot* slot;
    long long row_bytes = 0, row_elems = 0;
    size_t at = 0, mag_at = 0;  // offsets in check_ws_: the gathered rows, or the reference's result
  };
  std::vector<Cut> cuts;
  size_t bytes = aligned(static_cast<size_t>(r) * 8);  // the row indices
  const size_t stats_at = bytes;
  for (auto& s : slots_) {
    const Role role = s->spec->role;
    if (!s->spec->is_buffer || (role != Role::in && role != Role::out) || s->spec->shape.empty() ||
        s->spec->shape[0].text() != size || s->elems == 0)
      continue;
    Cut c{s.get()};
    c.row_elems = s->elems / m;
    c.row_bytes = c.row_elems * static_cast<long long>(dtype_bytes(s->dtype));
    cuts.push_back(c);
  }
  bytes += aligned(cuts.size() * sizeof(CompareStats));
  for (auto& c : cuts) {
    c.at = bytes;
    const bool out = c.slot->spec->role == Role::out;
    bytes += aligned(static_cast<size_t>(r) * static_cast<size_t>(out ? c.row_elems * 8 : c.row_bytes));
    if (out && c.slot->spec->magnitude) {
      c.mag_at = bytes;
      bytes += aligned(static_cast<size_t>(r * c.row_elems) * 8);
    }
  }
  if (check_ws_.bytes() < bytes) check_ws_ = DeviceBuffer(bytes);
  auto* ws = static_cast<unsigned char*>(check_ws_.get());
  auto* rows = reinterpret_cast<long long*>(ws);
  auto* stats = reinterpret_cast<CompareStats*>(ws + stats_at);
  SOLTUNE_CUDA(cudaMemsetAsync(stats, 0, cuts.size() * sizeof(CompareStats), stream()));

  // The rows are drawn now, after the candidate ran: it could not know them.
  const std::vector<long long> picked = draw_rows(m, r);
  SOLTUNE_CUDA(cudaMemcpyAsync(rows, picked.data(), picked.size() * 8, cudaMemcpyHostToDevice, stream()));
  SOLTUNE_CUDA(cudaEventRecord(check_marks_[0].get(), stream()));
  int r_int = static_cast<int>(r);
  for (auto& c : cuts) {
    if (c.slot->spec->role != Role::in) continue;
    const void* src = c.slot->at(static_cast<size_t>(set));
    void* dst = ws + c.at;
    const bool wide = c.row_bytes % 16 == 0;  // both buffers start 256-byte aligned
    long long units = wide ? c.row_bytes / 16 : c.row_bytes;
    launch_builtin(wide ? "soltune_gather_rows<uint4>" : "soltune_gather_rows<unsigned char>", {&src, &dst, &units, &rows, &r_int},
                   r * units);
  }

  // The reference with the rows' size at r: its scalars and grid follow, its cut buffers are the
  // gathered ones. The scalars are put back once it is queued (a launch copies its arguments).
  Bindings cut_bind = bind_;
  cut_bind[size] = static_cast<double>(r);
  const auto& l = task_.problem->reference;
  const auto g = eval_geometry(l, cut_bind);
  auto a = args(l, set, true);
  for (size_t i = 0; i < l.args.size(); ++i) {
    const auto& name = l.args[i];
    const auto extra = reference_array(name);
    const std::string buffer = extra ? extra->buffer : name;
    const auto c = std::find_if(cuts.begin(), cuts.end(), [&](const Cut& x) { return x.slot->spec->name == buffer; });
    if (c == cuts.end()) continue;
    *static_cast<void**>(a.ptrs[i]) =  // the buffer's value in a.values
        ws + (extra && extra->kind == ReferenceArray::Kind::magnitude ? c->mag_at : c->at);
  }
  for (auto& s : slots_)
    if (!s->spec->is_buffer) store_scalar(*s, s->spec->value.eval(cut_bind));
  const cudaError_t launched = launch_kernel(reference_.at(name_expression(l, task_.dtype, bind_)), g, a.ptrs.data(), stream());
  for (auto& s : slots_)
    if (!s->spec->is_buffer) store_scalar(*s, s->spec->value.eval(bind_));
  SOLTUNE_CUDA(launched);

  // The candidate's rows against the reference's, each output under its dtype's band.
  for (size_t i = 0; i < cuts.size(); ++i) {
    const Cut& c = cuts[i];
    if (c.slot->spec->role != Role::out) continue;
    const Tolerance tol = output_tolerance(*c.slot);
    double atol = tol.atol, rtol = tol.rtol, mtol = tol.mtol.empty() ? 0.0 : tol.mtol.eval(bind_);
    const void* out = c.slot->data();
    const void* ref = ws + c.at;
    const void* mag = c.mag_at ? ws + c.mag_at : nullptr;
    long long n = c.row_elems;
    CompareStats* st = stats + i;
    launch_builtin("soltune_rows_compare<" + std::string(dtype_cpp(c.slot->dtype)) + ">",
                   {&out, &n, &rows, &r_int, &ref, &mag, &atol, &rtol, &mtol, &st}, r * n);
  }
  SOLTUNE_CUDA(cudaEventRecord(check_marks_[1].get(), stream()));
  std::vector<CompareStats> cs(cuts.size());
  SOLTUNE_CUDA(cudaMemcpyAsync(cs.data(), stats, cs.size() * sizeof(CompareStats), cudaMemcpyDeviceToHost, stream()));
  SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
  float ms = 0;
  SOLTUNE_CUDA(cudaEventElapsedTime(&ms, check_marks_[0].get(), check_marks_[1].get()));

  bool band_ok = true;
  for (size_t i = 0; i < cuts.size(); ++i) {
    const Cut& c = cuts[i];
    if (c.slot->spec->role != Role::out) continue;
    const Tolerance tol = output_tolerance(*c.slot);
    acc.checked += static_cast<int64_t>(cs[i].checked);
    acc.mismatches += static_cast<int64_t>(cs[i].mismatches);
    acc.nonfinite += static_cast<int64_t>(cs[i].nonfinite);
    acc.unwritten += static_cast<int64_t>(cs[i].unwritten);
    add_errors(acc, cs[i], tol.rel_l2);
    if (static_cast<double>(cs[i].mismatches) > (1.0 - tol.min_match) * static_cast<double>(cs[i].checked)) band_ok = false;
    acc.out_of_bounds += guard_damage(*c.slot);
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "checked on %lld sampled rows of %lld by the reference (on the GPU: %.3f ms)",
                static_cast<long long>(r), m, ms);
  acc.detail = buf;
  check_workspaces(acc);
  acc.settle(band_ok);
}

}  // namespace soltune
