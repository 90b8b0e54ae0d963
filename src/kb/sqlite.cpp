#include "kb/sqlite.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <limits>

#include "core/error.hpp"

namespace soltune::sqlite {

namespace {

// "file:" URI of a path, for the immutable parameter: the characters a URI gives meaning to escaped.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char ch : path) {
    if (ch == '%' || ch == '?' || ch == '#' || ch < 0x20 || ch >= 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      uri += buf;
    } else {
      uri += static_cast<char>(ch);
    }
  }
  return uri + "?immutable=1";
}

bool has_unmerged_log(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path + "-wal", ec);
  return !ec && size > 0;
}

}  // namespace

Db::Db(const std::filesystem::path& path, int flags) : path_(path.string()) {
  if ((flags & SQLITE_OPEN_READONLY) != 0 && (flags & SQLITE_OPEN_CREATE) == 0 && std::filesystem::exists(path)) {
    // A read leaves nothing beside the file. A read-only connection cannot remove the -wal and -shm
    // files it makes in WAL mode, and beside a mode-444 file it makes them mode 444, which a later
    // writer cannot open. So a file this user may write is read through a read-write connection
    // kept from writing (query_only): the last connection to close merges and removes both, as for
    // any writer. A file it may not write is read as immutable, which makes neither, unless a
    // write-ahead log already holds commits the file lacks (then it is read as SQLite reads it).
    const auto folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    if (::access(path_.c_str(), W_OK) == 0 && ::access(folder.c_str(), W_OK) == 0) {
      open(path_, (flags & ~SQLITE_OPEN_READONLY) | SQLITE_OPEN_READWRITE);
      exec("PRAGMA query_only = 1");
      return;
    }
    if (!has_unmerged_log(path_)) {
      open(file_uri(path_), flags | SQLITE_OPEN_URI);
      return;
    }
  }
  open(path_, flags);
  if ((flags & SQLITE_OPEN_READONLY) == 0) return;
  // A file in WAL mode is read through its -shm index, which SQLite creates beside it. On a read-only
  // medium (or in a folder this user may not write) it cannot, and every statement fails with
  // SQLITE_CANTOPEN; the file is then read as immutable, which needs no index. That is exact only
  // when no write-ahead log holds commits the file lacks: otherwise the error says so.
  sqlite3_stmt* st = nullptr;
  const int rc = sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master", -1, &st, nullptr);
  const int step = rc == SQLITE_OK ? sqlite3_step(st) : rc;
  sqlite3_finalize(st);
  if ((step & 0xff) != SQLITE_CANTOPEN) return;
  sqlite3_close_v2(db_);  // no destructor runs for a throwing constructor
  db_ = nullptr;
  if (has_unmerged_log(path_))
    throw Error(path_ + ": cannot read: its folder is read-only and its write-ahead log (" + path_ +
                "-wal) holds commits the file lacks; copy the file and its -wal to a writable folder to read them");
  open(file_uri(path_), flags | SQLITE_OPEN_URI);
}

void Db::open(const std::string& name, int flags) {
  // SQLITE_OPEN_NOMUTEX is not used: the default (serialized) mode is the safe one.
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // A failed open may still hand back a handle carrying the message; it must be closed.
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(path_ + ": cannot open: " + msg);
  }
  if (sqlite3_extended_result_codes(db_, 1) != SQLITE_OK || sqlite3_busy_timeout(db_, kBusyTimeoutMs) != SQLITE_OK) {
    const std::string msg = sqlite3_errmsg(db_);
    sqlite3_close(db_);  // no destructor runs for a throwing constructor
    throw Error(path_ + ": cannot configure connection: " + msg);
  }
}

Db::~Db() {
  // close_v2 never refuses: were a statement still alive, the handle would close after it.
  sqlite3_close_v2(db_);
}

void Db::fail(const std::string& what, std::string_view sql) const {
  std::string msg = path_ + ": " + what + ": " + sqlite3_errmsg(db_);
  if (!sql.empty()) msg += " [SQL: " + std::string(sql) + "]";
  throw Error(msg);
}

void Db::exec(const std::string& sql) {
  if (!try_exec(sql)) fail("database is busy", sql);
}

