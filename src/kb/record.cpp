// Writing a task's baseline and an evaluated candidate: each commits before returning.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kb/columns.hpp"
#include "kb/kb_impl.hpp"
#include "kb/result_columns.hpp"
#include "kb/table_columns.hpp"

namespace soltune {
namespace {

// "INSERT INTO <table> (run_id, [gpu_id,] cols...) SELECT id, [gpu_id,] :cols... FROM runs WHERE id
// = :run_id" of the columns the list writes: parameters are named as their columns, and an unknown
// run inserts nothing.
template <typename Columns>
std::string insert_from_run(const std::string& table, bool with_gpu, const Columns& cols) {
  const std::string gpu = with_gpu ? "gpu_id, " : "";
  return "INSERT INTO " + table + " (run_id, " + gpu + kb::written_names(cols) + ") SELECT id, " + gpu +
         kb::written_names(cols, ":") + " FROM runs WHERE id = :run_id";
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
  static const std::string kSql = insert_from_run("baselines", false, kb::baseline_columns());
  BaselineRecord row;
  row.problem = t.problem->name;
  row.variant = t.variant->name;
  row.dtype = dtype_name(t.dtype);
  row.shape_key = t.shape.key();
  row.baseline = b;
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  sqlite::Transaction tx(db);
  auto st = db.prepare(kSql);
  st.bind("run_id", run_id);
  kb::bind_written(st, kb::baseline_columns(), row);
  insert_committed(db, st, run_id, tx);
}

int64_t KnowledgeBase::record(int64_t run_id, const Task& t, const std::string& source_hash, const EvalResult& r,
                              const SolScore& s) {
  static const std::string kSql = insert_from_run("results", true, kb::result_columns());
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
