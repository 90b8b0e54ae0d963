#pragma once
// What the JSON export and import of a knowledge base share (internal to src/kb): the tables they
// carry, their columns as SQLite reports them, a cell as JSON, and a parsed import document.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kb/sqlite.hpp"

namespace soltune::kb {

using json = nlohmann::ordered_json;  // keeps the columns in table order

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
  bool added_later = false;  // documents of older schemas lack it: a missing array is an empty one
};

// The exchanged tables, in the order a document holds them (referenced tables first).
const std::vector<TableDef>& tables();
// The table that column `col` of `t` references, or nullptr.
const std::string* ref_table(const TableDef& t, const std::string& col);
// The columns of `table` in the file, in table order; Error for a type the exchange does not know.
std::vector<Column> columns(const sqlite::Db& db, const std::string& table);

// The tables of the current schema, built in memory from the migrations: what a document is
// checked against before any file is opened.
struct Schema {
  int version = 0;
  std::map<std::string, std::vector<Column>> cols;
};
const Schema& current_schema();

// A cell as JSON: NULL is null; an infinite REAL, which JSON cannot hold, is a string.
json cell(const sqlite::Stmt& st, const Column& c);

// One line of JSON; text that is not valid UTF-8 is written as U+FFFD rather than failing.
inline std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// An import document, checked against the current schema.
struct Document {
  std::string name;
  int schema_version = 0;                         // as the file says; 0 when absent
  std::map<std::string, std::vector<json>> rows;  // per table: objects of known, normalized columns
};

// Parses and checks the whole document (`name` is used in messages); Error says what is wrong.
Document parse_document(const std::string& text, const std::string& name);

}  // namespace soltune::kb
