// The tables a JSON export carries, and their columns.
#include <sqlite3.h>

#include <cmath>

#include "core/error.hpp"
#include "kb/exchange_impl.hpp"
#include "kb/schema.hpp"

namespace soltune::kb {

const std::vector<TableDef>& tables() {
  static const std::vector<TableDef> t = {
      {"gpus", true, {"name", "uuid", "kind"}, {}},
      {"runs", true, {"started_at", "config_path", "gpu_id", "problem", "seed"}, {{"gpu_id", "gpus"}}},
      {"sources", false, {"hash"}, {}},
      {"baselines", true, {"run_id", "problem", "variant", "dtype", "shape_key", "time_kind", "created_at"},
       {{"run_id", "runs"}}},
      {"results", true, {"run_id", "problem", "variant", "dtype", "shape_key", "config_key", "created_at"},
       {{"run_id", "runs"}, {"gpu_id", "gpus"}}},
      {"audits", true,
       {"gpu_id", "problem", "variant", "dtype", "shape_key", "config_key", "source_hash", "tool", "audited_at"},
       {{"gpu_id", "gpus"}},
       true},
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

}  // namespace soltune::kb
