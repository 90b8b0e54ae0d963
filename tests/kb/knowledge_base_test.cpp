#include "kb/knowledge_base.hpp"

#include <gtest/gtest.h>

#include "kb/exchange.hpp"
#include "kb_fixture.hpp"
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../support/fields.hpp"
#include "core/error.hpp"

namespace {
using namespace soltune;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) { return soltune::test::read_file(p); }

using soltune::test::raw_exec;

std::string raw_query(const fs::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string out;
  if (sqlite3_step(st) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// Expects open() to throw an Error whose message names the file and contains `reason`.
void expect_refused(const fs::path& p, const std::string& reason) {
  try {
    KnowledgeBase::open(p);
    FAIL() << "opened " << p;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    EXPECT_NE(what.find(reason), std::string::npos) << what;
  }
}

// Named `kb` so that `ctest -R kb` selects these tests.
class kb : public soltune::test::KbFixture {
 protected:
  kb() : KbFixture("soltune_kb_test_") {}
  void SetUp() override {
    KbFixture::SetUp();
    other_.name = "softmax";
    other_.variants.resize(1);
    other_.variants[0].name = "scalar";
  }

  fs::path file(const std::string& name = "kb.sqlite") const { return dir_ / name; }

  static EvalResult result(const std::string& key, double us, Status st = Status::ok,
                           TimeKind kind = TimeKind::measured) {
    EvalResult r = untimed_result(key, st, kind);
    r.time.median_us = us;
    r.time.reps = us > 0 ? 10 : 0;
    return r;
  }

  static RunInfo run_info() {
    RunInfo r;
    r.config_path = "configs/gelu.yaml";
    r.problem = "gelu";
    r.seed = 0xfedcba9876543210ULL;  // above INT64_MAX: the bits must survive
    r.backend = "cuda";
    r.budget_text = "evals=100";
    r.soltune_version = "0.1.0";
    r.command_line = "soltune tune configs/gelu.yaml";
    return r;
  }

  ProblemSpec other_;
};

TEST_F(kb, CreatesMissingFileAndFolderWithSchema) {
  const auto p = dir_ / "sub" / "dir" / "h200.sqlite";
  { auto store = KnowledgeBase::open(p); }
  ASSERT_TRUE(fs::exists(p));
  EXPECT_EQ(raw_query(p, "PRAGMA application_id"), std::to_string(0x534C544E));
  EXPECT_EQ(raw_query(p, "PRAGMA user_version"), "14");
  EXPECT_EQ(raw_query(p, "PRAGMA journal_mode"), "wal");
  for (const char* t : {"gpus", "runs", "sources", "baselines", "results", "checkpoints"})
    EXPECT_EQ(raw_query(p, std::string("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='") + t + "'"),
              "1")
        << t;
  // Opening again is a plain open, not a second creation.
  EXPECT_NO_THROW(KnowledgeBase::open(p));
}

TEST_F(kb, EmptyExistingFileIsInitialized) {
  // Another process may have created the file an instant before initializing it.
  std::ofstream(file()).close();
  { auto store = KnowledgeBase::open(file()); }
  EXPECT_EQ(raw_query(file(), "PRAGMA user_version"), "14");
}

TEST_F(kb, ResultRoundTripsEveryField) {
  auto store = KnowledgeBase::open(file());
  const int64_t gpu = store.gpu_id(real_, TimeKind::measured);
  const int64_t run = store.begin_run(run_info(), gpu);
  const Task t = task("vectorized", DType::bf16, 268435456);

  EvalResult r = result("BLOCK=256,VEC=4", 123.25, Status::wrong_answer);
  r.log = "max rel err 0.5 at index 17\nsecond line";
  r.time = {123.25, 120.5, 122.0, 124.75, 130.0, 57};
  r.res = {40, 8, 12, 16, 4096, 368, true, {}};
  r.geo.grid = {1024, 2, 3};
  r.geo.block = {256, 1, 4};
  r.geo.smem = 49152;
  r.acc = {.checked = 1000000, .mismatches = 3, .nonfinite = 1, .unwritten = 2, .out_of_bounds = 5,
           .workspace_dirty = 9, .inputs_written = 12, .written_input = "x", .max_abs_err = 0.25, .max_rel_err = 0.5,
           .rel_l2 = 1e-3, .rounds = 2, .precision_ok = false, .pass = false, .detail = ""};
  r.proposer = "evolution";
  r.retimed = true;
  r.compile_ms = 812.5;
  r.cache_hit = true;
  r.occupancy_blocks = 6;
  SolScore s{123.25, 400.0, 100.0, 0.7312, 0.9, false, true};

  const int64_t id = store.record(run, t, "hash-abc", r, s);
  const auto rows = store.results(run);
  ASSERT_EQ(rows.size(), 1u);
  const ResultRecord& g = rows[0];
  EXPECT_EQ(g.id, id);
  EXPECT_EQ(g.run_id, run);
  EXPECT_EQ(g.gpu_id, gpu);
  EXPECT_EQ(g.gpu_name, "NVIDIA H200");
  EXPECT_EQ(g.problem, "gelu");
  EXPECT_EQ(g.variant, "vectorized");
  EXPECT_EQ(g.dtype, "bf16");
  EXPECT_EQ(g.shape_key, "n=268435456");
  EXPECT_EQ(g.config_key, "BLOCK=256,VEC=4");
  EXPECT_EQ(g.status, "wrong_answer");
  EXPECT_EQ(g.time_kind, "measured");
  EXPECT_EQ(g.source_hash, "hash-abc");
  EXPECT_EQ(std::tuple(g.time_us, g.min_us, g.q1_us, g.q3_us, g.max_us, g.reps),
            std::tuple(123.25, 120.5, 122.0, 124.75, 130.0, 57));
  EXPECT_EQ(g.t_ref_us, 400.0);
  EXPECT_EQ(g.t_sol_us, 100.0);
  EXPECT_EQ(g.sol_score, 0.7312);
  EXPECT_EQ(g.sol_execbench, 0.9);
  EXPECT_FALSE(g.below_sol);
  EXPECT_TRUE(g.sol_valid);
  EXPECT_EQ(std::tuple(g.res.registers, g.res.spill_stores, g.res.spill_loads, g.res.stack, g.res.smem_static,
                       g.res.cmem, g.res.parsed),
            std::tuple(40, 8, 12, 16, 4096, 368, true));
  EXPECT_EQ(g.geo.grid, (std::array<int64_t, 3>{1024, 2, 3}));
  EXPECT_EQ(g.geo.block, (std::array<int64_t, 3>{256, 1, 4}));
  EXPECT_EQ(g.geo.smem, 49152);
  test::expect_fields_equal(g.acc, r.acc, "acc");
  EXPECT_EQ(g.proposer, "evolution");
  EXPECT_TRUE(g.retimed);
  EXPECT_EQ(g.accuracy, r.acc.summary());
  EXPECT_EQ(g.compile_ms, 812.5);
  EXPECT_TRUE(g.cache_hit);
  EXPECT_EQ(g.occupancy_blocks, 6);
  EXPECT_EQ(g.log, r.log);
  // ISO-8601 UTC: 2025-01-31T12:00:00.123Z
  ASSERT_EQ(g.created_at.size(), 24u) << g.created_at;
  EXPECT_EQ(g.created_at[10], 'T');
  EXPECT_EQ(g.created_at.back(), 'Z');
}

TEST_F(kb, PredictionWithoutCheckAndNaNRoundTrip) {
  auto store = KnowledgeBase::open(file());
  const int64_t run = store.begin_run(run_info(), store.gpu_id(model_, TimeKind::predicted));
  EvalResult r = result("BLOCK=128", 55.5, Status::ok, TimeKind::predicted);
  r.acc.max_rel_err = std::nan("");  // SQLite has no NaN; it must come back as NaN, not 0
  SolScore s{55.5, 80.0, 90.0, 0, 0, true, false};
  store.record(run, task("scalar", DType::f32, 1024), "h", r, s);
  const auto g = store.results(run).at(0);
  EXPECT_EQ(g.time_kind, "predicted");
  EXPECT_EQ(g.status, "ok");
  EXPECT_EQ(g.accuracy, "");  // no check ran: not a "FAIL"
  EXPECT_TRUE(std::isnan(g.acc.max_rel_err));
  EXPECT_TRUE(g.below_sol);
  EXPECT_FALSE(g.sol_valid);
}

TEST_F(kb, BestPicksFastestOkPerGroupAndPrefersMeasured) {
  auto store = KnowledgeBase::open(file());
  const int64_t real = store.gpu_id(real_, TimeKind::measured);
  const int64_t model = store.gpu_id(model_, TimeKind::predicted);
  DeviceInfo a100 = *find_known_gpu("A100");
  a100.uuid = "GPU-a100";
  const int64_t other = store.gpu_id(a100, TimeKind::measured);
  ASSERT_NE(real, model);  // same name, different identity (uuid, kind)

  const int64_t rr = store.begin_run(run_info(), real);
  const int64_t rm = store.begin_run(run_info(), model);
  const int64_t ro = store.begin_run(run_info(), other);
  const Task s1k = task("scalar", DType::f32, 1024);
  const Task v1k = task("vectorized", DType::f32, 1024);
  const Task s1k16 = task("scalar", DType::f16, 1024);
  const Task s2k = task("scalar", DType::f32, 2048);

  // scalar/f32/1024: fastest ok is 9; faster failures are ignored; predictions are faster still
  // but there is a measurement.
  store.record(rr, s1k, "h", result("B=1", 12), {});
  store.record(rr, s1k, "h", result("B=2", 9), {});
  store.record(rr, s1k, "h", result("B=3", 10), {});
  store.record(rr, s1k, "h", result("B=4", 1, Status::wrong_answer), {});
  store.record(rr, s1k, "h", result("B=5", 0, Status::compile_error), {});
  store.record(rr, s1k, "h", result("B=6", 2, Status::timeout), {});
  store.record(rm, s1k, "h", result("B=7", 3, Status::ok, TimeKind::predicted), {});
  store.record(rr, s1k, "h", result("B=8", 9), {});  // a tie: the earlier one stays best
  // vectorized/f32/1024: only predictions, so the fastest prediction.
  store.record(rm, v1k, "h", result("V=1", 5, Status::ok, TimeKind::predicted), {});
  store.record(rm, v1k, "h", result("V=2", 4, Status::ok, TimeKind::predicted), {});
  // scalar/f16/1024 and scalar/f32/2048: separate groups.
  store.record(rr, s1k16, "h", result("B=1", 20), {});
  store.record(rr, s1k16, "h", result("B=2", 21), {});
  store.record(rr, s2k, "h", result("B=2", 30), {});
  store.record(rr, s2k, "h", result("B=9", 31, Status::fault), {});
  // Only failures: no group at all.
  store.record(rr, task("vectorized", DType::f16, 4096), "h", result("V=1", 1, Status::illegal), {});
  // Another GPU and another problem.
  store.record(ro, s1k, "h", result("B=1", 15), {});
  store.record(rr, task("scalar", DType::f32, 1024, &other_), "h", result("X=1", 0.5), {});

  const auto best = store.best("gelu", "h200");
  ASSERT_EQ(best.size(), 4u);
  // Ordered by GPU name, variant, dtype, shape key.
  EXPECT_EQ(best[0].variant, "scalar");
  EXPECT_EQ(best[0].dtype, "f16");
  EXPECT_EQ(best[0].config_key, "B=1");
  EXPECT_EQ(best[0].time_us, 20);
  EXPECT_EQ(best[1].dtype, "f32");
  EXPECT_EQ(best[1].shape_key, "n=1024");
  EXPECT_EQ(best[1].config_key, "B=2");
  EXPECT_EQ(best[1].time_us, 9);
  EXPECT_EQ(best[1].time_kind, "measured");
  EXPECT_EQ(best[1].gpu_id, real);
  EXPECT_EQ(best[2].shape_key, "n=2048");
  EXPECT_EQ(best[2].config_key, "B=2");
  EXPECT_EQ(best[3].variant, "vectorized");
  EXPECT_EQ(best[3].config_key, "V=2");
  EXPECT_EQ(best[3].time_kind, "predicted");
  EXPECT_EQ(best[3].gpu_id, model);
  for (const auto& b : best) {
    EXPECT_EQ(b.status, "ok");
    EXPECT_EQ(b.gpu_name, "NVIDIA H200");
    EXPECT_EQ(b.problem, "gelu");
  }

  // Without a filter the A100 has its own group; the filter is a case-insensitive fragment.
  const auto all = store.best("gelu");
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].gpu_name, a100.name);
  EXPECT_EQ(all[0].time_us, 15);
  EXPECT_EQ(store.best("gelu", "A100").size(), 1u);
  EXPECT_TRUE(store.best("gelu", "V100").empty());
  EXPECT_EQ(store.best("softmax").size(), 1u);
  EXPECT_TRUE(store.best("nosuch").empty());

  // Only the given template sources: a faster result of another version does not count.
  store.record(rr, s1k, "h-old", result("B=3", 1), {});
  EXPECT_EQ(store.best("gelu", "h200")[1].time_us, 1);
  const auto current = store.best("gelu", "h200", {"h"});
  ASSERT_EQ(current.size(), 4u);
  EXPECT_EQ(current[1].config_key, "B=2");
  EXPECT_EQ(current[1].time_us, 9);
  EXPECT_TRUE(store.best("gelu", "h200", {"h-other"}).empty());
}

