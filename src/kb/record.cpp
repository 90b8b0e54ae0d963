// Writing a task's baseline and an evaluated candidate: each commits before returning.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kb/kb_impl.hpp"
#include "kb/result_columns.hpp"

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
  static const std::string kSql = [] {
    std::vector<std::string> cols;
    for (const auto& c : kb::result_columns())
      if (c.written) cols.push_back(c.name);
    return insert_from_run("results", true, cols);
  }();
  // evaluated_keys() and best() match on the key: a result without one could never be found again.
  if (r.key.empty()) throw Error("record: result of " + t.id() + " has no configuration key");
  const auto row = kb::to_record(t, source_hash, r, s);
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  sqlite::Transaction tx(db);
  auto st = db.prepare(kSql);
  st.bind("run_id", run_id);
  for (const auto& c : kb::result_columns())
    if (c.written) c.bind(st, c.name, row);
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
