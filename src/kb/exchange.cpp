// JSON export and import of a knowledge base, and the summaries `soltune kb list` shows.
#include "kb/exchange.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "core/error.hpp"
#include "kb/schema.hpp"
#include "kb/sqlite.hpp"

namespace soltune::kb {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;  // keeps the columns in table order

// --- tables and columns ---

enum class ColType { integer, real, text };

struct Column {
  std::string name;
  ColType type = ColType::text;
  bool not_null = false, has_default = false;
};

// What an import needs to know beyond the columns: the id that references point at, the natural
// key a row is matched by, and the columns that hold another table's id.
struct TableDef {
  std::string name;
  bool has_id;
  std::vector<std::string> key;
  std::vector<std::pair<std::string, std::string>> refs;  // column -> referenced table
};

const std::vector<TableDef>& tables() {
  static const std::vector<TableDef> t = {
      {"gpus", true, {"name", "uuid", "kind"}, {}},
      {"runs", true, {"started_at", "config_path", "gpu_id", "problem", "seed"}, {{"gpu_id", "gpus"}}},
      {"sources", false, {"hash"}, {}},
      {"baselines", true, {"run_id", "problem", "variant", "dtype", "shape_key", "time_kind", "created_at"},
       {{"run_id", "runs"}}},
      {"results", true, {"run_id", "problem", "variant", "dtype", "shape_key", "config_key", "created_at"},
       {{"run_id", "runs"}, {"gpu_id", "gpus"}}},
  };
  return t;
}

const std::string* ref_table(const TableDef& t, const std::string& col) {
  for (const auto& [c, target] : t.refs)
    if (c == col) return &target;
  return nullptr;
}

std::vector<Column> columns(const sqlite::Db& db, const std::string& table) {
  auto st = db.prepare(
      "SELECT name, upper(type) AS type, \"notnull\" AS nn, dflt_value IS NOT NULL AS dflt "
      "FROM pragma_table_info(:t) ORDER BY cid");
  st.bind("t", table);
  std::vector<Column> out;
  while (st.step()) {
    Column c;
    c.name = st.text("name");
    const std::string type = st.text("type");
    if (type == "INTEGER") c.type = ColType::integer;
    else if (type == "REAL") c.type = ColType::real;
    else if (type == "TEXT") c.type = ColType::text;
    else throw Error(db.path() + ": column " + table + "." + c.name + " has type '" + type + "', unknown to the exchange");
    c.not_null = st.i64("nn") != 0;
    c.has_default = st.i64("dflt") != 0;
    out.push_back(std::move(c));
  }
  if (out.empty()) throw Error(db.path() + ": no table '" + table + "'");
  return out;
}

// The tables of the current schema, built in memory from the migrations: what a document is
// checked against before any file is opened.
struct Schema {
  int version = 0;
  std::map<std::string, std::vector<Column>> cols;
};

const Schema& current_schema() {
  static const Schema s = [] {
    Schema out;
    sqlite::Db mem(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    for (const auto& step : migrations()) mem.exec(step);
    out.version = schema_version();
    for (const auto& t : tables()) out.cols[t.name] = columns(mem, t.name);
    return out;
  }();
  return s;
}

const char* type_word(ColType t) {
  switch (t) {
    case ColType::integer: return "an integer";
    case ColType::real: return "a number (or \"Infinity\", \"-Infinity\")";
    case ColType::text: return "a string";
  }
  return "?";
}

// A cell as JSON: NULL is null; an infinite REAL, which JSON cannot hold, is a string.
json cell(const sqlite::Stmt& st, const Column& c) {
  if (st.is_null(c.name)) return nullptr;
  switch (c.type) {
    case ColType::integer: return st.i64(c.name);
    case ColType::real: {
      const double v = st.real(c.name);
      if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
      return v;
    }
    case ColType::text: return st.text(c.name);
  }
  return nullptr;
}

// A deferred read transaction: every table of an export from one snapshot.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(sqlite::Db& db) : db_(db) { db_.exec("BEGIN"); }
  ~ReadSnapshot() {
    try {
      db_.exec("COMMIT");
    } catch (...) {
    }
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  sqlite::Db& db_;
};

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// --- reading a document ---

struct Document {
  std::string name;
  int schema_version = 0;                        // as the file says; 0 when absent
  std::map<std::string, std::vector<json>> rows;  // per table: objects of known, normalized columns
};

const std::string kExpected =
    "expected a soltune knowledge base export (a JSON object with \"format\": \"soltune-kb\", as written by "
    "`soltune kb export-json`)";

const char* json_kind(const json& j) { return j.type_name(); }

// The value of `v` for column `c`, normalized (integers as int64), or Error naming `where`.
json normalize(const json& v, const Column& c, const std::string& where) {
  const auto bad = [&](const std::string& why) {
    return Error(where + ": column \"" + c.name + "\" " + why);
  };
  if (v.is_null()) {
    if (c.not_null) throw bad("is null; expected " + std::string(type_word(c.type)));
    return nullptr;
  }
  switch (c.type) {
    case ColType::integer:
      if (v.is_number_unsigned()) {
        if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          throw bad("is " + dump(v) + ", out of range for a 64-bit signed integer");
        return static_cast<int64_t>(v.get<uint64_t>());
      }
      if (v.is_number_integer()) return v.get<int64_t>();
      break;
    case ColType::real:
      if (v.is_number()) return v.get<double>();
      if (v.is_string() && (v == "Infinity" || v == "-Infinity")) return v;
      break;
    case ColType::text:
      if (v.is_string()) return v;
      break;
  }
  throw bad("is " + std::string(json_kind(v)) + " " + dump(v) + "; expected " + type_word(c.type));
}

Document parse_document(const std::string& text, const std::string& name) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(name + ": malformed JSON (" + e.what() + "); " + kExpected);
  }
  if (!doc.is_object())
    throw Error(name + ": not a soltune knowledge base export (the document is a JSON " + json_kind(doc) + "); " +
                kExpected);
  const auto format = doc.find("format");
  if (format == doc.end()) throw Error(name + ": not a soltune knowledge base export (no \"format\"); " + kExpected);
  if (*format != kExportFormat)
    throw Error(name + ": not a soltune knowledge base export (\"format\" is " + dump(*format) + "); " + kExpected);
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer())
    throw Error(name + ": \"version\" is missing or not an integer; expected \"version\": " +
                std::to_string(kExportVersion));
  if (*version != kExportVersion) {
    const bool newer = version->is_number_unsigned() && version->get<uint64_t>() > kExportVersion;
    throw Error(name + ": soltune-kb format version " + dump(*version) +
                (newer ? " is newer than this soltune reads (" + std::to_string(kExportVersion) +
                             "); written by a newer soltune?"
                       : " is not one this soltune reads (" + std::to_string(kExportVersion) + ")"));
  }

  Document out;
  out.name = name;
  if (const auto sv = doc.find("schema_version"); sv != doc.end() && sv->is_number_integer())
    out.schema_version = sv->get<int>();
  const Schema& schema = current_schema();
  std::map<std::string, std::set<int64_t>> ids;  // per table, the ids the document holds
  for (const auto& t : tables()) {
    const auto arr = doc.find(t.name);
    if (arr == doc.end() || !arr->is_array())
      throw Error(name + ": expected an array \"" + t.name + "\" (" +
                  (arr == doc.end() ? std::string("missing") : std::string("found a ") + json_kind(*arr)) + ")");
    const auto& cols = schema.cols.at(t.name);
    std::set<std::string> key_cols(t.key.begin(), t.key.end());
    std::set<std::string> hashes;
    auto& rows = out.rows[t.name];
    rows.reserve(arr->size());
    for (size_t i = 0; i < arr->size(); ++i) {
      const json& in = (*arr)[i];
      const std::string where = name + ": " + t.name + "[" + std::to_string(i) + "]";
      if (!in.is_object()) throw Error(where + ": expected an object, found a " + json_kind(in));
      for (const auto& [k, v] : in.items()) {
        bool known = false;
        for (const auto& c : cols) known = known || c.name == k;
        if (!known)
          throw Error(where + ": unknown column \"" + k + "\" (the file's schema version is " +
                      std::to_string(out.schema_version) + ", this soltune's " + std::to_string(schema.version) +
                      ")");
      }
      json row = json::object();
      for (const auto& c : cols) {
        const auto it = in.find(c.name);
        const bool is_id = t.has_id && c.name == "id";
        if (it == in.end()) {
          // A column with a default may be absent (an export of an older schema); ids and the
          // columns a row is matched by may not.
          if (is_id || key_cols.count(c.name) || (c.not_null && !c.has_default))
            throw Error(where + ": missing column \"" + c.name + "\"");
          continue;
        }
        Column col = c;
        col.not_null = col.not_null || is_id || key_cols.count(c.name) > 0 || ref_table(t, c.name) != nullptr;
        row[c.name] = normalize(*it, col, where);
      }
      if (t.has_id && !ids[t.name].insert(row["id"].get<int64_t>()).second)
        throw Error(where + ": id " + dump(row["id"]) + " occurs twice in " + t.name);
      if (!t.has_id && !hashes.insert(dump(row[t.key[0]])).second)
        throw Error(where + ": " + t.key[0] + " " + dump(row[t.key[0]]) + " occurs twice in " + t.name);
      for (const auto& [c, target] : t.refs)
        if (!ids[target].count(row[c].get<int64_t>()))
          throw Error(where + ": column \"" + c + "\" is " + dump(row[c]) + ", but " + target +
                      " holds no row with that id");
      rows.push_back(std::move(row));
    }
  }
  return out;
}

