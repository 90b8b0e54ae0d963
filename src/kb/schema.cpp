#include "kb/schema.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>

#include "core/error.hpp"

namespace soltune::kb {
namespace {

// Times are ISO-8601 UTC with milliseconds, e.g. 2025-01-31T12:00:00.123Z.
#define SOLTUNE_NOW "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"

// Version 1. Times are microseconds. Identities are text (problem, variant, dtype, shape key,
// canonical config key "BLOCK=256,VEC=4") so a file stays readable without the templates.
// REAL columns are nullable because SQLite stores NaN as NULL; NULL reads back as NaN.
const char* const kV1 = R"sql(
CREATE TABLE gpus (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  uuid TEXT NOT NULL,                 -- '' for a model device
  kind TEXT NOT NULL,                 -- 'measured' or 'predicted': a model device is its own row
  cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL, sms INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL, mem_bytes INTEGER NOT NULL,
  smem_per_sm INTEGER NOT NULL, smem_per_block INTEGER NOT NULL, smem_per_block_optin INTEGER NOT NULL,
  regs_per_sm INTEGER NOT NULL, regs_per_block INTEGER NOT NULL,
  max_threads_per_sm INTEGER NOT NULL, max_threads_per_block INTEGER NOT NULL,
  max_blocks_per_sm INTEGER NOT NULL, warp_size INTEGER NOT NULL, clock_khz INTEGER NOT NULL,
  driver_version INTEGER NOT NULL, runtime_version INTEGER NOT NULL, nvrtc_version INTEGER NOT NULL,
  datasheet_mem_bw REAL, datasheet_fp32 REAL, datasheet_tensor_16 REAL,
  has_measured INTEGER NOT NULL,
  measured_mem_bw REAL, measured_fp32 REAL, measured_tensor_16 REAL,
  first_seen_at TEXT NOT NULL DEFAULT )sql" SOLTUNE_NOW R"sql(,
  last_seen_at TEXT NOT NULL DEFAULT )sql" SOLTUNE_NOW R"sql(,
  UNIQUE (name, uuid, kind)
);

CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  gpu_id INTEGER NOT NULL REFERENCES gpus(id),
  problem TEXT NOT NULL,
  config_path TEXT NOT NULL,
  seed INTEGER NOT NULL,              -- the uint64 seed's bits
  backend TEXT NOT NULL,
  budget TEXT NOT NULL,
  soltune_version TEXT NOT NULL,
  command_line TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'running',  -- running, finished, interrupted, failed
  started_at TEXT NOT NULL DEFAULT )sql" SOLTUNE_NOW R"sql(,
  finished_at TEXT
);

-- Template sources by content hash, so an export needs nothing but this file.
CREATE TABLE sources (
  hash TEXT PRIMARY KEY,
  text TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT )sql" SOLTUNE_NOW R"sql(
);

CREATE TABLE baselines (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  problem TEXT NOT NULL, variant TEXT NOT NULL, dtype TEXT NOT NULL, shape_key TEXT NOT NULL,
  time_kind TEXT NOT NULL,
  t_ref_us REAL, t_sol_us REAL, flops REAL, bytes REAL,
  ref_median_us REAL, ref_min_us REAL, ref_q1_us REAL, ref_q3_us REAL, ref_max_us REAL,
  ref_reps INTEGER NOT NULL,
  note TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT )sql" SOLTUNE_NOW R"sql(
);

CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  gpu_id INTEGER NOT NULL REFERENCES gpus(id),  -- the run's, repeated for the indexes below
  problem TEXT NOT NULL, variant TEXT NOT NULL, dtype TEXT NOT NULL, shape_key TEXT NOT NULL,
  config_key TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  time_kind TEXT NOT NULL,
  time_us REAL, min_us REAL, q1_us REAL, q3_us REAL, max_us REAL, reps INTEGER NOT NULL,
  t_ref_us REAL, t_sol_us REAL, sol_score REAL, sol_execbench REAL,
  sol_valid INTEGER NOT NULL, below_sol INTEGER NOT NULL,
  registers INTEGER NOT NULL, spill_stores INTEGER NOT NULL, spill_loads INTEGER NOT NULL,
  stack INTEGER NOT NULL, smem_static INTEGER NOT NULL, cmem INTEGER NOT NULL,
  res_parsed INTEGER NOT NULL,
  grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
  block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
  smem INTEGER NOT NULL,
  acc_checked INTEGER NOT NULL, acc_mismatches INTEGER NOT NULL, acc_nonfinite INTEGER NOT NULL,
  acc_unwritten INTEGER NOT NULL, acc_max_abs_err REAL, acc_max_rel_err REAL, acc_rel_l2 REAL,
  acc_rounds INTEGER NOT NULL, acc_pass INTEGER NOT NULL,
  accuracy TEXT NOT NULL,             -- Accuracy::summary(), '' when no check ran
  compile_ms REAL, cache_hit INTEGER NOT NULL, occupancy_blocks INTEGER NOT NULL,
  log TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT )sql" SOLTUNE_NOW R"sql(
);

