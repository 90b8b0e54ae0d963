#pragma once
// The knowledge base's schema and its versions (internal to src/kb). A file is marked as ours by
// PRAGMA application_id and versioned by PRAGMA user_version; migrations are an ordered list of
// SQL steps, step i taking a file from version i to i+1, so later changes only append steps.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kb/sqlite.hpp"

namespace soltune::kb {

inline constexpr int32_t kApplicationId = 0x534C544E;  // "SLTN"

// Until schema 6 (soltune 0.1), soltune timed candidates with their inputs rotated between two
// or more sets, and L2 lines loaded under an evict_last policy outlasted its flush; 0.2 times them
// on one set and demotes such lines before each flush (src/eval/cuda_task_state.cpp and
// timing_loop.cpp say why). Runs recorded as "cuda" before then are relabelled with this backend by
// the migration and by an import of an older export: timed another way, they seed searches but are
// never a pick (kb/query.cpp).
inline constexpr int kNewTimingSchema = 6;
inline constexpr const char* kOldTimingBackend = "cuda (timing: soltune 0.1, input sets rotated, evict_last lines kept)";

const std::vector<std::string>& migrations();
inline int schema_version() { return static_cast<int>(migrations().size()); }

// Checks an existing file without changing it: opened read-only, and refused (Error naming the
// path and the reason) when it is not SQLite, is another application's database, or has a newer
// schema. Returns the file's schema version; 0 for an empty file that is still to be created.
int check_existing(const std::filesystem::path& path);

// Brings a read-write connection to the current schema in one write transaction. The checks are
// repeated inside it, since another process may have created or migrated the file meanwhile.
void migrate(sqlite::Db& db);

}  // namespace soltune::kb
