#pragma once
// Carrying a knowledge base between machines as JSON, and the summaries `soltune kb list` shows.
//
// The export is one versioned document holding every row and every column of the tables:
//   {"format": "soltune-kb", "version": 1, "schema_version": 2, "exported_at": ..., "source": ...,
//    "gpus": [...], "runs": [...], "sources": [...], "baselines": [...], "results": [...]}
// Each row is an object keyed by column name. SQLite has no NaN (it stores NULL, which reads back
// as NaN), so NULL is null; infinite REALs, which JSON cannot hold, are "Infinity" / "-Infinity".
// Text is written as UTF-8; a byte sequence that is not valid UTF-8 (never seen in practice: logs,
// sources and keys are ASCII or UTF-8) is written as U+FFFD rather than failing the export.
//
// An import merges into the target without duplicates, in one transaction, remapping ids:
//   gpus       by identity (name, uuid, kind); facts are taken from whichever was seen last
//   runs       by (started_at, config_path, GPU identity, problem, seed); a run that finished or
//              failed in the file but not yet in the target takes its status from the file
//   sources    by hash (a different text under a known hash is a conflict: nothing is imported)
//   baselines  by (run, problem, variant, dtype, shape_key, time_kind, created_at)
//   results    by (run, problem, variant, dtype, shape_key, config_key, created_at)
// Rows are matched as multisets: rows the file holds twice under one key are added twice to a
// target lacking them, and importing the same file again adds nothing.
//
// These functions read and write through their own SQLite connection on kb.path(), after
// KnowledgeBase::open has validated (and, if older, migrated) the file.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kb/knowledge_base.hpp"

namespace soltune::kb {

inline constexpr const char* kExportFormat = "soltune-kb";
inline constexpr int kExportVersion = 1;

// The whole knowledge base as the JSON document described above (one row per line).
std::string export_json(const KnowledgeBase& kb);
// export_json written to `out` (core/output_file.hpp: a regular file replaced whole, links followed).
void export_json_file(const KnowledgeBase& kb, const std::filesystem::path& out);

struct ImportStats {
  struct Table {
    int64_t in_file = 0;  // rows in the document
    int64_t added = 0;    // inserted into the target
    int64_t present = 0;  // already there (matched)
    int64_t updated = 0;  // already there, and updated from the file (GPU facts, run status)
  };
  Table gpus, runs, sources, baselines, results, audits;
  bool created = false;  // the target did not exist and was created
};

// Parses and checks the whole document (`name` is used in messages) before the target is opened:
// a malformed or foreign document throws Error naming it and saying what was expected, and the
// target is neither created nor changed. Then opens (creating if missing) the knowledge base at
// `target` and merges in one transaction; any failure rolls it all back (and removes a target
// this call created).
ImportStats import_json(const std::string& text, const std::string& name, const std::filesystem::path& target);
ImportStats import_json_file(const std::filesystem::path& file, const std::filesystem::path& target);

// --- summaries for listing ---

struct RunSummary {
  RunRecord run;
  std::string gpu_name, gpu_kind;          // the run's GPU row
  int64_t results = 0;                     // all statuses
  std::map<std::string, int64_t> by_status;  // status -> count
};
struct ProblemSummary {
  std::string problem;
  int64_t runs = 0, results = 0, ok = 0;
  std::vector<std::string> gpus;  // GPU names with results for it, sorted
  std::string last_run_at;        // the latest run's started_at
};
struct GpuSummary {
  GpuRecord gpu;
  int64_t runs = 0, results = 0;
};

std::vector<RunSummary> run_summaries(const KnowledgeBase& kb);          // by run id
std::vector<ProblemSummary> problem_summaries(const KnowledgeBase& kb);  // by name
std::vector<GpuSummary> gpu_summaries(const KnowledgeBase& kb);          // by GPU id

}  // namespace soltune::kb
