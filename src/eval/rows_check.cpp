// The checks of timed repetitions by the reference on rows drawn at random, for problems whose
// reference costs as much as the work it checks: reference_rows (rows independent: the reference
// recomputes a sample of the outputs' rows from inputs cut to those rows; a GEMM with a non-linear
// epilogue) and reference_picked (the reference source's own kernel computes picked rows from the
// whole inputs; attention). docs/MEASUREMENT.md argues their power.
#include <algorithm>
#include <cstdio>

#include "eval/builtin_kernels.hpp"
#include "eval/candidates.hpp"
#include "eval/cuda_check.hpp"
#include "eval/cuda_task_state.hpp"
#include "eval/timing_loop.hpp"

namespace soltune {
namespace {

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Places each buffer's r rows in the workspace from `bytes` on (an output's in double, with its
// magnitudes); returns where they end.
size_t place(std::vector<SampledRows>& cut, size_t bytes, int64_t r) {
  for (auto& c : cut) {
    const bool out = c.slot->spec->role == Role::out;
    const auto row = static_cast<size_t>(c.row_elems) * (out ? sizeof(double) : dtype_bytes(c.slot->dtype));
    c.at = bytes;
    bytes += aligned(static_cast<size_t>(r) * row);
    if (out && c.slot->spec->magnitude) {
      c.mag_at = bytes;
      bytes += aligned(static_cast<size_t>(r) * row);
    }
  }
  return bytes;
}

// The reference's arguments that name a buffer of `cut` (or its magnitude) pointed at its rows.
void point_at_rows(LaunchArgs& a, const LaunchSpec& l, const std::vector<SampledRows>& cut, unsigned char* ws) {
  for (size_t i = 0; i < l.args.size(); ++i) {
    const auto extra = reference_array(l.args[i]);
    const std::string& buffer = extra ? extra->buffer : l.args[i];
    const auto c = std::find_if(cut.begin(), cut.end(), [&](const SampledRows& x) { return x.slot->spec->name == buffer; });
    if (c == cut.end()) continue;
    *static_cast<void**>(a.ptrs[i]) =  // the buffer's value in a.values
        ws + (extra && extra->kind == ReferenceArray::Kind::magnitude ? c->mag_at : c->at);
  }
}

}  // namespace

void TaskState::reference_rows_check(const RoutineCall& call, Accuracy& acc, int set) {
  const std::string& size = call.sizes.at("rows").text();  // a size's name (problem_parse.cpp)
  const auto m = static_cast<long long>(bind_.at(size));
  const int64_t r = reference_check_rows(m);

  // Every buffer whose first dimension is the rows' is cut to them: inputs gathered, outputs (and
  // their magnitudes) recomputed into doubles of their own.
  std::vector<SampledRows> cut;
  for (auto& s : slots_) {
    const Role role = s->spec->role;
    if (!s->spec->is_buffer || (role != Role::in && role != Role::out) || s->spec->shape.empty() ||
        s->spec->shape[0].text() != size || s->elems == 0)
      continue;
    cut.push_back({s.get(), s->elems / m});
  }
  const size_t stats_at = aligned(static_cast<size_t>(r) * 8);  // after the row indices
  const size_t bytes = place(cut, stats_at + aligned(cut.size() * sizeof(CompareStats)), r);
  if (check_ws_.bytes() < bytes) check_ws_ = DeviceBuffer(bytes);
  auto* ws = static_cast<unsigned char*>(check_ws_.get());
  auto* rows = reinterpret_cast<long long*>(ws);
  auto* stats = reinterpret_cast<CompareStats*>(ws + stats_at);
  SOLTUNE_CUDA(cudaMemsetAsync(stats, 0, cut.size() * sizeof(CompareStats), stream()));

  // The rows are drawn now, after the candidate ran: it could not know them.
  const std::vector<long long> picked = draw_rows(m, r);
  SOLTUNE_CUDA(cudaMemcpyAsync(rows, picked.data(), picked.size() * 8, cudaMemcpyHostToDevice, stream()));
  SOLTUNE_CUDA(cudaEventRecord(check_marks_[0].get(), stream()));
  int r_int = static_cast<int>(r);
  for (auto& c : cut) {
    if (c.slot->spec->role != Role::in) continue;
    const void* src = c.slot->at(static_cast<size_t>(set));
    void* dst = ws + c.at;
    const long long row_bytes = c.row_elems * static_cast<long long>(dtype_bytes(c.slot->dtype));
    const bool wide = row_bytes % 16 == 0;  // both buffers start 256-byte aligned
    long long units = wide ? row_bytes / 16 : row_bytes;
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
  point_at_rows(a, l, cut, ws);
  for (auto& s : slots_)
    if (!s->spec->is_buffer) store_scalar(*s, s->spec->value.eval(cut_bind));
  const cudaError_t launched = launch_kernel(reference_.at(name_expression(l, task_.dtype, bind_)), g, a.ptrs.data(), stream());
  for (auto& s : slots_)
    if (!s->spec->is_buffer) store_scalar(*s, s->spec->value.eval(bind_));
  SOLTUNE_CUDA(launched);

  compare_sampled(cut, ws, rows, r, m, stats, acc);
}

void TaskState::compare_sampled(const std::vector<SampledRows>& cut, const unsigned char* ws, const long long* rows,
                                int64_t r, long long total, CompareStats* stats, Accuracy& acc) {
  // The candidate's rows against the reference's, each output under its dtype's band.
  std::vector<const SampledRows*> outs;
  for (const auto& c : cut)
    if (c.slot->spec->role == Role::out) outs.push_back(&c);
  int r_int = static_cast<int>(r);
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tolerance tol = output_tolerance(*outs[i]->slot);
    double atol = tol.atol, rtol = tol.rtol, mtol = tol.mtol.empty() ? 0.0 : tol.mtol.eval(bind_);
    const void* out = outs[i]->slot->data();
    const void* ref = ws + outs[i]->at;
    const void* mag = outs[i]->mag_at ? ws + outs[i]->mag_at : nullptr;
    long long n = outs[i]->row_elems;
    CompareStats* st = stats + i;
    launch_builtin("soltune_rows_compare<" + std::string(dtype_cpp(outs[i]->slot->dtype)) + ">",
                   {&out, &n, &rows, &r_int, &ref, &mag, &atol, &rtol, &mtol, &st}, r * n);
  }
  SOLTUNE_CUDA(cudaEventRecord(check_marks_[1].get(), stream()));
  std::vector<CompareStats> cs(outs.size());
  SOLTUNE_CUDA(cudaMemcpyAsync(cs.data(), stats, cs.size() * sizeof(CompareStats), cudaMemcpyDeviceToHost, stream()));
  SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
  float ms = 0;
  SOLTUNE_CUDA(cudaEventElapsedTime(&ms, check_marks_[0].get(), check_marks_[1].get()));

  bool band_ok = true;
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tolerance tol = output_tolerance(*outs[i]->slot);
    acc.checked += static_cast<int64_t>(cs[i].checked);
    acc.mismatches += static_cast<int64_t>(cs[i].mismatches);
    acc.nonfinite += static_cast<int64_t>(cs[i].nonfinite);
    acc.unwritten += static_cast<int64_t>(cs[i].unwritten);
    add_errors(acc, cs[i], tol.rel_l2);
    if (static_cast<double>(cs[i].mismatches) > (1.0 - tol.min_match) * static_cast<double>(cs[i].checked)) band_ok = false;
    acc.out_of_bounds += guard_damage(*outs[i]->slot);
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "checked on %lld sampled rows of %lld by the reference (on the GPU: %.3f ms)",
                static_cast<long long>(r), total, ms);
  acc.detail = buf;
  check_workspaces(acc);
  acc.settle(band_ok);
}

