#pragma once
// The columns of a result row, listed once: record() writes those it writes from them, and every
// query reads a row through them, each column named beside where it lives in a ResultRecord.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/sol.hpp"
#include "core/task.hpp"
#include "kb/records.hpp"
#include "kb/sqlite.hpp"

namespace soltune::kb {

// A column's value in a row, for the formats that carry rows besides SQL (a result's JSON).
using ColumnValue = std::variant<int64_t, double, bool, std::string>;

struct ResultColumn {
  const char* name;
  bool written;  // by record(); false: the database's (id, created_at), the run's (run_id, gpu_id), or joined
  void (*bind)(sqlite::Stmt&, const char*, const ResultRecord&);
  void (*read)(const sqlite::Stmt&, const char*, ResultRecord&);
  ColumnValue (*value)(const ResultRecord&);
  const char* json;  // its key in a result's JSON: the column's name but where JSON has said otherwise
};

const std::vector<ResultColumn>& result_columns();

// The row record() writes for a task's result, its source's hash and its SOL score.
ResultRecord to_record(const Task& t, const std::string& source_hash, const EvalResult& r, const SolScore& s);
// A row as the result it records (what a resumed run replays); throws Error on a malformed key.
EvalResult to_eval_result(const ResultRecord& r);

}  // namespace soltune::kb