// --- merging ---

using IdMap = std::map<std::string, std::unordered_map<int64_t, int64_t>>;  // table -> file id -> target id

// An unambiguous text for a key value (length-prefixed strings, so no separator can collide).
std::string canonical(const json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    return "s" + std::to_string(s.size()) + ":" + s;
  }
  if (v.is_number_integer()) return "i" + std::to_string(v.get<int64_t>());
  if (v.is_null()) return "n";
  return "j" + dump(v);
}

// The natural key of a document row, its references already mapped to the target's ids.
std::string doc_key(const TableDef& t, const json& row, const IdMap& ids) {
  std::string k;
  for (const auto& c : t.key) {
    if (const auto* target = ref_table(t, c)) k += canonical(ids.at(*target).at(row.at(c).get<int64_t>()));
    else k += canonical(row.at(c));
    k += '|';
  }
  return k;
}

// The target's rows by natural key, as they were before the import: ids in id order.
std::map<std::string, std::deque<int64_t>> target_keys(const sqlite::Db& db, const TableDef& t,
                                                       const std::vector<Column>& cols) {
  std::string sel;
  for (const auto& c : t.key) sel += ", " + c;
  auto st = db.prepare("SELECT id" + sel + " FROM " + t.name + " ORDER BY id");
  std::map<std::string, std::deque<int64_t>> out;
  while (st.step()) {
    std::string k;
    for (const auto& name : t.key) {
      for (const auto& c : cols)
        if (c.name == name) k += canonical(cell(st, c));
      k += '|';
    }
    out[k].push_back(st.i64("id"));
  }
  return out;
}