// reference_picked: the reference source's own kernel computes picked rows of every output, from
// the whole inputs (attention's queries, whose keys and values no cut of rows carries).
void TaskState::reference_picked_check(const RoutineCall& call, Accuracy& acc, int set) {
  const auto rows = static_cast<long long>(call.sizes.at("rows").eval(bind_));
  const auto group = std::max<long long>(1, static_cast<long long>(call.sizes.at("group").eval(bind_)));
  const long long tile = std::min(static_cast<long long>(call.sizes.at("tile").eval(bind_)), group);
  const long long tiles = std::max<long long>(1, (reference_check_rows(rows) + tile - 1) / tile);
  const long long r = tiles * tile;

  std::vector<SampledRows> outs;
  for (auto& s : slots_) {
    if (!s->spec->is_buffer || s->spec->role != Role::out) continue;
    if (s->elems % rows != 0)
      throw Error(task_.problem->name + "'s check reference_picked: output '" + s->spec->name + "' has " +
                  std::to_string(s->elems) + " elements, not rows of " + std::to_string(rows));
    outs.push_back({s.get(), s->elems / rows});
  }
  // The rows, the runs' first rows, the comparisons' stats, then the outputs' rows.
  const size_t firsts_at = aligned(static_cast<size_t>(r) * 8), stats_at = firsts_at + aligned(static_cast<size_t>(tiles) * 8);
  const size_t bytes = place(outs, stats_at + aligned(outs.size() * sizeof(CompareStats)), r);
  if (check_ws_.bytes() < bytes) check_ws_ = DeviceBuffer(bytes);
  auto* ws = static_cast<unsigned char*>(check_ws_.get());
  auto* picked_rows = reinterpret_cast<long long*>(ws);
  auto* firsts = reinterpret_cast<long long*>(ws + firsts_at);
  auto* stats = reinterpret_cast<CompareStats*>(ws + stats_at);
  SOLTUNE_CUDA(cudaMemsetAsync(stats, 0, outs.size() * sizeof(CompareStats), stream()));

  // Tiles drawn now, after the candidate ran: a group at random, a run of `tile` rows inside it.
  std::vector<long long> first(static_cast<size_t>(tiles)), all;
  const long long groups = std::max<long long>(1, rows / group);
  for (auto& f : first) {
    const auto g = static_cast<long long>(unpredictable() % static_cast<uint64_t>(groups));
    const auto i = static_cast<long long>(unpredictable() % static_cast<uint64_t>(group - tile + 1));
    f = g * group + i;
    for (long long j = 0; j < tile; ++j) all.push_back(f + j);
  }
  SOLTUNE_CUDA(cudaMemcpyAsync(picked_rows, all.data(), all.size() * 8, cudaMemcpyHostToDevice, stream()));
  SOLTUNE_CUDA(cudaMemcpyAsync(firsts, first.data(), first.size() * 8, cudaMemcpyHostToDevice, stream()));
  SOLTUNE_CUDA(cudaEventRecord(check_marks_[0].get(), stream()));

  // The reference's arguments, its outputs (and magnitudes) the compact ones, then the first rows
  // and the tile; a block a tile.
  const auto& l = task_.problem->reference;
  auto a = args(l, set, true);
  point_at_rows(a, l, outs, ws);
  void* firsts_arg = firsts;
  long long tile_arg = tile;
  a.ptrs.push_back(&firsts_arg);
  a.ptrs.push_back(&tile_arg);
  Geometry g = eval_geometry(l, bind_);
  g.grid = {tiles, 1, 1};
  SOLTUNE_CUDA(launch_kernel(reference_.at(picked_reference_name(task_, bind_)), g, a.ptrs.data(), stream()));

  compare_sampled(outs, ws, picked_rows, r, rows, stats, acc);
}

}  // namespace soltune