// What the schemas after 5 added, dropped: with user_version set back, a file as schema 5 (or, with
// more dropped, an older one) left it.
const std::string kSinceSchema5 =
    "ALTER TABLE gpus DROP COLUMN measured_read_bw; ALTER TABLE gpus DROP COLUMN datasheet_tensor_8; ALTER TABLE gpus DROP COLUMN measured_tensor_8; "
    "ALTER TABLE gpus DROP COLUMN measured_tensor_16_probe; ALTER TABLE gpus DROP COLUMN measured_tensor_8_probe; "
    "ALTER TABLE runs DROP COLUMN notes; DROP TABLE audits; ALTER TABLE baselines DROP COLUMN ref_source; ALTER TABLE runs DROP COLUMN settings; "
    "ALTER TABLE runs DROP COLUMN pid; ALTER TABLE runs DROP COLUMN host; "
    "ALTER TABLE results DROP COLUMN acc_workspace_dirty; ALTER TABLE results DROP COLUMN acc_inputs_written; "
    "ALTER TABLE results DROP COLUMN acc_written_input; ALTER TABLE results DROP COLUMN wall_ms; "
    "ALTER TABLE results DROP COLUMN phase_load; ALTER TABLE results DROP COLUMN phase_rounds; "
    "ALTER TABLE results DROP COLUMN phase_reference; ALTER TABLE results DROP COLUMN phase_warmup; "
    "ALTER TABLE results DROP COLUMN phase_batches; ALTER TABLE results DROP COLUMN phase_checks; "
    "ALTER TABLE results DROP COLUMN phase_after; ALTER TABLE results DROP COLUMN phase_kernels; "
    "ALTER TABLE results DROP COLUMN retimed; ";