void bind_value(sqlite::Stmt& st, const Column& c, const json& v) {
  if (v.is_null()) {
    st.bind_null(c.name);
    return;
  }
  switch (c.type) {
    case ColType::integer: st.bind(c.name, v.get<int64_t>()); break;
    case ColType::real:
      if (v.is_string()) st.bind(c.name, v == "Infinity" ? std::numeric_limits<double>::infinity()
                                                        : -std::numeric_limits<double>::infinity());
      else st.bind(c.name, v.get<double>());
      break;
    case ColType::text: st.bind(c.name, v.get_ref<const std::string&>()); break;
  }
}

// Inserts a document row (all its columns but the id, references mapped); returns the new rowid.
int64_t insert_row(sqlite::Db& db, const TableDef& t, const std::vector<Column>& cols, const json& row,
                   const IdMap& ids) {
  std::string names, params;
  std::vector<const Column*> used;
  for (const auto& c : cols) {
    if ((t.has_id && c.name == "id") || !row.contains(c.name)) continue;
    names += (names.empty() ? "" : ", ") + c.name;
    params += (params.empty() ? ":" : ", :") + c.name;
    used.push_back(&c);
  }
  auto st = db.prepare("INSERT INTO " + t.name + " (" + names + ") VALUES (" + params + ")");
  for (const auto* c : used) {
    if (const auto* target = ref_table(t, c->name)) st.bind(c->name, ids.at(*target).at(row.at(c->name).get<int64_t>()));
    else bind_value(st, *c, row.at(c->name));
  }
  st.run();
  return db.last_insert_rowid();
}

