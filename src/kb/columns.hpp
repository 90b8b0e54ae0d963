#pragma once
// A table's columns, listed once beside the record members they hold: the table's insert binds
// the columns it writes and its query reads every one, both by walking the same list.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kb/sqlite.hpp"

namespace soltune::kb {

template <typename Rec>
struct Column {
  std::string name;
  bool written;  // by the table's insert; false: set by the database (id, timestamps) or later updates
  std::function<void(sqlite::Stmt&, const Rec&)> bind;
  std::function<void(const sqlite::Stmt&, Rec&)> read;
};

// A column's value into a member, by the member's type. A REAL added to a table after files were
// written reads NULL (NaN) in their older rows: `zero_null` reads that as 0, "not known".
inline void get(const sqlite::Stmt& st, std::string_view n, double& v, bool zero_null = false) {
  v = st.real(n);
  if (zero_null && std::isnan(v)) v = 0;
}
inline void get(const sqlite::Stmt& st, std::string_view n, int& v, bool = false) { v = st.i32(n); }
inline void get(const sqlite::Stmt& st, std::string_view n, int64_t& v, bool = false) { v = st.i64(n); }
inline void get(const sqlite::Stmt& st, std::string_view n, bool& v, bool = false) { v = st.i64(n) != 0; }
inline void get(const sqlite::Stmt& st, std::string_view n, std::string& v, bool = false) { v = st.text(n); }

// A column held by a member of the record or of one of its members (`Path`: member pointers,
// outermost first).
template <typename Rec, auto... Path>
Column<Rec> member_column(std::string name, bool written = true) {
  return {name, written, [name](sqlite::Stmt& st, const Rec& r) { st.bind(name, (r .* ... .* Path)); },
          [name](const sqlite::Stmt& st, Rec& r) { get(st, name, (r .* ... .* Path)); }};
}

// "a, b, c" of the columns an insert writes, of any list of columns with `name` and `written`
// (result_columns' too); with `prefix` ":" their parameters.
template <typename Columns>
std::string written_names(const Columns& cols, const std::string& prefix = "") {
  std::string out;
  for (const auto& c : cols)
    if (c.written) out += (out.empty() ? "" : ", ") + prefix + std::string(c.name);
  return out;
}

template <typename Rec>
void bind_written(sqlite::Stmt& st, const std::vector<Column<Rec>>& cols, const Rec& r) {
  for (const auto& c : cols)
    if (c.written) c.bind(st, r);
}

template <typename Rec>
Rec read_row(const sqlite::Stmt& st, const std::vector<Column<Rec>>& cols) {
  Rec r;
  for (const auto& c : cols) c.read(st, r);
  return r;
}

// Every row a query selects.
template <typename Rec>
std::vector<Rec> read_rows(sqlite::Stmt& st, const std::vector<Column<Rec>>& cols) {
  std::vector<Rec> out;
  while (st.step()) out.push_back(read_row(st, cols));
  return out;
}

}  // namespace soltune::kb