TEST_F(kb, VersionOneFileIsMigratedKeepingItsResults) {
  int64_t run = 0;
  const Task t = task("scalar", DType::f32, 4096);
  {
    auto store = KnowledgeBase::open(file());
    run = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
    store.record(run, t, "hash-1", result("B=64", 42.5), {});
  }
  // Turn the file back into a version-1 knowledge base, as an older soltune wrote it.
  raw_exec(file(), "ALTER TABLE results DROP COLUMN acc_out_of_bounds; ALTER TABLE results DROP COLUMN acc_precision_ok;"
                   "ALTER TABLE runs DROP COLUMN toolchain; ALTER TABLE results DROP COLUMN proposer; DROP TABLE checkpoints;" +
                       kSinceSchema5 + "PRAGMA user_version = 1;");
  auto store = KnowledgeBase::open(file());
  EXPECT_EQ(raw_query(file(), "PRAGMA user_version"), "14");
  const auto rs = store.results(run);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].config_key, "B=64");
  EXPECT_EQ(rs[0].acc.out_of_bounds, 0);
  EXPECT_TRUE(rs[0].acc.precision_ok);
  EXPECT_EQ(rs[0].acc.inputs_written, 0);
  EXPECT_EQ(rs[0].acc.written_input, "");
  auto r = result("B=128", 40);
  r.acc.out_of_bounds = 3;
  store.record(run, t, "hash-1", r, {});
  EXPECT_EQ(store.results(run).back().acc.out_of_bounds, 3);
}

TEST_F(kb, VersionFiveCudaRunsBecomeTimedAnotherWay) {
  // soltune 0.1 (schema 5) timed with input sets rotated; 0.2 on one set. Its "cuda" runs are
  // relabelled: kept and still seeding searches, never a pick beside runs timed the new way.
  int64_t run = 0;
  const Task t = task("scalar", DType::f32, 4096);
  {
    auto store = KnowledgeBase::open(file());
    const int64_t gpu = store.gpu_id(real_, TimeKind::measured);
    run = store.begin_run(run_info(), gpu);
    store.record(run, t, "hash-1", result("B=64", 42.5), {});
    auto model = run_info();
    model.backend = "model";
    store.record(store.begin_run(model, store.gpu_id(model_, TimeKind::predicted)), t, "hash-1", result("B=32", 50, Status::ok, TimeKind::predicted), {});
  }
  raw_exec(file(), kSinceSchema5 + "PRAGMA user_version = 5;");
  auto store = KnowledgeBase::open(file());
  EXPECT_EQ(raw_query(file(), "PRAGMA user_version"), "14");
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].info.backend, "cuda (timing: soltune 0.1, input sets rotated, evict_last lines kept)");
  EXPECT_EQ(runs[1].info.backend, "model");
  ASSERT_EQ(store.results(run).size(), 1u);  // kept
  for (const auto& b : store.best(t.problem->name)) EXPECT_NE(b.config_key, "B=64");
  // A run timed the new way is a pick again, even slower than the relabelled one.
  const int64_t now = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
  store.record(now, t, "hash-1", result("B=128", 45), {});
  const auto best = store.best(t.problem->name);
  bool found = false;
  for (const auto& b : best) found = found || b.config_key == "B=128";
  EXPECT_TRUE(found);
}