// GPUs by identity. A known GPU keeps its row; its facts are replaced by the file's when the file
// saw it more recently, and the earlier first sighting is kept.
void merge_gpus(sqlite::Db& db, const TableDef& t, const std::vector<Column>& cols, const Document& doc, IdMap& ids,
                ImportStats::Table& stats) {
  for (const auto& row : doc.rows.at(t.name)) {
    ++stats.in_file;
    auto sel = db.prepare(
        "SELECT id, first_seen_at, last_seen_at FROM gpus WHERE name = :name AND uuid = :uuid AND kind = :kind");
    sel.bind("name", row.at("name").get_ref<const std::string&>());
    sel.bind("uuid", row.at("uuid").get_ref<const std::string&>());
    sel.bind("kind", row.at("kind").get_ref<const std::string&>());
    if (!sel.step()) {
      ids[t.name][row.at("id").get<int64_t>()] = insert_row(db, t, cols, row, ids);
      ++stats.added;
      continue;
    }
    const int64_t id = sel.i64("id");
    const std::string first = sel.text("first_seen_at"), last = sel.text("last_seen_at");
    ids[t.name][row.at("id").get<int64_t>()] = id;
    ++stats.present;
    bool updated = false;
    if (row.contains("first_seen_at") && row["first_seen_at"].get_ref<const std::string&>() < first) {
      db.prepare("UPDATE gpus SET first_seen_at = :v WHERE id = :id")
          .bind("v", row["first_seen_at"].get_ref<const std::string&>())
          .bind("id", id)
          .run();
      updated = true;
    }
    if (row.contains("last_seen_at") && row["last_seen_at"].get_ref<const std::string&>() > last) {
      std::string sets;
      std::vector<const Column*> used;
      for (const auto& c : cols) {
        if (c.name == "id" || c.name == "name" || c.name == "uuid" || c.name == "kind" || c.name == "first_seen_at" ||
            !row.contains(c.name))
          continue;
        sets += (sets.empty() ? "" : ", ") + c.name + " = :" + c.name;
        used.push_back(&c);
      }
      auto up = db.prepare("UPDATE gpus SET " + sets + " WHERE id = :id");
      for (const auto* c : used) bind_value(up, *c, row.at(c->name));
      up.bind("id", id).run();
      updated = true;
    }
    stats.updated += updated;
  }
}

bool terminal(const std::string& status) { return status == "finished" || status == "failed"; }

// Runs by natural key; a run the target still has as running or interrupted takes the file's
// status when the file has it finished or failed.
void merge_runs(sqlite::Db& db, const TableDef& t, const std::vector<Column>& cols, const Document& doc, IdMap& ids,
                ImportStats::Table& stats) {
  auto existing = target_keys(db, t, cols);
  for (const auto& row : doc.rows.at(t.name)) {
    ++stats.in_file;
    auto& same = existing[doc_key(t, row, ids)];
    if (same.empty()) {
      ids[t.name][row.at("id").get<int64_t>()] = insert_row(db, t, cols, row, ids);
      ++stats.added;
      continue;
    }
    const int64_t id = same.front();
    same.pop_front();
    ids[t.name][row.at("id").get<int64_t>()] = id;
    ++stats.present;
    if (!row.contains("status") || !terminal(row["status"].get<std::string>())) continue;
    auto sel = db.prepare("SELECT status FROM runs WHERE id = :id");
    sel.bind("id", id);
    if (!sel.step() || terminal(sel.text("status"))) continue;
    auto up = db.prepare("UPDATE runs SET status = :status, finished_at = :finished_at WHERE id = :id");
    up.bind("status", row["status"].get_ref<const std::string&>()).bind("id", id);
    if (row.contains("finished_at") && !row["finished_at"].is_null())
      up.bind("finished_at", row["finished_at"].get_ref<const std::string&>());
    else
      up.bind_null("finished_at");
    up.run();
    ++stats.updated;
  }
}