-- best(): ok results of a problem, grouped by variant, dtype and shape, fastest first.
CREATE INDEX results_best ON results (problem, status, variant, dtype, shape_key, time_kind, time_us);
-- evaluated_keys(): what a task has already tried on a GPU with a given source.
CREATE INDEX results_task ON results (gpu_id, problem, variant, dtype, shape_key, source_hash, config_key);
CREATE INDEX results_run ON results (run_id);
CREATE INDEX baselines_run ON baselines (run_id);
CREATE INDEX runs_gpu ON runs (gpu_id);
)sql";

#undef SOLTUNE_NOW

struct Header {
  int64_t application_id = 0, user_version = 0, objects = 0;
};

// One statement, so one read transaction: read separately, a file being created by another
// process could show the empty header but the finished tables, and be refused as foreign.
Header read_header(const sqlite::Db& db) {
  auto st = db.prepare(
      "SELECT (SELECT application_id FROM pragma_application_id) AS app, "
      "(SELECT user_version FROM pragma_user_version) AS version, "
      "(SELECT count(*) FROM sqlite_master) AS objects");
  if (!st.step()) throw Error(db.path() + ": cannot read the database header");
  return {st.i64("app"), st.i64("version"), st.i64("objects")};
}

// The file's schema version, or Error why it must not be touched.
int validate(const Header& h, const std::string& path) {
  const std::string refuse = path + ": not a soltune knowledge base (";
  if (h.application_id == 0 && h.user_version == 0 && h.objects == 0) return 0;  // empty: ours to create
  if (h.application_id == 0) throw Error(refuse + "an SQLite database of some other application; left unchanged)");
  if (h.application_id != kApplicationId) {
    char id[32];
    std::snprintf(id, sizeof id, "0x%08llx", static_cast<unsigned long long>(h.application_id & 0xffffffffLL));
    throw Error(refuse + "an SQLite database with application_id " + id + "; left unchanged)");
  }
  if (h.user_version > schema_version())
    throw Error(path + ": knowledge base schema version " + std::to_string(h.user_version) +
                " is newer than this soltune knows (" + std::to_string(schema_version()) +
                "); written by a newer soltune? left unchanged");
  if (h.user_version < 1)
    throw Error(path + ": knowledge base has no schema version (damaged?); left unchanged");
  return static_cast<int>(h.user_version);
}

bool has_sqlite_magic(const std::filesystem::path& path) {
  static constexpr char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  std::array<char, 16> head{};
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path.string() + ": cannot read");
  f.read(head.data(), head.size());
  if (f.gcount() == 0) return true;  // empty: SQLite treats it as a new database
  return f.gcount() == 16 && std::equal(head.begin(), head.end(), kMagic);
}

}  // namespace