TEST_F(kb, TimeUnderItsSpeedOfLightIsNeverThePick) {
  // A time under its own T_SOL by more than the ceilings' noise is a red flag to re-validate, never
  // a win: best() (and so export) passes over it; within the noise it counts.
  auto store = KnowledgeBase::open(file());
  const int64_t run = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
  const Task t = task("scalar", DType::f32, 4096);
  store.record(run, t, "h1", result("B=1", 90), {90, 300, 100, 1.05, 1.05, true, true});   // 10% under
  store.record(run, t, "h1", result("B=2", 110), {110, 300, 100, 0.95, 0.9, false, true});
  ASSERT_EQ(store.best(t.problem->name).size(), 1u);
  EXPECT_EQ(store.best(t.problem->name)[0].config_key, "B=2");
  store.record(run, t, "h1", result("B=3", 99), {99, 300, 100, 1.0, 1.0, false, true});    // 1% under: noise
  EXPECT_EQ(store.best(t.problem->name)[0].config_key, "B=3");
}

// A task's end re-timing (its best beside T_ref, interleaved) is a row of its own and the pick over
// any search time, even a faster one taken under a higher clock; re-timed rows of two runs compare
// by their time over their own T_ref. kb show's and the report's counts leave it out.
TEST_F(kb, AReTimedResultIsThePickAndComparesByItsRatioToTref) {
  auto store = KnowledgeBase::open(file());
  const int64_t gpu = store.gpu_id(real_, TimeKind::measured);
  const int64_t run = store.begin_run(run_info(), gpu);
  const Task t = task("scalar", DType::f32, 4096);
  store.record(run, t, "h1", result("B=1", 300), {300, 290, 100, 0.5, 0.5, true, false});
  store.record(run, t, "h1", result("B=2", 310), {310, 290, 100, 0.5, 0.5, true, false});
  EXPECT_EQ(store.best(t.problem->name)[0].config_key, "B=1");
  EvalResult again = result("B=2", 340);
  again.retimed = true;
  store.record(run, t, "h1", again, {340, 338, 100, 0.5, 0.5, true, false});
  auto best = store.best(t.problem->name);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_key, "B=2");
  EXPECT_TRUE(best[0].retimed);
  EXPECT_DOUBLE_EQ(best[0].time_us, 340);
  // A later run's re-timed best, slower in microseconds (a hotter card) but faster against its T_ref.
  const int64_t later = store.begin_run(run_info(), gpu);
  EvalResult other = result("B=3", 350);
  other.retimed = true;
  store.record(later, t, "h1", other, {350, 360, 100, 0.5, 0.5, true, false});
  EXPECT_EQ(store.best(t.problem->name)[0].config_key, "B=3");
  EXPECT_EQ(store.config_results(t.problem->name, "scalar", "f32", "B=2", "", "h1")[0].time_us, 340);
  const auto summaries = soltune::kb::run_summaries(store);
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].results, 2);  // the two evaluations, not the re-timing's row
}

TEST_F(kb, ADemotedResultIsWrongAndNoLongerTheBest) {
  auto store = KnowledgeBase::open(file());
  const int64_t run = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
  const Task t = task("scalar", DType::f32, 4096);
  store.record(run, t, "h1", result("B=1", 90), {});
  store.record(run, t, "h1", result("B=2", 110), {});
  ASSERT_EQ(store.best(t.problem->name)[0].config_key, "B=1");
  store.demote(run, t, "B=1", Status::wrong_answer, "correct while checked, wrong when re-timed (round 2): FAIL");
  ASSERT_EQ(store.best(t.problem->name).size(), 1u);
  EXPECT_EQ(store.best(t.problem->name)[0].config_key, "B=2");
  const auto rows = store.results(run);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, "wrong_answer");
  EXPECT_EQ(rows[0].log.rfind("correct while checked, wrong when re-timed (round 2): FAIL; ", 0), 0u) << rows[0].log;
}

TEST_F(kb, TheLatestAuditOfEachToolHoldsForItsTemplateText) {
  auto store = KnowledgeBase::open(file());
  const int64_t run = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
  const Task t = task("scalar", DType::f32, 4096);
  store.record(run, t, "h1", result("B=1", 90), {});
  const auto best = store.best(t.problem->name).at(0);
  EXPECT_TRUE(store.audits(best).empty());
  store.record_audit(best, "h1", "nvrtc 13.0",
                     {{"racecheck", AuditVerdict::failed, 2, "Race reported"}, {"memcheck", AuditVerdict::passed, 0, ""}});
  store.record_audit(best, "h1", "nvrtc 13.0", {{"racecheck", AuditVerdict::passed, 0, ""}});
  store.record_audit(best, "h0", "nvrtc 13.0", {{"synccheck", AuditVerdict::failed, 1, "of another text"}});
  auto a = store.audits(best);
  ASSERT_EQ(a.size(), 2u);  // in the tools' order, the other text's left out
  EXPECT_EQ(a[0].tool, "memcheck");
  EXPECT_EQ(a[1].tool, "racecheck");
  EXPECT_EQ(a[1].verdict, AuditVerdict::passed);
  a = store.audits(best, {"h0", "h1"});
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[2].tool, "synccheck");
  EXPECT_EQ(a[2].errors, 1);
  EXPECT_EQ(a[2].log, "of another text");
  // Another configuration has none.
  store.record(run, t, "h1", result("B=2", 80), {});
  EXPECT_TRUE(store.audits(store.best(t.problem->name).at(0)).empty());
}