void merge_sources(sqlite::Db& db, const TableDef& t, const std::vector<Column>& cols, const Document& doc,
                   const fs::path& target, IdMap& ids, ImportStats::Table& stats) {
  for (const auto& row : doc.rows.at(t.name)) {
    ++stats.in_file;
    const auto& hash = row.at("hash").get_ref<const std::string&>();
    auto sel = db.prepare("SELECT text FROM sources WHERE hash = :hash");
    sel.bind("hash", hash);
    if (sel.step()) {
      if (sel.text("text") != row.at("text").get_ref<const std::string&>())
        throw Error(doc.name + ": source " + hash + " has a different text than in " + target.string() +
                    " under the same hash; nothing imported");
      ++stats.present;
      continue;
    }
    insert_row(db, t, cols, row, ids);
    ++stats.added;
  }
}

// Baselines and results: matched as a multiset by natural key, never updated.
void merge_rows(sqlite::Db& db, const TableDef& t, const std::vector<Column>& cols, const Document& doc, IdMap& ids,
                ImportStats::Table& stats) {
  auto existing = target_keys(db, t, cols);
  for (const auto& row : doc.rows.at(t.name)) {
    ++stats.in_file;
    auto& same = existing[doc_key(t, row, ids)];
    if (!same.empty()) {
      same.pop_front();
      ++stats.present;
      continue;
    }
    insert_row(db, t, cols, row, ids);
    ++stats.added;
  }
}

void merge(const Document& doc, const fs::path& target, ImportStats& stats) {
  sqlite::Db db(target, SQLITE_OPEN_READWRITE);
  db.exec("PRAGMA foreign_keys = ON");
  sqlite::Transaction tx(db);
  const Schema& schema = current_schema();
  std::map<std::string, std::vector<Column>> cols;
  for (const auto& t : tables()) {
    cols[t.name] = columns(db, t.name);
    std::string have, want;
    for (const auto& c : cols[t.name]) have += c.name + " ";
    for (const auto& c : schema.cols.at(t.name)) want += c.name + " ";
    if (have != want)
      throw Error(target.string() + ": table " + t.name + " has columns (" + have + ") where schema version " +
                  std::to_string(schema.version) + " has (" + want + "); nothing imported");
  }
  IdMap ids;
  const auto& td = tables();
  merge_gpus(db, td[0], cols["gpus"], doc, ids, stats.gpus);
  merge_runs(db, td[1], cols["runs"], doc, ids, stats.runs);
  merge_sources(db, td[2], cols["sources"], doc, target, ids, stats.sources);
  merge_rows(db, td[3], cols["baselines"], doc, ids, stats.baselines);
  merge_rows(db, td[4], cols["results"], doc, ids, stats.results);
  tx.commit();
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw Error(p.string() + ": cannot read: " + std::strerror(errno));
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) throw Error(p.string() + ": cannot read");
  return s.str();
}

}  // namespace

std::string export_json(const KnowledgeBase& kb) {
  sqlite::Db db(kb.path(), SQLITE_OPEN_READONLY);
  ReadSnapshot snapshot(db);
  int64_t version = 0;
  {
    auto st = db.prepare("SELECT user_version AS v FROM pragma_user_version");
    if (st.step()) version = st.i64("v");
  }
  std::string out = "{\n";
  out += "\"format\": " + dump(kExportFormat) + ",\n";
  out += "\"version\": " + std::to_string(kExportVersion) + ",\n";
  out += "\"schema_version\": " + std::to_string(version) + ",\n";
  out += "\"exported_at\": " + dump(now_iso()) + ",\n";
  out += "\"source\": " + dump(kb.path().string()) + ",\n";
  const auto& ts = tables();
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto cols = columns(db, ts[i].name);
    out += dump(ts[i].name) + ": [";
    auto st = db.prepare("SELECT * FROM " + ts[i].name + " ORDER BY rowid");
    bool first = true;
    while (st.step()) {
      json row = json::object();
      for (const auto& c : cols) row[c.name] = cell(st, c);
      out += (first ? "\n" : ",\n") + dump(row);
      first = false;
    }
    out += first ? "]" : "\n]";
    out += i + 1 < ts.size() ? ",\n" : "\n";
  }
  out += "}\n";
  return out;
}

void export_json_file(const KnowledgeBase& kb, const fs::path& out) {
  const std::string text = export_json(kb);
  const fs::path tmp = out.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (f) f.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (f.is_open()) f.close();  // close() flushes: a full disk shows up here
    if (!f) {
      const std::string why = std::strerror(errno);
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error(out.string() + ": cannot write (" + tmp.string() + ": " + why + ")");
    }
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error(out.string() + ": cannot write: " + ec.message());
  }
}

