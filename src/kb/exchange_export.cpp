// The JSON export of a knowledge base: every row of every exchanged table, from one snapshot.
#include <sqlite3.h>

#include "core/output_file.hpp"
#include "kb/exchange.hpp"
#include "kb/exchange_impl.hpp"
#include "kb/kb_impl.hpp"

namespace soltune::kb {

namespace fs = std::filesystem;

std::string export_json(const KnowledgeBase& kb) {
  sqlite::Db db(kb.path(), SQLITE_OPEN_READONLY);
  sqlite::ReadSnapshot snapshot(db);
  int64_t version = 0;
  std::string now;
  {
    auto st = db.prepare(std::string("SELECT user_version AS v, ") + kNowSql + " AS now FROM pragma_user_version");
    if (st.step()) version = st.i64("v"), now = st.text("now");
  }
  std::string out = "{\n";
  out += "\"format\": " + dump(kExportFormat) + ",\n";
  out += "\"version\": " + std::to_string(kExportVersion) + ",\n";
  out += "\"schema_version\": " + std::to_string(version) + ",\n";
  out += "\"exported_at\": " + dump(now) + ",\n";
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

void export_json_file(const KnowledgeBase& kb, const fs::path& out) { write_output_file(out, export_json(kb)); }

}  // namespace soltune::kb