TEST_F(kb, ReopenKeepsEverything) {
  int64_t gpu = 0, run = 0, rid = 0;
  const Task t = task("scalar", DType::f32, 4096);
  TaskBaseline base;
  base.t_ref_us = 250.5;
  base.t_sol_us = 100.25;
  base.flops = 1e9;
  base.bytes = 2e9;
  base.kind = TimeKind::measured;
  base.ref_timing = {250.5, 240, 245, 255, 270, 31};
  base.note = "baseline: pass";
  base.source = "cuBLAS";
  {
    auto store = KnowledgeBase::open(file());
    gpu = store.gpu_id(real_, TimeKind::measured);
    run = store.begin_run(run_info(), gpu);
    store.store_source("hash-1", "template <int B> __global__ void k() {}\n");
    store.record_baseline(run, t, base);
    rid = store.record(run, t, "hash-1", result("B=64", 142.5), {142.5, 250.5, 100.25, 0.8, 0.9, false, true});
    store.finish_run(run, "interrupted");
  }
  auto store = KnowledgeBase::open(file());
  EXPECT_EQ(store.gpu_id(real_, TimeKind::measured), gpu);  // insert-or-get finds the old row
  EXPECT_EQ(store.source("hash-1"), "template <int B> __global__ void k() {}\n");
  EXPECT_EQ(store.source("hash-2"), std::nullopt);

  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, run);
  EXPECT_EQ(runs[0].gpu_id, gpu);
  EXPECT_EQ(runs[0].status, "interrupted");
  EXPECT_FALSE(runs[0].started_at.empty());
  EXPECT_FALSE(runs[0].finished_at.empty());
  const RunInfo want = run_info();
  EXPECT_EQ(runs[0].info.seed, want.seed);
  EXPECT_EQ(runs[0].info.config_path, want.config_path);
  EXPECT_EQ(runs[0].info.problem, want.problem);
  EXPECT_EQ(runs[0].info.backend, want.backend);
  EXPECT_EQ(runs[0].info.budget_text, want.budget_text);
  EXPECT_EQ(runs[0].info.soltune_version, want.soltune_version);
  EXPECT_EQ(runs[0].info.command_line, want.command_line);

  const auto gpus = store.gpus();
  ASSERT_EQ(gpus.size(), 1u);
  const DeviceInfo& d = gpus[0].device;
  EXPECT_EQ(gpus[0].kind, TimeKind::measured);
  EXPECT_EQ(d.name, real_.name);
  EXPECT_EQ(d.uuid, real_.uuid);
  EXPECT_EQ(d.cc(), real_.cc());
  EXPECT_EQ(d.sms, real_.sms);
  EXPECT_EQ(d.l2_bytes, real_.l2_bytes);
  EXPECT_EQ(d.mem_bytes, real_.mem_bytes);
  EXPECT_EQ(d.smem_per_block_optin, real_.smem_per_block_optin);
  EXPECT_EQ(d.max_blocks_per_sm, real_.max_blocks_per_sm);
  EXPECT_EQ(d.clock_khz, real_.clock_khz);
  EXPECT_EQ(d.driver_version, 13000);
  EXPECT_EQ(d.runtime_version, 12080);
  EXPECT_EQ(d.nvrtc_version, 12080);
  EXPECT_EQ(d.datasheet.mem_bw, real_.datasheet.mem_bw);
  EXPECT_EQ(d.datasheet.tensor_16, real_.datasheet.tensor_16);
  ASSERT_TRUE(d.measured.has_value());
  EXPECT_EQ(d.measured->mem_bw, 4.1e12);
  EXPECT_EQ(d.measured->fp32, 60e12);
  EXPECT_EQ(d.measured->source, "measured");
  // The tensor ceilings T_SOL uses, and what the probes reached beside the datasheet's.
  EXPECT_EQ(d.datasheet.tensor_8, real_.datasheet.tensor_8);
  EXPECT_EQ(d.measured->tensor_16, 1010e12);
  EXPECT_EQ(d.measured->tensor_8, 1978.9e12);
  EXPECT_EQ(d.measured->tensor_16_probe, 1010e12);
  EXPECT_EQ(d.measured->tensor_8_probe, 1900e12);

  const auto bases = store.baselines(run);
  ASSERT_EQ(bases.size(), 1u);
  EXPECT_EQ(bases[0].shape_key, "n=4096");
  EXPECT_EQ(bases[0].baseline.t_ref_us, 250.5);
  EXPECT_EQ(bases[0].baseline.t_sol_us, 100.25);
  EXPECT_EQ(bases[0].baseline.flops, 1e9);
  EXPECT_EQ(bases[0].baseline.bytes, 2e9);
  EXPECT_EQ(bases[0].baseline.ref_timing.q3_us, 255);
  EXPECT_EQ(bases[0].baseline.ref_timing.reps, 31);
  EXPECT_EQ(bases[0].baseline.note, "baseline: pass");
  EXPECT_EQ(bases[0].baseline.source, "cuBLAS");

  const auto rows = store.results(run);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, rid);
  EXPECT_EQ(rows[0].config_key, "B=64");
  EXPECT_EQ(rows[0].time_us, 142.5);
  EXPECT_EQ(store.best("gelu").size(), 1u);
}

TEST_F(kb, GpuIdentityIsNameUuidKindAndFactsUpdate) {
  auto store = KnowledgeBase::open(file());
  const int64_t a = store.gpu_id(real_, TimeKind::measured);
  DeviceInfo upgraded = real_;
  upgraded.driver_version = 13010;
  upgraded.measured.reset();
  EXPECT_EQ(store.gpu_id(upgraded, TimeKind::measured), a);
  DeviceInfo second = real_;
  second.uuid = "GPU-other";
  EXPECT_NE(store.gpu_id(second, TimeKind::measured), a);
  EXPECT_NE(store.gpu_id(model_, TimeKind::predicted), a);
  const auto gpus = store.gpus();
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].device.driver_version, 13010);
  EXPECT_FALSE(gpus[0].device.measured.has_value());
  EXPECT_EQ(gpus[2].device.uuid, "");
  EXPECT_EQ(gpus[2].kind, TimeKind::predicted);
}

