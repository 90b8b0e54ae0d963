#pragma once
// What a KnowledgeBase holds, shared by its .cpp files (internal to src/kb).
#include <filesystem>
#include <mutex>
#include <string>

#include "core/task.hpp"
#include "kb/knowledge_base.hpp"
#include "kb/sqlite.hpp"

namespace soltune {

struct KnowledgeBase::Impl {
  std::filesystem::path path;
  sqlite::Db db;
  // One connection must not interleave two threads' transactions.
  mutable std::mutex mu;
};

namespace kb {

// ISO-8601 UTC with milliseconds, as an SQL expression.
inline constexpr const char* kNowSql = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

// Binds :problem, :variant, :dtype and :shape_key, a task's identity in the tables.
inline void bind_task(sqlite::Stmt& st, const Task& t) {
  st.bind("problem", t.problem->name)
      .bind("variant", t.variant->name)
      .bind("dtype", dtype_name(t.dtype))
      .bind("shape_key", t.shape.key());
}

}  // namespace kb
}  // namespace soltune
