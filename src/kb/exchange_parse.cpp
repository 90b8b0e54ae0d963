// Reading an import document: parsed and checked against the current schema in full before any
// knowledge base is opened.
#include <cstdint>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "kb/exchange.hpp"
#include "kb/exchange_impl.hpp"
#include "kb/schema.hpp"

namespace soltune::kb {
namespace {

const char* type_word(ColType t) {
  switch (t) {
    case ColType::integer: return "an integer";
    case ColType::real: return "a number (or \"Infinity\", \"-Infinity\")";
    case ColType::text: return "a string";
  }
  return "?";
}

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

}  // namespace

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
    if (arr == doc.end() && t.added_later) {
      out.rows[t.name];
      continue;
    }
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
      // An export of soltune 0.1: its CUDA runs were timed another way (kb/schema.hpp).
      if (t.name == "runs" && out.schema_version < kNewTimingSchema && row.contains("backend") &&
          row["backend"] == "cuda")
        row["backend"] = kOldTimingBackend;
      rows.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace soltune::kb