// Every field of DeviceInfo's list, and every measured figure, comes back from the gpus table as it
// went in; the datasheet stores what a datasheet gives (no read bandwidth, no probe figures).
TEST_F(kb, GpuRowRoundTripsEveryField) {
  int i = 0;
  DeviceInfo d = test::distinct<DeviceInfo>(i);
  d.datasheet.source = "datasheet";
  d.datasheet.read_bw = d.datasheet.tensor_16_probe = d.datasheet.tensor_8_probe = 0;
  d.measured = test::distinct<Ceilings>(i);
  d.measured->source = "measured";
  auto store = KnowledgeBase::open(file());
  store.gpu_id(d, TimeKind::predicted);
  const auto gpus = store.gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].kind, TimeKind::predicted);
  test::expect_fields_equal(gpus[0].device, d, "device");
  ASSERT_TRUE(gpus[0].device.measured.has_value());
  test::expect_fields_equal(*gpus[0].device.measured, *d.measured, "measured");
  EXPECT_FALSE(gpus[0].first_seen_at.empty());
}

// Every field a baseline stores comes back as it went in, the task's identity beside it; what is
// the run's own (replayed, skipped) is not stored.
TEST_F(kb, BaselineRoundTripsEveryStoredField) {
  int i = 0;
  TaskBaseline b = test::distinct<TaskBaseline>(i);
  b.skipped.clear();
  b.kind = TimeKind::predicted;
  const Task t = task("scalar", DType::bf16, 4096);
  auto store = KnowledgeBase::open(file());
  const int64_t run = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
  store.record_baseline(run, t, b);
  const auto got = store.baselines(run);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::tuple(got[0].run_id, got[0].problem, got[0].variant, got[0].dtype, got[0].shape_key),
            std::tuple(run, t.problem->name, t.variant->name, std::string("bf16"), t.shape.key()));
  test::expect_fields_equal(got[0].baseline, b, "baseline");
  EXPECT_EQ(got[0].baseline.kind, TimeKind::predicted);
  EXPECT_FALSE(got[0].created_at.empty());
}

TEST_F(kb, TextFileIsRefusedAndUnchanged) {
  const std::string text = "this is a text file, not a knowledge base\n";
  std::ofstream(file(), std::ios::binary) << text;
  expect_refused(file(), "not an SQLite file");
  EXPECT_EQ(slurp(file()), text);
  EXPECT_FALSE(fs::exists(file().string() + "-wal"));
}

TEST_F(kb, OtherApplicationsSqliteIsRefusedAndUnchanged) {
  raw_exec(file(), "PRAGMA application_id = 1234; CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
                   "INSERT INTO notes (body) VALUES ('hello');");
  const std::string before = slurp(file());
  ASSERT_FALSE(before.empty());
  expect_refused(file(), "application_id 0x000004d2");
  EXPECT_EQ(slurp(file()), before);

  // No application_id at all, but tables: still someone else's.
  const auto plain = file("plain.sqlite");
  raw_exec(plain, "CREATE TABLE results (x INTEGER);");
  const std::string plain_before = slurp(plain);
  expect_refused(plain, "other application");
  EXPECT_EQ(slurp(plain), plain_before);
  EXPECT_EQ(raw_query(plain, "PRAGMA journal_mode"), "delete");
}

TEST_F(kb, DamagedFileIsRefusedBeforeAnyWrite) {
  {
    auto store = KnowledgeBase::open(file());
    const int64_t run = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
    const Task t = task("scalar", DType::f32, 1024);
    for (int i = 0; i < 400; ++i) store.record(run, t, "h", result("B=" + std::to_string(i), 10.0 + i), {});
  }
  // Overwrite a page in the middle of the file (not the header): SQLite still opens it.
  std::string bytes = slurp(file());
  ASSERT_GT(bytes.size(), 5u * 4096);
  for (size_t i = 3 * 4096; i < 4 * 4096; ++i) bytes[i] = static_cast<char>(0x55);
  std::ofstream(file(), std::ios::binary | std::ios::trunc) << bytes;
  expect_refused(file(), "damaged");
  EXPECT_EQ(slurp(file()), bytes);
}

TEST_F(kb, NewerSchemaIsRefusedAndUnchanged) {
  { auto store = KnowledgeBase::open(file()); }
  raw_exec(file(), "PRAGMA user_version = 99");
  const std::string before = slurp(file());
  expect_refused(file(), "schema version 99");
  EXPECT_EQ(slurp(file()), before);
  EXPECT_EQ(raw_query(file(), "PRAGMA user_version"), "99");
}

TEST_F(kb, TwoConnectionsRecordAlternately) {
  auto a = KnowledgeBase::open(file());
  auto b = KnowledgeBase::open(file());
  const int64_t ga = a.gpu_id(real_, TimeKind::measured);
  EXPECT_EQ(b.gpu_id(real_, TimeKind::measured), ga);
  const int64_t ra = a.begin_run(run_info(), ga);
  const int64_t rb = b.begin_run(run_info(), ga);
  const Task t = task("scalar", DType::f32, 1024);
  for (int i = 0; i < 20; ++i) {
    a.record(ra, t, "h", result("A=" + std::to_string(i), 100 - i), {});
    b.record(rb, t, "h", result("B=" + std::to_string(i), 50 + i), {});
    // Each sees the other's commits at once.
    EXPECT_EQ(a.results(rb).size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(b.results(ra).size(), static_cast<size_t>(i + 1));
  }
  EXPECT_EQ(a.evaluated_keys(ga, t, "h").size(), 40u);
  const auto best = b.best("gelu");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_key, "B=0");
  a.finish_run(ra, "finished");
  b.finish_run(rb, "failed");
  const auto runs = a.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_EQ(runs[1].status, "failed");
}

