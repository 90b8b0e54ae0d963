// Writing a task's baseline and an evaluated candidate: each commits before returning.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kb/kb_impl.hpp"

namespace soltune {
namespace {

// "INSERT INTO <table> (run_id, [gpu_id,] cols...) SELECT id, [gpu_id,] :cols... FROM runs WHERE id
// = :run_id": parameters are named as their columns, and an unknown run inserts nothing.
std::string insert_from_run(const std::string& table, bool with_gpu, const std::vector<std::string>& cols) {
  std::string names = "run_id", values = "id";
  if (with_gpu) names += ", gpu_id", values += ", gpu_id";
  for (const auto& c : cols) names += ", " + c, values += ", :" + c;
  return "INSERT INTO " + table + " (" + names + ") SELECT " + values + " FROM runs WHERE id = :run_id";
}

int64_t insert_committed(sqlite::Db& db, sqlite::Stmt& st, int64_t run_id, sqlite::Transaction& tx) {
  st.run();
  if (db.changes() == 0) throw Error(db.path() + ": no run with id " + std::to_string(run_id));
  const int64_t id = db.last_insert_rowid();
  tx.commit();
  return id;
}

}  // namespace

void KnowledgeBase::record_baseline(int64_t run_id, const Task& t, const TaskBaseline& b) {
  static const std::string kSql = insert_from_run(
      "baselines", false,
      {"problem", "variant", "dtype", "shape_key", "time_kind", "t_ref_us", "t_sol_us", "flops", "bytes",
       "ref_median_us", "ref_min_us", "ref_q1_us", "ref_q3_us", "ref_max_us", "ref_reps", "note", "ref_source"});
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  sqlite::Transaction tx(db);
  auto st = db.prepare(kSql);
  st.bind("run_id", run_id);
  kb::bind_task(st, t);
  st.bind("time_kind", time_kind_name(b.kind));
  st.bind("t_ref_us", b.t_ref_us).bind("t_sol_us", b.t_sol_us).bind("flops", b.flops).bind("bytes", b.bytes);
  const Timing& r = b.ref_timing;
  st.bind("ref_median_us", r.median_us).bind("ref_min_us", r.min_us).bind("ref_q1_us", r.q1_us);
  st.bind("ref_q3_us", r.q3_us).bind("ref_max_us", r.max_us).bind("ref_reps", r.reps);
  st.bind("note", b.note).bind("ref_source", b.source);
  insert_committed(db, st, run_id, tx);
}

int64_t KnowledgeBase::record(int64_t run_id, const Task& t, const std::string& source_hash, const EvalResult& r,
                              const SolScore& s) {
  static const std::string kSql = insert_from_run(
      "results", true,
      {"problem", "variant", "dtype", "shape_key", "config_key", "source_hash", "status", "time_kind", "time_us",
       "min_us", "q1_us", "q3_us", "max_us", "reps", "t_ref_us", "t_sol_us", "sol_score", "sol_execbench",
       "sol_valid", "below_sol", "registers", "spill_stores", "spill_loads", "stack", "smem_static", "cmem",
       "res_parsed", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "smem", "acc_checked",
       "acc_mismatches", "acc_nonfinite", "acc_unwritten", "acc_out_of_bounds", "acc_precision_ok", "acc_max_abs_err", "acc_max_rel_err", "acc_rel_l2",
       "acc_rounds", "acc_pass", "accuracy", "compile_ms", "cache_hit", "occupancy_blocks", "log", "proposer"});
  // evaluated_keys() and best() match on the key: a result without one could never be found again.
  if (r.key.empty()) throw Error("record: result of " + t.id() + " has no configuration key");
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  sqlite::Transaction tx(db);
  auto st = db.prepare(kSql);
  st.bind("run_id", run_id);
  kb::bind_task(st, t);
  st.bind("config_key", r.key).bind("source_hash", source_hash);
  st.bind("status", status_name(r.status)).bind("time_kind", time_kind_name(r.kind));
  st.bind("time_us", r.time.median_us).bind("min_us", r.time.min_us).bind("q1_us", r.time.q1_us);
  st.bind("q3_us", r.time.q3_us).bind("max_us", r.time.max_us).bind("reps", r.time.reps);
  st.bind("t_ref_us", s.t_ref_us).bind("t_sol_us", s.t_sol_us);
  st.bind("sol_score", s.score).bind("sol_execbench", s.execbench);
  st.bind("sol_valid", s.valid).bind("below_sol", s.below_sol);
  st.bind("registers", r.res.registers).bind("spill_stores", r.res.spill_stores);
  st.bind("spill_loads", r.res.spill_loads).bind("stack", r.res.stack);
  st.bind("smem_static", r.res.smem_static).bind("cmem", r.res.cmem).bind("res_parsed", r.res.parsed);
  st.bind("grid_x", r.geo.grid[0]).bind("grid_y", r.geo.grid[1]).bind("grid_z", r.geo.grid[2]);
  st.bind("block_x", r.geo.block[0]).bind("block_y", r.geo.block[1]).bind("block_z", r.geo.block[2]);
  st.bind("smem", r.geo.smem);
  const Accuracy& a = r.acc;
  st.bind("acc_checked", a.checked).bind("acc_mismatches", a.mismatches);
  st.bind("acc_nonfinite", a.nonfinite).bind("acc_unwritten", a.unwritten);
  st.bind("acc_out_of_bounds", a.out_of_bounds).bind("acc_precision_ok", a.precision_ok);
  st.bind("acc_max_abs_err", a.max_abs_err).bind("acc_max_rel_err", a.max_rel_err).bind("acc_rel_l2", a.rel_l2);
  st.bind("acc_rounds", a.rounds).bind("acc_pass", a.pass);
  // A summary of a check that never ran would read "FAIL: 0 checked"; an empty text says so instead.
  const bool checked = a.rounds > 0 || a.checked > 0;
  st.bind("accuracy", checked ? a.summary() : std::string());
  st.bind("compile_ms", r.compile_ms).bind("cache_hit", r.cache_hit).bind("occupancy_blocks", r.occupancy_blocks);
  st.bind("log", r.log).bind("proposer", r.proposer);
  return insert_committed(db, st, run_id, tx);
}

void KnowledgeBase::demote(int64_t run_id, const Task& t, const std::string& config_key, Status status,
                           const std::string& why) {
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  sqlite::Transaction tx(db);
  auto st = db.prepare(
      "UPDATE results SET status = :status, acc_pass = 0, sol_valid = 0, log = :why || '; ' || log WHERE run_id = "
      ":run_id AND problem = :problem AND variant = :variant AND dtype = :dtype AND shape_key = :shape_key AND "
      "config_key = :config_key AND status = 'ok'");
  st.bind("run_id", run_id).bind("config_key", config_key).bind("status", status_name(status)).bind("why", why);
  kb::bind_task(st, t);
  st.run();
  tx.commit();
}

}  // namespace soltune
