#pragma once
// Thin RAII wrappers over the SQLite C API (internal to src/kb). Every failing call throws Error
// naming the database file, SQLite's message and the SQL, so a broken knowledge base says where
// and why. Parameters and columns are addressed by name: with ~50 columns per row, positions
// would be an easy place for silent mix-ups.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace soltune::sqlite {

class Stmt;

class Db {
 public:
  // Several soltune processes may use one file: a connection waits this long for another's lock
  // (a commit, a checkpoint, a migration) before giving up.
  static constexpr int kBusyTimeoutMs = 10000;

  // flags: SQLITE_OPEN_* values (READONLY, or READWRITE | CREATE). READONLY also reads a file on a
  // read-only medium (as immutable, where SQLite cannot make its WAL index beside it).
  Db(const std::filesystem::path& path, int flags);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  const std::string& path() const { return path_; }
  void exec(const std::string& sql);  // statements without results, separated by ';'
  // Like exec, but false instead of an Error when the file is busy or locked, for the few
  // statements SQLite does not retry under busy_timeout.
  bool try_exec(const std::string& sql);
  Stmt prepare(std::string_view sql) const;
  int64_t last_insert_rowid() const;
  int changes() const;
  // Throws Error "<path>: <what>: <sqlite message> [SQL: <sql>]".
  [[noreturn]] void fail(const std::string& what, std::string_view sql = {}) const;

 private:
  void open(const std::string& name, int flags);  // name: the path, or a file: URI

  sqlite3* db_ = nullptr;
  std::string path_;
};

// A prepared statement. Lives shorter than its Db.
class Stmt {
 public:
  Stmt(const Db& db, sqlite3_stmt* st);
  ~Stmt();
  Stmt(Stmt&& o) noexcept
      : db_(o.db_), st_(o.st_), bound_(std::move(o.bound_)), cols_(std::move(o.cols_)) {
    o.st_ = nullptr;
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& operator=(Stmt&&) = delete;

  // `name` without its ':' prefix; an unknown name throws (a typo must not bind nothing).
  template <typename I>
    requires std::is_integral_v<I>
  Stmt& bind(std::string_view name, I v) {
    return bind_int(name, static_cast<int64_t>(v));
  }
  Stmt& bind(std::string_view name, double v);  // NaN is stored as NULL (SQLite has no NaN)
  Stmt& bind(std::string_view name, std::string_view v);
  Stmt& bind(std::string_view name, const std::string& v) { return bind(name, std::string_view(v)); }
  Stmt& bind(std::string_view name, const char* v) { return bind(name, std::string_view(v)); }
  Stmt& bind_null(std::string_view name);

  bool step();  // true: a row is ready; false: done. Throws if a parameter was left unbound.
  void run();   // steps once and expects no row

  bool is_null(std::string_view col) const;
  int64_t i64(std::string_view col) const;
  int i32(std::string_view col) const;
  double real(std::string_view col) const;  // NULL reads as NaN, the value it stood for
  std::string text(std::string_view col) const;

 private:
  Stmt& bind_int(std::string_view name, int64_t v);
  int param(std::string_view name);
  int column(std::string_view name) const;
  [[noreturn]] void fail(const std::string& what) const;

  const Db* db_;
  sqlite3_stmt* st_;
  std::vector<bool> bound_;  // a forgotten bind must not silently write NULL
  mutable std::unordered_map<std::string, int> cols_;  // built on first lookup
};

// BEGIN IMMEDIATE takes the write lock up front, so a busy file is waited for under busy_timeout;
// a deferred transaction upgrading to a write would fail at once with SQLITE_BUSY instead.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();  // rolls back unless committed
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

// A deferred read transaction: every query inside it reads one snapshot. Ends on destruction.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(Db& db);
  ~ReadSnapshot();
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  Db& db_;
};

}  // namespace soltune::sqlite