TEST_F(kb, ConcurrentWritersLoseNothing) {
  // The file does not exist yet: the writers also race to create it.
  constexpr int kWriters = 4, kEach = 50;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kWriters);
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      try {
        auto store = KnowledgeBase::open(file());  // one connection per writer, as separate processes would
        const int64_t run = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
        for (int i = 0; i < kEach; ++i)
          store.record(run, task("scalar", DType::f32, 1024), "h",
                    result("W=" + std::to_string(w) + ",I=" + std::to_string(i), 1 + i), {});
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(w)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  auto store = KnowledgeBase::open(file());
  ASSERT_EQ(store.gpus().size(), 1u);
  EXPECT_EQ(store.evaluated_keys(store.gpus()[0].id, task("scalar", DType::f32, 1024), "h").size(),
            static_cast<size_t>(kWriters * kEach));
}

TEST_F(kb, EvaluatedKeysAreThoseOfTheTaskSourceAndGpu) {
  auto store = KnowledgeBase::open(file());
  const int64_t g1 = store.gpu_id(real_, TimeKind::measured);
  DeviceInfo other = real_;
  other.uuid = "GPU-other";
  const int64_t g2 = store.gpu_id(other, TimeKind::measured);
  const int64_t r1 = store.begin_run(run_info(), g1);
  const int64_t r2 = store.begin_run(run_info(), g1);
  const int64_t r3 = store.begin_run(run_info(), g2);
  const Task t = task("scalar", DType::f32, 1024);

  store.record(r1, t, "h1", result("B=1", 10), {});
  store.record(r1, t, "h1", result("B=2", 0, Status::compile_error), {});  // failures count as tried
  store.record(r2, t, "h1", result("B=3", 12), {});                        // another run, same GPU
  store.record(r2, t, "h1", result("B=1", 11), {});                        // a repeat
  store.record(r1, t, "h2", result("B=4", 10), {});                        // another source
  store.record(r1, task("vectorized", DType::f32, 1024), "h1", result("B=5", 10), {});
  store.record(r1, task("scalar", DType::f16, 1024), "h1", result("B=6", 10), {});
  store.record(r1, task("scalar", DType::f32, 2048), "h1", result("B=7", 10), {});
  store.record(r1, task("scalar", DType::f32, 1024, &other_), "h1", result("B=8", 10), {});
  store.record(r3, t, "h1", result("B=9", 10), {});  // another GPU

  EXPECT_EQ(store.evaluated_keys(g1, t, "h1"), (std::set<std::string>{"B=1", "B=2", "B=3"}));
  EXPECT_EQ(store.evaluated_keys(g1, t, "h2"), (std::set<std::string>{"B=4"}));
  EXPECT_EQ(store.evaluated_keys(g2, t, "h1"), (std::set<std::string>{"B=9"}));
  EXPECT_TRUE(store.evaluated_keys(g1, t, "h3").empty());
}

TEST_F(kb, SeedsComeFromOtherShapesAndFromEarlierVersionsOfTheTemplate) {
  auto store = KnowledgeBase::open(file());
  const int64_t g = store.gpu_id(real_, TimeKind::measured);
  DeviceInfo other = real_;
  other.uuid = "GPU-other";
  other.name = "Other GPU";
  const int64_t r1 = store.begin_run(run_info(), g);
  const int64_t r2 = store.begin_run(run_info(), store.gpu_id(other, TimeKind::measured));
  const Task t = task("scalar", DType::f32, 1024);
  store.record(r1, t, "h1", result("B=1", 10), {});                         // this shape, this text: measured
  store.record(r1, t, "h0", result("B=2", 9), {});                          // this shape, an earlier text
  store.record(r1, t, "h0", result("B=3", 12), {});                         // not its version's best
  store.record(r1, task("scalar", DType::f32, 4096), "h1", result("B=4", 20), {});
  store.record(r1, task("scalar", DType::f32, 4096), "h0", result("B=5", 19), {});
  store.record(r1, task("scalar", DType::f32, 1 << 20), "h1", result("B=6", 30), {});
  store.record(r1, task("scalar", DType::f32, 2048), "h1", result("B=7", 0, Status::wrong_answer), {});
  store.record(r1, task("scalar", DType::f16, 1024), "h1", result("B=8", 5), {});   // another dtype
  store.record(r2, t, "h1", result("B=9", 4), {});                                   // another GPU
  auto keys = [&](size_t limit) {
    std::vector<std::string> out;
    for (const auto& r : store.seeds(t, real_.name, "h1", -1, limit)) out.push_back(r.config_key);
    return out;
  };
  // Own GPU first: the earlier text at this shape, then by distance of shape, this text first.
  EXPECT_EQ(keys(10), (std::vector<std::string>{"B=2", "B=4", "B=5", "B=6", "B=9"}));
  EXPECT_EQ(keys(2), (std::vector<std::string>{"B=2", "B=4"}));
  // A run's own results are not seeds for it.
  EXPECT_TRUE(store.seeds(t, real_.name, "h1", r1, 10).size() == 1u);
}

