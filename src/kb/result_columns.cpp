#include "kb/result_columns.hpp"

#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/fields.hpp"
#include "kb/columns.hpp"

namespace soltune::kb {
namespace {

ColumnValue value_of(int v) { return int64_t{v}; }
ColumnValue value_of(int64_t v) { return v; }
ColumnValue value_of(double v) { return v; }
ColumnValue value_of(bool v) { return v; }
ColumnValue value_of(const std::string& v) { return v; }

// A member of the record, a member of one of its members, or an element of such a member's array;
// `json` names it in a result's JSON where that name is not the column's.
template <auto M>
ResultColumn col(const char* name, bool written = true, const char* json = nullptr) {
  return {name, written, [](sqlite::Stmt& st, const char* n, const ResultRecord& r) { st.bind(n, r.*M); },
          [](const sqlite::Stmt& st, const char* n, ResultRecord& r) { get(st, n, r.*M); },
          [](const ResultRecord& r) { return value_of(r.*M); }, json ? json : name};
}
template <auto S, auto M>
ResultColumn col(const char* name) {
  return {name, true, [](sqlite::Stmt& st, const char* n, const ResultRecord& r) { st.bind(n, (r.*S).*M); },
          [](const sqlite::Stmt& st, const char* n, ResultRecord& r) { get(st, n, (r.*S).*M); },
          [](const ResultRecord& r) { return value_of((r.*S).*M); }, name};
}
template <auto S, auto A, int I>
ResultColumn col(const char* name) {
  return {name, true, [](sqlite::Stmt& st, const char* n, const ResultRecord& r) { st.bind(n, ((r.*S).*A)[I]); },
          [](const sqlite::Stmt& st, const char* n, ResultRecord& r) { get(st, n, ((r.*S).*A)[I]); },
          [](const ResultRecord& r) { return value_of(((r.*S).*A)[I]); }, name};
}

using R = ResultRecord;

// What a row and a result hold alike, paired once: to_record and to_eval_result walk the pairs in
// their two directions. The row's timing columns, beside the Timing fields they hold:
constexpr std::tuple kTimingColumns{std::pair{&R::time_us, &Timing::median_us}, std::pair{&R::min_us, &Timing::min_us},
                                    std::pair{&R::q1_us, &Timing::q1_us},       std::pair{&R::q3_us, &Timing::q3_us},
                                    std::pair{&R::max_us, &Timing::max_us},     std::pair{&R::reps, &Timing::reps}};
// the score's columns, beside the SolScore fields they hold (a row only: a result has no score):
constexpr std::tuple kScoreColumns{std::pair{&R::t_ref_us, &SolScore::t_ref_us}, std::pair{&R::t_sol_us, &SolScore::t_sol_us},
                                   std::pair{&R::sol_score, &SolScore::score},   std::pair{&R::sol_execbench, &SolScore::execbench},
                                   std::pair{&R::sol_valid, &SolScore::valid},   std::pair{&R::below_sol, &SolScore::below_sol}};
// and the members both have:
constexpr std::tuple kCarried{std::pair{&R::res, &EvalResult::res},
                              std::pair{&R::geo, &EvalResult::geo},
                              std::pair{&R::acc, &EvalResult::acc},
                              std::pair{&R::compile_ms, &EvalResult::compile_ms},
                              std::pair{&R::cache_hit, &EvalResult::cache_hit},
                              std::pair{&R::occupancy_blocks, &EvalResult::occupancy_blocks},
                              std::pair{&R::log, &EvalResult::log},
                              std::pair{&R::proposer, &EvalResult::proposer},
                              std::pair{&R::wall_ms, &EvalResult::wall_ms},
                              std::pair{&R::phases, &EvalResult::phases},
                              std::pair{&R::retimed, &EvalResult::retimed}};

}  // namespace

const std::vector<ResultColumn>& result_columns() {
  static const std::vector<ResultColumn> c = {
      col<&R::id>("id", false), col<&R::run_id>("run_id", false), col<&R::gpu_id>("gpu_id", false),
      col<&R::gpu_name>("gpu_name", false, "gpu"), col<&R::created_at>("created_at", false),
      col<&R::problem>("problem"), col<&R::variant>("variant"), col<&R::dtype>("dtype"), col<&R::shape_key>("shape_key", true, "shape"),
      col<&R::config_key>("config_key"), col<&R::source_hash>("source_hash"), col<&R::status>("status"),
      col<&R::time_kind>("time_kind", true, "kind"), col<&R::time_us>("time_us"), col<&R::min_us>("min_us"), col<&R::q1_us>("q1_us"),
      col<&R::q3_us>("q3_us"), col<&R::max_us>("max_us"), col<&R::reps>("reps"), col<&R::t_ref_us>("t_ref_us"),
      col<&R::t_sol_us>("t_sol_us"), col<&R::sol_score>("sol_score"), col<&R::sol_execbench>("sol_execbench"),
      col<&R::sol_valid>("sol_valid"), col<&R::below_sol>("below_sol"),
      col<&R::res, &Resources::registers>("registers"), col<&R::res, &Resources::spill_stores>("spill_stores"),
      col<&R::res, &Resources::spill_loads>("spill_loads"), col<&R::res, &Resources::stack>("stack"),
      col<&R::res, &Resources::smem_static>("smem_static"), col<&R::res, &Resources::cmem>("cmem"),
      col<&R::res, &Resources::parsed>("res_parsed"),
      col<&R::geo, &Geometry::grid, 0>("grid_x"), col<&R::geo, &Geometry::grid, 1>("grid_y"),
      col<&R::geo, &Geometry::grid, 2>("grid_z"), col<&R::geo, &Geometry::block, 0>("block_x"),
      col<&R::geo, &Geometry::block, 1>("block_y"), col<&R::geo, &Geometry::block, 2>("block_z"),
      col<&R::geo, &Geometry::smem>("smem"),
      col<&R::acc, &Accuracy::checked>("acc_checked"), col<&R::acc, &Accuracy::mismatches>("acc_mismatches"),
      col<&R::acc, &Accuracy::nonfinite>("acc_nonfinite"), col<&R::acc, &Accuracy::unwritten>("acc_unwritten"),
      col<&R::acc, &Accuracy::out_of_bounds>("acc_out_of_bounds"),
      col<&R::acc, &Accuracy::workspace_dirty>("acc_workspace_dirty"),
      col<&R::acc, &Accuracy::inputs_written>("acc_inputs_written"),
      col<&R::acc, &Accuracy::written_input>("acc_written_input"),
      col<&R::acc, &Accuracy::precision_ok>("acc_precision_ok"),
      col<&R::acc, &Accuracy::max_abs_err>("acc_max_abs_err"), col<&R::acc, &Accuracy::max_rel_err>("acc_max_rel_err"),
      col<&R::acc, &Accuracy::rel_l2>("acc_rel_l2"), col<&R::acc, &Accuracy::rounds>("acc_rounds"),
      col<&R::acc, &Accuracy::pass>("acc_pass"), col<&R::accuracy>("accuracy"), col<&R::compile_ms>("compile_ms"),
      col<&R::cache_hit>("cache_hit"), col<&R::occupancy_blocks>("occupancy_blocks"), col<&R::log>("log"),
      col<&R::proposer>("proposer"), col<&R::wall_ms>("wall_ms"),
      col<&R::phases, &GpuPhases::load>("phase_load"), col<&R::phases, &GpuPhases::rounds>("phase_rounds"),
      col<&R::phases, &GpuPhases::reference>("phase_reference"), col<&R::phases, &GpuPhases::warmup>("phase_warmup"),
      col<&R::phases, &GpuPhases::batches>("phase_batches"), col<&R::phases, &GpuPhases::checks>("phase_checks"),
      col<&R::phases, &GpuPhases::after>("phase_after"), col<&R::phases, &GpuPhases::kernels>("phase_kernels"),
      col<&R::retimed>("retimed"),
  };
  return c;
}

ResultRecord to_record(const Task& t, const std::string& source_hash, const EvalResult& r, const SolScore& s) {
  ResultRecord rec;
  rec.problem = t.problem->name;
  rec.variant = t.variant->name;
  rec.dtype = dtype_name(t.dtype);
  rec.shape_key = t.shape.key();
  rec.config_key = r.key;
  rec.source_hash = source_hash;
  rec.status = status_name(r.status);
  rec.time_kind = time_kind_name(r.kind);
  for_each_field(kTimingColumns, [&](const auto& c) { rec.*c.first = r.time.*c.second; });
  for_each_field(kScoreColumns, [&](const auto& c) { rec.*c.first = s.*c.second; });
  for_each_field(kCarried, [&](const auto& c) { rec.*c.first = r.*c.second; });
  // A summary of a check that never ran would read "FAIL: 0 checked"; an empty text says so instead.
  rec.accuracy = r.acc.rounds > 0 || r.acc.checked > 0 ? r.acc.summary() : std::string();
  return rec;
}

EvalResult to_eval_result(const ResultRecord& r) {
  EvalResult e;
  e.key = r.config_key;
  const auto parts = key_values(r.config_key);
  if (!parts) throw Error("knowledge base: malformed configuration key '" + r.config_key + "'");
  for (const auto& [name, v] : *parts) e.config.values.push_back(v);
  e.status = parse_status(r.status);
  e.kind = r.time_kind == "predicted" ? TimeKind::predicted : TimeKind::measured;
  for_each_field(kTimingColumns, [&](const auto& c) { e.time.*c.second = r.*c.first; });
  for_each_field(kCarried, [&](const auto& c) { e.*c.second = r.*c.first; });
  return e;
}

}  // namespace soltune::kb