bool Db::try_exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err ? err : sqlite3_errmsg(db_);
  sqlite3_free(err);
  if (rc == SQLITE_OK) return true;
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) return false;
  throw Error(path_ + ": " + msg + " [SQL: " + sql + "]");
}

Stmt Db::prepare(std::string_view sql) const {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &st, nullptr) != SQLITE_OK)
    fail("cannot prepare statement", sql);
  return Stmt(*this, st);
}

int64_t Db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Db::changes() const { return sqlite3_changes(db_); }

Stmt::Stmt(const Db& db, sqlite3_stmt* st)
    : db_(&db), st_(st), bound_(static_cast<size_t>(sqlite3_bind_parameter_count(st)), false) {}

Stmt::~Stmt() { sqlite3_finalize(st_); }

void Stmt::fail(const std::string& what) const { db_->fail(what, sqlite3_sql(st_)); }

int Stmt::param(std::string_view name) {
  const std::string p = ":" + std::string(name);
  const int i = sqlite3_bind_parameter_index(st_, p.c_str());
  if (i == 0) throw Error(db_->path() + ": no parameter " + p + " [SQL: " + sqlite3_sql(st_) + "]");
  bound_[static_cast<size_t>(i - 1)] = true;
  return i;
}

Stmt& Stmt::bind_int(std::string_view name, int64_t v) {
  if (sqlite3_bind_int64(st_, param(name), v) != SQLITE_OK) fail("cannot bind :" + std::string(name));
  return *this;
}

Stmt& Stmt::bind(std::string_view name, double v) {
  if (sqlite3_bind_double(st_, param(name), v) != SQLITE_OK) fail("cannot bind :" + std::string(name));
  return *this;
}

Stmt& Stmt::bind(std::string_view name, std::string_view v) {
  if (sqlite3_bind_text64(st_, param(name), v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    fail("cannot bind :" + std::string(name));
  return *this;
}

Stmt& Stmt::bind_null(std::string_view name) {
  if (sqlite3_bind_null(st_, param(name)) != SQLITE_OK) fail("cannot bind :" + std::string(name));
  return *this;
}

bool Stmt::step() {
  for (size_t i = 0; i < bound_.size(); ++i)
    if (!bound_[i]) {
      const char* name = sqlite3_bind_parameter_name(st_, static_cast<int>(i + 1));
      throw Error(db_->path() + ": parameter " + (name ? name : "?" + std::to_string(i + 1)) +
                  " left unbound [SQL: " + sqlite3_sql(st_) + "]");
    }
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail("statement failed");
}

void Stmt::run() {
  if (step()) fail("statement returned a row where none was expected");
}

int Stmt::column(std::string_view name) const {
  if (cols_.empty())
    for (int i = 0, n = sqlite3_column_count(st_); i < n; ++i) cols_.emplace(sqlite3_column_name(st_, i), i);
  const auto it = cols_.find(std::string(name));
  if (it == cols_.end())
    throw Error(db_->path() + ": no column '" + std::string(name) + "' [SQL: " + sqlite3_sql(st_) + "]");
  return it->second;
}

bool Stmt::is_null(std::string_view col) const { return sqlite3_column_type(st_, column(col)) == SQLITE_NULL; }

int64_t Stmt::i64(std::string_view col) const { return sqlite3_column_int64(st_, column(col)); }

int Stmt::i32(std::string_view col) const {
  const int64_t v = i64(col);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw Error(db_->path() + ": column '" + std::string(col) + "' holds " + std::to_string(v) +
                ", out of range for int");
  return static_cast<int>(v);
}

double Stmt::real(std::string_view col) const {
  const int i = column(col);
  if (sqlite3_column_type(st_, i) == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(st_, i);
}

std::string Stmt::text(std::string_view col) const {
  const int i = column(col);
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, i))) : std::string();
}

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  // Destructors must not throw; a failed rollback leaves SQLite to roll back on close.
  try {
    db_.exec("ROLLBACK");
  } catch (...) {
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

ReadSnapshot::ReadSnapshot(Db& db) : db_(db) { db_.exec("BEGIN"); }

ReadSnapshot::~ReadSnapshot() {
  try {
    db_.exec("COMMIT");
  } catch (...) {
  }
}

}  // namespace soltune::sqlite