TEST_F(kb, SeedsIncludeThisShapeAsTimedAnotherWay) {
  // This shape's own results from a run of another backend (an older soltune's timing, a config's
  // timing:) are not known to this backend's search: its three fastest come first, once each.
  auto store = KnowledgeBase::open(file());
  const int64_t g = store.gpu_id(real_, TimeKind::measured);
  auto old_timing = run_info();
  old_timing.backend = "cuda (timing: soltune 0.1, input sets rotated, evict_last lines kept)";
  const int64_t r_old = store.begin_run(old_timing, g);
  const int64_t r_new = store.begin_run(run_info(), g);
  const Task t = task("scalar", DType::f32, 1024);
  for (int i = 1; i <= 5; ++i) store.record(r_old, t, "h1", result("B=" + std::to_string(i), 10 + i), {});
  store.record(r_new, t, "h1", result("B=9", 30), {});  // this backend: known to the search, not a seed
  store.record(r_old, task("scalar", DType::f32, 4096), "h1", result("B=2", 20), {});  // B=2 again, another shape
  auto keys = [&](const std::string& backend) {
    std::vector<std::string> out;
    for (const auto& r : store.seeds(t, real_.name, "h1", -1, 10, backend)) out.push_back(r.config_key);
    return out;
  };
  EXPECT_EQ(keys("cuda"), (std::vector<std::string>{"B=1", "B=2", "B=3"}));
  // Without a backend, as before: other shapes only (this shape's own best is this text's).
  EXPECT_EQ(keys(""), (std::vector<std::string>{"B=2"}));
  // The old timing's own search knows them all: nothing of this shape.
  EXPECT_EQ(keys(old_timing.backend), (std::vector<std::string>{"B=9", "B=2"}));
}

TEST_F(kb, KnobValuesElsewhereAreTheEarlierTextsValues) {
  auto store = KnowledgeBase::open(file());
  const int64_t g = store.gpu_id(real_, TimeKind::measured);
  const int64_t r = store.begin_run(run_info(), g);
  const Task t = task("scalar", DType::f32, 1024);
  store.record(r, t, "h0", result("B=8,H=0", 10), {});
  store.record(r, task("scalar", DType::f16, 4096), "h0", result("B=16,H=1", 0, Status::compile_error), {});
  store.record(r, t, "h1", result("B=32,H=2", 9), {});  // this text: not an earlier one's value
  store.record(r, task("vectorized", DType::f32, 1024), "h0", result("B=64,H=3", 9), {});  // another variant
  store.record(r, t, "h0", result("B=x7,H=4", 9), {});  // not an integer: skipped, the rest kept
  const std::map<std::string, std::set<int64_t>> want{{"B", {8, 16}}, {"H", {0, 1, 4}}};
  EXPECT_EQ(store.knob_values_elsewhere(t, "h1"), want);
  EXPECT_TRUE(store.knob_values_elsewhere(task("scalar", DType::f32, 1024, &other_), "h1").empty());
}

TEST_F(kb, EvaluatedKeysFollowTheToolchain) {
  auto store = KnowledgeBase::open(file());
  const int64_t g = store.gpu_id(real_, TimeKind::measured);
  auto old_tools = run_info(), new_tools = run_info();
  old_tools.toolchain = "nvrtc 12.8, driver 12.8, runtime 12.8";
  new_tools.toolchain = "nvrtc 13.0, driver 13.0, runtime 13.0";
  const Task t = task("scalar", DType::f32, 1024);
  store.record(store.begin_run(old_tools, g), t, "h1", result("B=1", 10), {});
  const int64_t now = store.begin_run(new_tools, g);
  store.record(now, t, "h1", result("B=2", 10), {});
  // A result measured under another toolchain does not stand for this one: it is tried again.
  EXPECT_EQ(store.evaluated_keys(g, t, "h1", new_tools.toolchain), (std::set<std::string>{"B=2"}));
  EXPECT_EQ(store.evaluated_keys(g, t, "h1", old_tools.toolchain), (std::set<std::string>{"B=1"}));
  EXPECT_EQ(store.evaluated_keys(g, t, "h1"), (std::set<std::string>{"B=1", "B=2"}));
  EXPECT_EQ(store.runs().back().info.toolchain, new_tools.toolchain);
}

// A run timed another way (the config's timing:) names it in its backend: its results neither stand
// for soltune's own measurements nor are ever picked.
TEST_F(kb, RunsTimedAnotherWayStandApart) {
  auto store = KnowledgeBase::open(file());
  const int64_t g = store.gpu_id(real_, TimeKind::measured);
  auto other = run_info();
  other.backend = "cuda (timing: gate off, settle 100 us)";
  const Task t = task("scalar", DType::f32, 1024);
  store.record(store.begin_run(run_info(), g), t, "h1", result("B=1", 10), {});
  store.record(store.begin_run(other, g), t, "h1", result("B=2", 5), {});
  EXPECT_EQ(store.evaluated_keys(g, t, "h1", "", "cuda"), (std::set<std::string>{"B=1"}));
  EXPECT_EQ(store.evaluated_keys(g, t, "h1", "", other.backend), (std::set<std::string>{"B=2"}));
  EXPECT_EQ(store.evaluated_keys(g, t, "h1"), (std::set<std::string>{"B=1", "B=2"}));
  const auto best = store.best("gelu");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_key, "B=1") << "the faster B=2 was timed another way";
}

TEST_F(kb, SourcesAreStoredOnceByHash) {
  auto store = KnowledgeBase::open(file());
  store.store_source("h", "text one");
  EXPECT_NO_THROW(store.store_source("h", "text one"));
  EXPECT_THROW(store.store_source("h", "text two"), Error);
  EXPECT_EQ(store.source("h"), "text one");
  EXPECT_EQ(store.source("x"), std::nullopt);
}

TEST_F(kb, BadReferencesThrow) {
  auto store = KnowledgeBase::open(file());
  const Task t = task("scalar", DType::f32, 1024);
  EXPECT_THROW(store.begin_run(run_info(), 77), Error);
  const int64_t run = store.begin_run(run_info(), store.gpu_id(real_, TimeKind::measured));
  EXPECT_THROW(store.record(run + 1, t, "h", result("B=1", 1), {}), Error);
  EXPECT_THROW(store.record_baseline(run + 1, t, {}), Error);
  EXPECT_THROW(store.record(run, t, "h", result("", 1), {}), Error);  // no key
  EXPECT_THROW(store.finish_run(run, "done"), Error);
  EXPECT_THROW(store.finish_run(run + 1, "finished"), Error);
  EXPECT_TRUE(store.results(run).empty());  // nothing half-written by the failures
  EXPECT_EQ(store.runs().at(0).status, "running");
}

}  // namespace
