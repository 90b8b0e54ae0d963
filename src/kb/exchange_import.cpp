// The JSON import: a parsed document merged into a knowledge base without duplicates, in one
// transaction, its ids remapped to the target's.
#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "core/error.hpp"
#include "kb/exchange.hpp"
#include "kb/exchange_impl.hpp"

namespace soltune::kb {

namespace fs = std::filesystem;

namespace {

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

using TargetKeys = std::map<std::string, std::deque<int64_t>>;  // natural key -> target ids

// The target's rows by natural key, as they were before the import: ids in id order.
TargetKeys target_keys(const sqlite::Db& db, const TableDef& t, const std::vector<Column>& cols) {
  std::string sel;
  for (const auto& c : t.key) sel += ", " + c;
  auto st = db.prepare("SELECT id" + sel + " FROM " + t.name + " ORDER BY id");
  TargetKeys out;
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

// The target row a document row matches, taken from `existing` so that rows match as multisets:
// each target row matches one document row at most. nullopt when none is left.
std::optional<int64_t> take_match(TargetKeys& existing, const TableDef& t, const json& row, const IdMap& ids) {
  auto& same = existing[doc_key(t, row, ids)];
  if (same.empty()) return std::nullopt;
  const int64_t id = same.front();
  same.pop_front();
  return id;
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

// Runs by natural key; a run the target still has as running, interrupted or stopped takes the file's
// status when the file has it finished or failed.
void merge_runs(sqlite::Db& db, const TableDef& t, const std::vector<Column>& cols, const Document& doc, IdMap& ids,
                ImportStats::Table& stats) {
  auto existing = target_keys(db, t, cols);
  for (const auto& row : doc.rows.at(t.name)) {
    ++stats.in_file;
    const auto match = take_match(existing, t, row, ids);
    if (!match) {
      ids[t.name][row.at("id").get<int64_t>()] = insert_row(db, t, cols, row, ids);
      ++stats.added;
      continue;
    }
    const int64_t id = *match;
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

// Baselines, results and audits: matched as a multiset by natural key, never updated.
void merge_rows(sqlite::Db& db, const TableDef& t, const std::vector<Column>& cols, const Document& doc, IdMap& ids,
                ImportStats::Table& stats) {
  auto existing = target_keys(db, t, cols);
  for (const auto& row : doc.rows.at(t.name)) {
    ++stats.in_file;
    if (take_match(existing, t, row, ids)) {
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
  merge_rows(db, td[5], cols["audits"], doc, ids, stats.audits);
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

}  // namespace soltune::kb