const std::vector<std::string>& migrations() {
  static const std::vector<std::string> steps = {
      "PRAGMA application_id = " + std::to_string(kApplicationId) + ";\n" + kV1,
      // v2: the validator's guard zones and precision check.
      "ALTER TABLE results ADD COLUMN acc_out_of_bounds INTEGER NOT NULL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN acc_precision_ok INTEGER NOT NULL DEFAULT 1;\n",
      // v3: the toolchain of a run: results are reused only under the same one.
      "ALTER TABLE runs ADD COLUMN toolchain TEXT NOT NULL DEFAULT '';\n",
      // v4: what proposed each result (seed, random, evolution, enumeration).
      "ALTER TABLE results ADD COLUMN proposer TEXT NOT NULL DEFAULT '';\n",
      // v5: the search state of each task of a run, as of its last batch.
      "CREATE TABLE checkpoints (\n"
      "  run_id INTEGER NOT NULL REFERENCES runs(id), task TEXT NOT NULL, evaluated INTEGER NOT NULL,\n"
      "  state TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (run_id, task));\n",
      // v6 (kNewTimingSchema): runs timed the way soltune 0.1 timed (kb/schema.hpp).
      std::string("UPDATE runs SET backend = '") + kOldTimingBackend + "' WHERE backend = 'cuda';\n",
      // v7: the read bandwidth a GPU was measured at (T_SOL's bandwidth is the better of it and the copy's).
      "ALTER TABLE gpus ADD COLUMN measured_read_bw REAL;\n",
      // v8: the 8-bit tensor ceiling, and what the tensor probes reached beside the figures used; a
      // run's notes (what it left out and why, one per line).
      "ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '';\n"
      "ALTER TABLE gpus ADD COLUMN datasheet_tensor_8 REAL;\n"
      "ALTER TABLE gpus ADD COLUMN measured_tensor_8 REAL;\n"
      "ALTER TABLE gpus ADD COLUMN measured_tensor_16_probe REAL;\n"
      "ALTER TABLE gpus ADD COLUMN measured_tensor_8_probe REAL;\n",
      // v9: compute-sanitizer's verdicts on tuned kernels, one row per tool and audit.
      "CREATE TABLE audits (\n"
      "  id INTEGER PRIMARY KEY,\n"
      "  gpu_id INTEGER NOT NULL REFERENCES gpus(id),\n"
      "  problem TEXT NOT NULL, variant TEXT NOT NULL, dtype TEXT NOT NULL, shape_key TEXT NOT NULL,\n"
      "  config_key TEXT NOT NULL, source_hash TEXT NOT NULL,\n"
      "  tool TEXT NOT NULL,                 -- memcheck, racecheck, synccheck, initcheck\n"
      "  verdict TEXT NOT NULL,              -- passed, failed, not_audited\n"
      "  errors INTEGER NOT NULL, log TEXT NOT NULL, toolchain TEXT NOT NULL,\n"
      "  audited_at TEXT NOT NULL);\n"
      "CREATE INDEX audits_kernel ON audits (problem, variant, dtype, shape_key, config_key, source_hash);\n",
      // v10: what a baseline's T_ref timed (a library's label, or the baseline kernels').
      "ALTER TABLE baselines ADD COLUMN ref_source TEXT NOT NULL DEFAULT '';\n",
      // v11: what a resumed run must match (the search's settings) and the process that ran it.
      "ALTER TABLE runs ADD COLUMN settings TEXT NOT NULL DEFAULT '';\n"
      "ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;\n"
      "ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';\n",
      // v12: what the validator found besides the comparison: workspace bytes left non-zero, input
      // bytes written and the first input written.
      "ALTER TABLE results ADD COLUMN acc_workspace_dirty INTEGER NOT NULL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN acc_inputs_written INTEGER NOT NULL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN acc_written_input TEXT NOT NULL DEFAULT '';\n",
      // v13: where an evaluation's GPU-side time went (core/measure.hpp's GpuPhases), for the report.
      "ALTER TABLE results ADD COLUMN wall_ms REAL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN phase_load REAL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN phase_rounds REAL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN phase_reference REAL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN phase_warmup REAL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN phase_batches REAL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN phase_checks REAL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN phase_after REAL DEFAULT 0;\n"
      "ALTER TABLE results ADD COLUMN phase_kernels REAL DEFAULT 0;\n",
      // v14: a task's end re-timing of its best, interleaved with T_ref, recorded as a row of its own.
      "ALTER TABLE results ADD COLUMN retimed INTEGER NOT NULL DEFAULT 0;\n",
  };
  return steps;
}

int check_existing(const std::filesystem::path& path) {
  // SQLite's own answer for a non-database ("file is not a database") does not say what the file
  // is; the header magic does, and reading it cannot change the file.
  if (!has_sqlite_magic(path))
    throw Error(path.string() + ": not a soltune knowledge base (not an SQLite file; left unchanged)");
  sqlite::Db db(path, SQLITE_OPEN_READONLY);
  // A file SQLite cannot read its own header of (truncated, overwritten) is damaged, not ours to guess at.
  Header header;
  try {
    header = read_header(db);
  } catch (const Error& e) {
    // SQLite's words without the statement: "...: database disk image is malformed [SQL: ...]".
    std::string why = e.what();
    why = why.substr(0, why.find(" [SQL:"));
    if (const auto colon = why.rfind(": "); colon != std::string::npos) why = why.substr(colon + 2);
    throw Error(path.string() + ": the knowledge base is damaged (" + why + "); left unchanged. Restore it from a copy; `sqlite3 " +
                path.string() + " .recover` may save what is left");
  }
  const int version = validate(header, db.path());
  // A damaged file must stop soltune before anything is written to it, not halfway through a run.
  std::string verdict;
  try {
    auto st = db.prepare("PRAGMA quick_check(1)");
    if (st.step()) verdict = st.text("quick_check");
  } catch (const Error& e) {
    verdict = e.what();
  }
  if (verdict != "ok")
    throw Error(path.string() + ": the knowledge base is damaged (" + verdict + "); left unchanged");
  return version;
}

void migrate(sqlite::Db& db) {
  sqlite::Transaction tx(db);
  const int from = validate(read_header(db), db.path());
  for (int v = from; v < schema_version(); ++v) db.exec(migrations()[static_cast<size_t>(v)]);
  if (from == schema_version()) return;  // someone else migrated it; the rollback changes nothing
  db.exec("PRAGMA user_version = " + std::to_string(schema_version()));
  tx.commit();
}

}  // namespace soltune::kb
