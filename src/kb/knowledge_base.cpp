// Opening a knowledge base, and the rows a run writes besides its results: GPUs, runs, sources.
#include "kb/knowledge_base.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/error.hpp"
#include "kb/kb_impl.hpp"
#include "kb/schema.hpp"
#include "kb/table_columns.hpp"

namespace soltune {
namespace fs = std::filesystem;
namespace {

// WAL lets readers and one writer proceed together, and persists in the file once set. Switching
// needs the file to itself and SQLite does not wait for that under busy_timeout, so processes
// creating one file together retry here. (Already in WAL, the statement is a no-op.)
void use_wal(sqlite::Db& db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(sqlite::Db::kBusyTimeoutMs);
  while (!db.try_exec("PRAGMA journal_mode = WAL")) {
    if (std::chrono::steady_clock::now() > deadline) db.fail("cannot switch to WAL", "PRAGMA journal_mode = WAL");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The folder SQLite writes its journal, write-ahead log and index in, beside the file.
fs::path folder_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

// Why this process may not write the knowledge base ("" if it may): SQLite would otherwise open it
// read-only without a word and fail at the first write with "unable to open database file".
std::string why_not_writable(const fs::path& path, bool exists) {
  const auto reason = [](int err) { return err == EROFS ? "on a read-only file system" : "not writable by this user"; };
  if (exists && ::access(path.c_str(), W_OK) != 0)
    return path.string() + ": the knowledge base is read-only (" + reason(errno) + ")";
  const auto dir = folder_of(path);
  if (::access(dir.c_str(), W_OK) != 0)
    return path.string() + ": its folder " + dir.string() + " is read-only (" + reason(errno) +
           "), and SQLite writes its log beside the file";
  return "";
}

std::unique_ptr<KnowledgeBase::Impl> open_impl(const fs::path& path) {
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (ec) throw Error(path.string() + ": cannot check: " + ec.message());
  int version = 0;
  if (exists) {
    if (!fs::is_regular_file(path)) throw Error(path.string() + ": not a soltune knowledge base (not a file)");
    version = kb::check_existing(path);  // read-only: nothing is written before the file is known to be ours
  } else if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw Error(path.parent_path().string() + ": cannot create folder: " + ec.message());
  }
  if (const auto why = why_not_writable(path, exists); !why.empty())
    throw Error(why + "; this command records in it: give a writable path (--kb)");
  auto impl = std::unique_ptr<KnowledgeBase::Impl>(
      new KnowledgeBase::Impl{path, sqlite::Db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE), {}});
  auto& db = impl->db;
  if (version < kb::schema_version()) kb::migrate(db);
  use_wal(db);
  // NORMAL sync in WAL mode survives a process crash (a power cut may lose the last commits but
  // never corrupts), and is far cheaper than FULL per recorded candidate.
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  return impl;
}

}  // namespace

KnowledgeBase::KnowledgeBase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KnowledgeBase::KnowledgeBase(KnowledgeBase&&) noexcept = default;
KnowledgeBase& KnowledgeBase::operator=(KnowledgeBase&&) noexcept = default;
KnowledgeBase::~KnowledgeBase() = default;

KnowledgeBase KnowledgeBase::open(const fs::path& path) { return KnowledgeBase(open_impl(path)); }

KnowledgeBase KnowledgeBase::open_read_only(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(path.string() + ": no such knowledge base");
  if (!fs::is_regular_file(path)) throw Error(path.string() + ": not a soltune knowledge base (not a file)");
  const int version = kb::check_existing(path);
  if (version < kb::schema_version()) {
    // An older schema is read through the migration, which writes; a file that cannot take it is
    // named as such rather than read wrongly.
    if (const auto why = why_not_writable(path, true); !why.empty())
      throw Error(why + "; its schema (version " + std::to_string(version) + ") is older than this soltune's (" +
                  std::to_string(kb::schema_version()) + ") and must be migrated once where it can be written");
    return open(path);
  }
  auto impl = std::unique_ptr<Impl>(new Impl{path, sqlite::Db(path, SQLITE_OPEN_READONLY), {}});
  impl->db.exec("PRAGMA query_only = ON");  // a reading command never writes, even by mistake
  return KnowledgeBase(std::move(impl));
}

const fs::path& KnowledgeBase::path() const { return impl_->path; }

int64_t KnowledgeBase::gpu_id(const DeviceInfo& d, TimeKind kind) {
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  sqlite::Transaction tx(db);
  // Everything but the identity is "as last seen": drivers are upgraded, ceilings re-measured.
  const auto& cols = kb::gpu_columns();
  std::string updates;
  for (const auto& c : cols)
    if (c.written && std::ranges::find(kb::kGpuIdentity, c.name) == std::end(kb::kGpuIdentity))
      updates += c.name + " = excluded." + c.name + ", ";
  auto ins = db.prepare("INSERT INTO gpus (" + kb::written_names(cols) + ") VALUES (" + kb::written_names(cols, ":") +
                        ") ON CONFLICT (name, uuid, kind) DO UPDATE SET " + updates + "last_seen_at = " + kb::kNowSql);
  GpuRecord row;
  row.device = d;
  row.kind = kind;
  kb::bind_written(ins, cols, row);
  ins.run();
  int64_t id = 0;
  {
    auto sel = db.prepare("SELECT id FROM gpus WHERE name = :name AND uuid = :uuid AND kind = :kind");
    sel.bind("name", d.name).bind("uuid", d.uuid).bind("kind", time_kind_name(kind));
    if (!sel.step()) throw Error(db.path() + ": GPU '" + d.name + "' missing right after its insert");
    id = sel.i64("id");
  }
  tx.commit();
  return id;
}

int64_t KnowledgeBase::begin_run(const RunInfo& r, int64_t gpu_id) {
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  // INSERT ... SELECT inserts nothing for an unknown GPU, which is then reported by id.
  const auto& cols = kb::run_columns();
  auto st = db.prepare("INSERT INTO runs (gpu_id, " + kb::written_names(cols) + ") SELECT id, " + kb::written_names(cols, ":") +
                       " FROM gpus WHERE id = :gpu_id");
  st.bind("gpu_id", gpu_id);
  RunRecord row;
  row.info = r;
  kb::bind_written(st, cols, row);
  st.run();
  if (db.changes() == 0) throw Error(db.path() + ": no GPU with id " + std::to_string(gpu_id));
  return db.last_insert_rowid();
}

void KnowledgeBase::finish_run(int64_t run_id, const std::string& status) {
  if (status != "finished" && status != "interrupted" && status != "stopped" && status != "failed")
    throw Error("finish_run: status '" + status + "' is none of finished, interrupted, stopped, failed");
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  auto st = db.prepare(std::string("UPDATE runs SET status = :status, finished_at = ") + kb::kNowSql +
                       " WHERE id = :id");
  st.bind("status", status).bind("id", run_id).run();
  if (db.changes() == 0) throw Error(db.path() + ": no run with id " + std::to_string(run_id));
}

void KnowledgeBase::save_checkpoint(int64_t run_id, const std::string& task_id, int64_t evaluated,
                                    const std::string& state) {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare(std::string("INSERT OR REPLACE INTO checkpoints (run_id, task, evaluated, state, updated_at) "
                                          "VALUES (:run_id, :task, :evaluated, :state, ") + kb::kNowSql + ")");
  st.bind("run_id", run_id).bind("task", task_id).bind("evaluated", evaluated).bind("state", state).run();
}

std::map<std::string, std::pair<int64_t, std::string>> KnowledgeBase::checkpoints(int64_t run_id) const {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare("SELECT task, evaluated, state FROM checkpoints WHERE run_id = :run_id");
  st.bind("run_id", run_id);
  std::map<std::string, std::pair<int64_t, std::string>> out;
  while (st.step()) out[st.text("task")] = {st.i64("evaluated"), st.text("state")};
  return out;
}

void KnowledgeBase::add_run_note(int64_t run_id, const std::string& line) {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare(
      "UPDATE runs SET notes = CASE WHEN notes = '' THEN :line ELSE notes || char(10) || :line END "
      "WHERE id = :id AND instr(char(10) || notes || char(10), char(10) || :line || char(10)) = 0");
  st.bind("id", run_id).bind("line", line).run();
}

void KnowledgeBase::reopen_run(int64_t run_id) {
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  auto st = db.prepare("UPDATE runs SET status = 'running', finished_at = NULL WHERE id = :id AND status != 'finished'");
  st.bind("id", run_id).run();
  if (db.changes() == 0) throw Error(db.path() + ": no unfinished run with id " + std::to_string(run_id));
}

std::optional<RunRecord> KnowledgeBase::last_unfinished_run(const std::string& config_path) const {
  std::optional<RunRecord> last;
  for (auto& r : runs())
    if (r.info.config_path == config_path &&
        (r.status == "running" || r.status == "interrupted" || r.status == "stopped"))
      last = std::move(r);
  return last;
}

void KnowledgeBase::store_source(const std::string& hash, const std::string& text) {
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  sqlite::Transaction tx(db);
  {
    auto sel = db.prepare("SELECT text FROM sources WHERE hash = :hash");
    sel.bind("hash", hash);
    if (sel.step()) {
      if (sel.text("text") != text)
        throw Error(db.path() + ": source hash " + hash + " is already stored with a different text");
      return;  // already there; the rollback changes nothing
    }
  }
  db.prepare("INSERT INTO sources (hash, text) VALUES (:hash, :text)").bind("hash", hash).bind("text", text).run();
  tx.commit();
}

std::optional<std::string> KnowledgeBase::source(const std::string& hash) const {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare("SELECT text FROM sources WHERE hash = :hash");
  st.bind("hash", hash);
  if (!st.step()) return std::nullopt;
  return st.text("text");
}

}  // namespace soltune