ImportStats import_json(const std::string& text, const std::string& name, const fs::path& target) {
  const Document doc = parse_document(text, name);  // before the target is touched at all
  ImportStats stats;
  std::error_code ec;
  const bool existed = fs::exists(target, ec);
  if (ec) throw Error(target.string() + ": cannot check: " + ec.message());
  stats.created = !existed;
  try {
    { auto kb = KnowledgeBase::open(target); }  // refuses a foreign file; creates or migrates
    merge(doc, target, stats);
  } catch (...) {
    if (!existed)
      for (const char* side : {"", "-wal", "-shm", "-journal"}) fs::remove(target.string() + side, ec);
    throw;
  }
  return stats;
}

ImportStats import_json_file(const fs::path& file, const fs::path& target) {
  return import_json(read_file(file), file.string(), target);
}

// --- summaries ---

std::vector<RunSummary> run_summaries(const KnowledgeBase& kb) {
  std::map<int64_t, std::pair<std::string, std::string>> gpu;
  for (const auto& g : kb.gpus()) gpu[g.id] = {g.device.name, std::string(time_kind_name(g.kind))};
  std::vector<RunSummary> out;
  std::map<int64_t, size_t> at;
  for (auto& r : kb.runs()) {
    RunSummary s;
    s.run = std::move(r);
    if (const auto it = gpu.find(s.run.gpu_id); it != gpu.end()) std::tie(s.gpu_name, s.gpu_kind) = it->second;
    at[s.run.id] = out.size();
    out.push_back(std::move(s));
  }
  sqlite::Db db(kb.path(), SQLITE_OPEN_READONLY);
  auto st = db.prepare("SELECT run_id, status, count(*) AS n FROM results GROUP BY run_id, status");
  while (st.step()) {
    const auto it = at.find(st.i64("run_id"));
    if (it == at.end()) continue;
    auto& s = out[it->second];
    s.results += st.i64("n");
    s.by_status[st.text("status")] += st.i64("n");
  }
  return out;
}

std::vector<ProblemSummary> problem_summaries(const KnowledgeBase& kb) {
  sqlite::Db db(kb.path(), SQLITE_OPEN_READONLY);
  ReadSnapshot snapshot(db);
  std::map<std::string, ProblemSummary> by;
  {
    auto st = db.prepare("SELECT problem, count(*) AS n, max(started_at) AS last FROM runs GROUP BY problem");
    while (st.step()) {
      auto& p = by[st.text("problem")];
      p.runs = st.i64("n");
      p.last_run_at = st.text("last");
    }
  }
  {
    auto st = db.prepare(
        "SELECT problem, count(*) AS n, total(status = 'ok') AS ok FROM results GROUP BY problem");
    while (st.step()) {
      auto& p = by[st.text("problem")];
      p.results = st.i64("n");
      p.ok = static_cast<int64_t>(st.real("ok"));
    }
  }
  {
    auto st = db.prepare(
        "SELECT DISTINCT r.problem AS problem, g.name AS name FROM runs r JOIN gpus g ON g.id = r.gpu_id "
        "ORDER BY 1, 2");
    while (st.step()) by[st.text("problem")].gpus.push_back(st.text("name"));
  }
  std::vector<ProblemSummary> out;
  for (auto& [name, p] : by) {
    p.problem = name;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<GpuSummary> gpu_summaries(const KnowledgeBase& kb) {
  std::vector<GpuSummary> out;
  std::map<int64_t, size_t> at;
  for (auto& g : kb.gpus()) {
    at[g.id] = out.size();
    out.push_back({std::move(g), 0, 0});
  }
  sqlite::Db db(kb.path(), SQLITE_OPEN_READONLY);
  ReadSnapshot snapshot(db);
  for (const char* table : {"runs", "results"}) {
    auto st = db.prepare(std::string("SELECT gpu_id, count(*) AS n FROM ") + table + " GROUP BY gpu_id");
    while (st.step())
      if (const auto it = at.find(st.i64("gpu_id")); it != at.end())
        (std::string(table) == "runs" ? out[it->second].runs : out[it->second].results) = st.i64("n");
  }
  return out;
}

}  // namespace soltune::kb
