// JSON export and import of a knowledge base: every row and column survives the trip, importing
// merges without duplicates, and a bad document changes nothing.
#include "kb/exchange.hpp"

#include <gtest/gtest.h>

#include "kb_fixture.hpp"
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "kb/knowledge_base.hpp"

namespace {
using namespace soltune;
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string slurp(const fs::path& p) { return soltune::test::read_file(p); }

void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

using soltune::test::raw_exec;

// Every table of a file, read through SQLite itself, as sorted rows of "column=value" text: every
// column but the ids, with each reference replaced by the identity of the row it points at, so
// two files compare equal whatever ids an import assigned. Reals are printed exactly (%a).
using Dump = std::map<std::string, std::vector<std::string>>;

Dump dump(const fs::path& p) {
  static const char* const kGpu = "g.name || '/' || g.uuid || '/' || g.kind";
  static const std::string kRun = std::string("r.started_at || '/' || r.config_path || '/' || r.problem || '/' || ") +
                                  "r.seed || '/' || " + kGpu;
  const std::vector<std::pair<std::string, std::string>> queries = {
      {"gpus", "SELECT * FROM gpus"},
      {"runs", std::string("SELECT r.*, ") + kGpu + " AS gpu_ref FROM runs r JOIN gpus g ON g.id = r.gpu_id"},
      {"sources", "SELECT * FROM sources"},
      {"baselines", "SELECT b.*, " + kRun +
                        " AS run_ref FROM baselines b JOIN runs r ON r.id = b.run_id JOIN gpus g ON g.id = r.gpu_id"},
      {"results", "SELECT x.*, " + kRun + " AS run_ref, x2.name || '/' || x2.uuid || '/' || x2.kind AS gpu_ref " +
                      "FROM results x JOIN runs r ON r.id = x.run_id JOIN gpus g ON g.id = r.gpu_id " +
                      "JOIN gpus x2 ON x2.id = x.gpu_id"},
      {"audits", "SELECT a.*, " + std::string(kGpu) + " AS gpu_ref FROM audits a JOIN gpus g ON g.id = a.gpu_id"},
  };
  Dump out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  for (const auto& [table, sql] : queries) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    auto& rows = out[table];
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string row;
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        const std::string name = sqlite3_column_name(st, i);
        if (name == "id" || name == "run_id" || name == "gpu_id") continue;
        row += name + "=";
        char buf[64];
        switch (sqlite3_column_type(st, i)) {
          case SQLITE_NULL: row += "NULL"; break;
          case SQLITE_INTEGER: row += "i" + std::to_string(sqlite3_column_int64(st, i)); break;
          case SQLITE_FLOAT:
            std::snprintf(buf, sizeof buf, "r%a", sqlite3_column_double(st, i));
            row += buf;
            break;
          default:
            row += "'" + std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, i)),
                                     static_cast<size_t>(sqlite3_column_bytes(st, i))) + "'";
        }
        row += "; ";
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    std::sort(rows.begin(), rows.end());
  }
  sqlite3_close(db);
  return out;
}

// The size of a file's write-ahead log (a read-only connection may leave an empty one behind).
uintmax_t wal_bytes(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p.string() + "-wal", ec);
  return ec ? 0 : n;
}

size_t rows(const Dump& d) {
  size_t n = 0;
  for (const auto& [t, r] : d) n += r.size();
  return n;
}

// Named `kb_exchange` so that `ctest -R kb` selects these tests.
class kb_exchange : public soltune::test::KbFixture {
 protected:
  kb_exchange() : KbFixture("soltune_exchange_test_") {}

  fs::path file(const std::string& name) const { return dir_ / name; }

  static RunInfo run_info(const std::string& config) {
    RunInfo r;
    r.config_path = config;
    r.problem = "gelu";
    r.seed = 0xfedcba9876543210ULL;  // above INT64_MAX: the bits must survive JSON
    r.backend = "cuda";
    r.budget_text = "evals=100";
    r.soltune_version = "0.1.0";
    r.command_line = "soltune tune " + config + " --kb \"x y.sqlite\"";
    return r;
  }

  static EvalResult result(const std::string& key, double us, Status st = Status::ok,
                           TimeKind kind = TimeKind::measured) {
    EvalResult r = untimed_result(key, st, kind);
    r.time = {us, us * 0.9, us * 0.95, us * 1.05, us * 1.5, 17};
    return r;
  }

  // Two runs: a measured one on a real GPU (finished) and a predicted one on the model (interrupted).
  // Their rows cover every kind of value: NaN (NULL), an infinite SOL score, a seed above
  // INT64_MAX, multi-line and non-ASCII text, and one configuration recorded twice.
  void build(const fs::path& p) const {
    auto kb = KnowledgeBase::open(p);
    const int64_t g1 = kb.gpu_id(real_, TimeKind::measured);
    const int64_t g2 = kb.gpu_id(model_, TimeKind::predicted);
    kb.store_source("hash-1", "template <int B> __global__ void k() {}\n// µs, \"quoted\"\ttab\n");
    kb.store_source("hash-2", "template <int V> __global__ void v() {}\n");
    const int64_t r1 = kb.begin_run(run_info("configs/gelu.yaml"), g1);
    const Task t1 = task("scalar", DType::f32, 1 << 20);
    TaskBaseline base;
    base.t_ref_us = 250.5;
    base.t_sol_us = 100.25;
    base.flops = 1e9;
    base.bytes = 2e9;
    base.ref_timing = {250.5, 240, 245, 255, 270, 31};
    base.note = "baseline: pass";
    kb.record_baseline(r1, t1, base);

    EvalResult ok = result("BLOCK=256,VEC=4", 123.25);
    ok.log = "first line\nsecond line: 3 µs";
    ok.res = {40, 8, 12, 16, 4096, 368, true, {}};
    ok.geo.grid = {1024, 2, 3};
    ok.geo.block = {256, 1, 4};
    ok.geo.smem = 49152;
    ok.acc = {.checked = 1000000, .out_of_bounds = 5, .written_input = "", .max_abs_err = 0.25, .max_rel_err = 1e-7, .rel_l2 = 1.0 / 3.0,
              .rounds = 2, .precision_ok = false, .pass = true, .detail = ""};
    ok.compile_ms = 812.5;
    ok.cache_hit = true;
    ok.occupancy_blocks = 6;
    kb.record(r1, t1, "hash-1", ok, {123.25, 250.5, 100.25, 0.7312, 0.9, false, true});
    EvalResult wrong = result("BLOCK=128,VEC=1", 99, Status::wrong_answer);
    wrong.acc.max_rel_err = std::nan("");
    kb.record(r1, t1, "hash-1", wrong, {99, 250.5, 100.25, std::numeric_limits<double>::infinity(), 0, true, false});
    EvalResult broken = result("BLOCK=64,VEC=8", 0, Status::compile_error);
    broken.log = "error: static assertion failed";
    kb.record(r1, t1, "hash-1", broken, {});
    kb.record(r1, t1, "hash-1", ok, {123.25, 250.5, 100.25, 0.7312, 0.9, false, true});  // recorded twice
    kb.finish_run(r1, "finished");
    kb.record_audit(kb.results(r1).at(0), "hash-1", "nvrtc 13.0",
                    {{"memcheck", AuditVerdict::passed, 0, ""}, {"racecheck", AuditVerdict::failed, 2, "Race reported\nbetween"}});

    const int64_t r2 = kb.begin_run(run_info("configs/gelu-model.yaml"), g2);
    const Task t2 = task("vectorized", DType::bf16, 1000003);
    TaskBaseline pbase = base;
    pbase.kind = TimeKind::predicted;
    pbase.note = "predicted";
    kb.record_baseline(r2, t2, pbase);
    kb.record(r2, t2, "hash-2", result("VEC=8", 4.05, Status::ok, TimeKind::predicted),
              {4.05, 51.87, 0.83, 0.809, 0.941, true, false});
    kb.record(r2, t2, "hash-2", result("VEC=2", 7.5, Status::ok, TimeKind::predicted), {});
    kb.finish_run(r2, "interrupted");
  }
};

TEST_F(kb_exchange, RoundTripKeepsEveryRowAndImportingTwiceAddsNothing) {
  const auto a = file("a.sqlite"), b = file("sub/b.sqlite"), doc = file("a.json");
  build(a);
  {
    auto kb = KnowledgeBase::open(a);
    kb::export_json_file(kb, doc);
  }
  EXPECT_FALSE(fs::exists(file("a.json.tmp." + std::to_string(getpid()))));
  const json j = json::parse(slurp(doc));
  EXPECT_EQ(j["format"], "soltune-kb");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["sources"].size(), 2u);
  EXPECT_EQ(j["baselines"].size(), 2u);
  EXPECT_EQ(j["results"].size(), 6u);
  EXPECT_EQ(j["audits"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["seed"], static_cast<int64_t>(0xfedcba9876543210ULL));

  ASSERT_FALSE(fs::exists(b));
  auto s = kb::import_json_file(doc, b);
  EXPECT_TRUE(s.created);
  EXPECT_EQ(s.gpus.added, 2);
  EXPECT_EQ(s.runs.added, 2);
  EXPECT_EQ(s.sources.added, 2);
  EXPECT_EQ(s.baselines.added, 2);
  EXPECT_EQ(s.results.added, 6);  // the result recorded twice is there twice
  EXPECT_EQ(s.results.present, 0);
  EXPECT_EQ(s.audits.added, 2);

  const Dump da = dump(a);
  EXPECT_EQ(rows(da), 16u);
  EXPECT_EQ(dump(b), da);

  // Through the API as well: the values a query returns, NaN and infinity included.
  {
    auto kb = KnowledgeBase::open(b);
    const auto runs = kb.runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].info.seed, 0xfedcba9876543210ULL);
    EXPECT_EQ(runs[0].status, "finished");
    EXPECT_EQ(runs[1].status, "interrupted");
    const auto rs = kb.results(runs[0].id);
    ASSERT_EQ(rs.size(), 4u);
    EXPECT_EQ(rs[0].time_kind, "measured");
    EXPECT_EQ(rs[0].log, "first line\nsecond line: 3 µs");
    EXPECT_EQ(rs[0].acc.rel_l2, 1.0 / 3.0);
    EXPECT_FALSE(rs[0].acc.precision_ok);
    EXPECT_EQ(rs[0].acc.out_of_bounds, 5);
    EXPECT_TRUE(std::isnan(rs[1].acc.max_rel_err));
    EXPECT_TRUE(std::isinf(rs[1].sol_score));
    const auto best = kb.best("gelu");
    ASSERT_EQ(best.size(), 2u);
    EXPECT_EQ(best[0].time_kind, "measured");
    EXPECT_EQ(best[1].time_kind, "predicted");
    EXPECT_EQ(best[1].config_key, "VEC=8");
    EXPECT_EQ(kb.source("hash-1"), "template <int B> __global__ void k() {}\n// µs, \"quoted\"\ttab\n");
    // An export of the copy is the same document (the ids of a fresh target are the same too).
    json jb = json::parse(kb::export_json(kb));
    json ja = j;
    for (auto* x : {&ja, &jb}) x->erase("exported_at"), x->erase("source");
    EXPECT_EQ(ja, jb);
  }

  s = kb::import_json_file(doc, b);
  EXPECT_FALSE(s.created);
  for (const auto* t : {&s.gpus, &s.runs, &s.sources, &s.baselines, &s.results, &s.audits}) {
    EXPECT_EQ(t->added, 0);
    EXPECT_EQ(t->updated, 0);
    EXPECT_EQ(t->present, t->in_file);
  }
  EXPECT_EQ(dump(b), da);
}

TEST_F(kb_exchange, ImportAddsOnlyWhatTheTargetLacks) {
  const auto a = file("a.sqlite"), c = file("c.sqlite"), doc = file("a.json");
  build(a);
  {
    auto kb = KnowledgeBase::open(a);
    kb::export_json_file(kb, doc);
  }
  // c: a copy of a without the second run, its GPU and its source, plus a run of its own.
  fs::copy_file(a, c);
  raw_exec(c,
           "DELETE FROM results WHERE run_id = 2; DELETE FROM baselines WHERE run_id = 2; DELETE FROM runs WHERE id = 2;"
           "DELETE FROM gpus WHERE id = 2; DELETE FROM sources WHERE hash = 'hash-2';");
  {
    auto kb = KnowledgeBase::open(c);
    const int64_t run = kb.begin_run(run_info("configs/local.yaml"), kb.gpus().at(0).id);
    kb.record(run, task("scalar", DType::f16, 4096), "hash-1", result("BLOCK=32,VEC=1", 3), {});
  }
  const Dump before = dump(c), da = dump(a);
  ASSERT_EQ(rows(before), 10u + 2u);  // the two audits of run 1's result included

  const auto s = kb::import_json_file(doc, c);
  EXPECT_FALSE(s.created);
  EXPECT_EQ(s.gpus.added, 1);
  EXPECT_EQ(s.gpus.present, 1);
  EXPECT_EQ(s.runs.added, 1);
  EXPECT_EQ(s.runs.present, 1);
  EXPECT_EQ(s.sources.added, 1);
  EXPECT_EQ(s.sources.present, 1);
  EXPECT_EQ(s.baselines.added, 1);
  EXPECT_EQ(s.baselines.present, 1);
  EXPECT_EQ(s.results.added, 2);
  EXPECT_EQ(s.results.present, 4);
  EXPECT_EQ(s.audits.present, 2);

  // Now c holds everything a holds, plus its own run: nothing twice, nothing lost.
  Dump want;
  for (const auto& [t, ra] : da) {
    const auto& rb = before.at(t);
    std::vector<std::string> own;
    std::set_difference(rb.begin(), rb.end(), ra.begin(), ra.end(), std::back_inserter(own));
    std::merge(ra.begin(), ra.end(), own.begin(), own.end(), std::back_inserter(want[t]));
  }
  EXPECT_EQ(rows(want), 16u + 2u);
  EXPECT_EQ(dump(c), want);
  EXPECT_EQ(KnowledgeBase::open(c).runs().size(), 3u);
}

TEST_F(kb_exchange, LaterExportUpdatesRunStatusAndGpuFacts) {
  const auto a = file("a.sqlite"), d = file("d.sqlite"), doc = file("a.json");
  auto kb = KnowledgeBase::open(a);
  const int64_t run = kb.begin_run(run_info("configs/gelu.yaml"), kb.gpu_id(real_, TimeKind::measured));
  kb.record(run, task("scalar", DType::f32, 1024), "h", result("B=1", 10), {});
  kb::export_json_file(kb, doc);  // mid-run
  EXPECT_EQ(kb::import_json_file(doc, d).runs.added, 1);
  EXPECT_EQ(KnowledgeBase::open(d).runs().at(0).status, "running");

  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a later last_seen_at
  DeviceInfo upgraded = real_;
  upgraded.driver_version = 13010;
  upgraded.measured = Ceilings{4.27e12, 6e13, 9.9e14, "measured", 4.45e12};
  kb.gpu_id(upgraded, TimeKind::measured);
  kb.record(run, task("scalar", DType::f32, 1024), "h", result("B=2", 9), {});
  kb.finish_run(run, "finished");
  kb::export_json_file(kb, doc);
  const auto s = kb::import_json_file(doc, d);
  EXPECT_EQ(s.runs.present, 1);
  EXPECT_EQ(s.runs.updated, 1);
  EXPECT_EQ(s.gpus.updated, 1);
  EXPECT_EQ(s.results.added, 1);
  EXPECT_EQ(s.results.present, 1);
  EXPECT_EQ(dump(d), dump(a));
  const auto target = KnowledgeBase::open(d);
  EXPECT_EQ(target.runs().at(0).status, "finished");
  EXPECT_EQ(target.gpus().at(0).device.driver_version, 13010);
  ASSERT_TRUE(target.gpus().at(0).device.measured.has_value());
  EXPECT_DOUBLE_EQ(target.gpus().at(0).device.measured->read_bw, 4.45e12);
}

TEST_F(kb_exchange, DocumentWithoutDefaultedColumnsImports) {
  // An export of an older schema lacks the columns added since; they take their defaults.
  const auto a = file("a.sqlite"), b = file("b.sqlite");
  build(a);
  json j = json::parse(kb::export_json(KnowledgeBase::open(a)));
  for (auto& r : j["results"]) r.erase("acc_out_of_bounds"), r.erase("acc_precision_ok");
  j.erase("audits");  // older schemas have no audits table
  kb::import_json(j.dump(), "old.json", b);
  const auto results = KnowledgeBase::open(b).results(1);
  EXPECT_EQ(results.size(), 4u);
  EXPECT_TRUE(KnowledgeBase::open(b).audits(results[0]).empty());
  for (const auto& r : results) {
    EXPECT_EQ(r.acc.out_of_bounds, 0);
    EXPECT_TRUE(r.acc.precision_ok);
  }
}

TEST_F(kb_exchange, OlderExportsCudaRunsArriveAsTimedAnotherWay) {
  // Before schema 6 soltune rotated input sets while timing: an older export's "cuda" runs are
  // relabelled on the way in, as the migration relabels a file's, and never become a pick.
  const auto a = file("a.sqlite"), b = file("b.sqlite"), c = file("c.sqlite");
  build(a);
  json j = json::parse(kb::export_json(KnowledgeBase::open(a)));
  json old = j;
  old["schema_version"] = 5;
  kb::import_json(old.dump(), "old.json", b);
  auto from_old = KnowledgeBase::open(b);
  ASSERT_EQ(from_old.runs().size(), 2u);
  for (const auto& r : from_old.runs()) EXPECT_EQ(r.info.backend, "cuda (timing: soltune 0.1, input sets rotated, evict_last lines kept)");
  EXPECT_TRUE(from_old.best("gelu").empty());
  // The current schema's export keeps its label.
  kb::import_json(j.dump(), "new.json", c);
  for (const auto& r : KnowledgeBase::open(c).runs()) EXPECT_EQ(r.info.backend, "cuda");
  EXPECT_FALSE(KnowledgeBase::open(c).best("gelu").empty());
}

TEST_F(kb_exchange, MalformedOrForeignDocumentIsRefusedAndTargetUnchanged) {
  const auto a = file("a.sqlite"), target = file("target.sqlite"), missing = file("missing.sqlite");
  build(a);
  const std::string text = kb::export_json(KnowledgeBase::open(a));
  {
    auto kb = KnowledgeBase::open(target);
    const int64_t run = kb.begin_run(run_info("configs/t.yaml"), kb.gpu_id(model_, TimeKind::predicted));
    kb.record(run, task("scalar", DType::f32, 1024), "h", result("B=1", 10, Status::ok, TimeKind::predicted), {});
  }
  const std::string bytes = slurp(target);
  const Dump rows_before = dump(target);
  ASSERT_FALSE(bytes.empty());

  json wrong_tag = json::parse(text);
  wrong_tag["format"] = "other-tool";
  json newer = json::parse(text);
  newer["version"] = 2;
  json unknown_col = json::parse(text);
  unknown_col["results"][0]["frobs"] = 3;
  json wrong_type = json::parse(text);
  wrong_type["results"][1]["time_us"] = "fast";
  json dangling = json::parse(text);
  dangling["results"][2]["run_id"] = 99;
  json no_results = json::parse(text);
  no_results.erase("results");
  json no_key = json::parse(text);
  no_key["results"][0].erase("created_at");
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"truncated.json", text.substr(0, text.size() / 2), "malformed JSON"},
      {"empty.json", "", "malformed JSON"},
      {"wrong_tag.json", wrong_tag.dump(), "\"format\" is \"other-tool\""},
      {"array.json", "[1, 2, 3]", "not a soltune knowledge base export"},
      {"other.json", R"({"name": "package.json, say"})", "no \"format\""},
      {"newer.json", newer.dump(), "newer"},
      {"unknown_col.json", unknown_col.dump(), "results[0]: unknown column \"frobs\""},
      {"wrong_type.json", wrong_type.dump(), "results[1]: column \"time_us\""},
      {"dangling.json", dangling.dump(), "results[2]: column \"run_id\" is 99"},
      {"no_results.json", no_results.dump(), "expected an array \"results\""},
      {"no_key.json", no_key.dump(), "results[0]: missing column \"created_at\""},
  };
  for (const auto& [name, content, reason] : cases) {
    SCOPED_TRACE(name);
    const auto p = file(name);
    spit(p, content);
    try {
      kb::import_json_file(p, target);
      ADD_FAILURE() << "imported " << name;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(p.string()), std::string::npos) << what;
      EXPECT_NE(what.find(reason), std::string::npos) << what;
      if (reason == "malformed JSON" || name == "wrong_tag.json" || name == "array.json") {
        EXPECT_NE(what.find("expected a soltune knowledge base export"), std::string::npos) << what;
      }
    }
    EXPECT_EQ(slurp(target), bytes);
    EXPECT_EQ(wal_bytes(target), 0u);  // nothing committed, nothing in flight
    EXPECT_THROW(kb::import_json_file(p, missing), Error);
    EXPECT_FALSE(fs::exists(missing)) << "a refused import created its target";
  }
  EXPECT_THROW(kb::import_json_file(file("nowhere.json"), target), Error);

  // A valid document that conflicts with the target midway (a source hash with another text):
  // the whole transaction is rolled back, rows added before the conflict included.
  {
    auto kb = KnowledgeBase::open(target);
    kb.store_source("hash-2", "a different text under the same hash");
  }
  const std::string bytes2 = slurp(target);
  const Dump rows2 = dump(target);
  try {
    kb::import_json(text, "conflict.json", target);
    ADD_FAILURE() << "imported a conflicting source";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hash-2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("conflict.json"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dump(target), rows2);
  EXPECT_EQ(slurp(target), bytes2);
  EXPECT_EQ(wal_bytes(target), 0u);
  EXPECT_EQ(rows(rows2), rows(rows_before) + 1);
}

TEST_F(kb_exchange, ExportToAnUnwritablePlaceFailsCleanly) {
  const auto a = file("a.sqlite");
  build(a);
  auto kb = KnowledgeBase::open(a);
  EXPECT_THROW(kb::export_json_file(kb, file("no/such/dir/a.json")), Error);
  EXPECT_FALSE(fs::exists(file("no")));
  // An existing export is replaced whole.
  spit(file("a.json"), "old");
  kb::export_json_file(kb, file("a.json"));
  EXPECT_EQ(json::parse(slurp(file("a.json")))["format"], "soltune-kb");
}

TEST_F(kb_exchange, ForeignTargetIsRefusedAndUnchanged) {
  const auto a = file("a.sqlite"), notes = file("notes.txt");
  build(a);
  const std::string text = kb::export_json(KnowledgeBase::open(a));
  spit(notes, "my notes\n");
  EXPECT_THROW(kb::import_json(text, "a.json", notes), Error);
  EXPECT_EQ(slurp(notes), "my notes\n");
}

TEST_F(kb_exchange, SummariesCountRunsProblemsAndGpus) {
  const auto a = file("a.sqlite");
  build(a);
  const auto kb = KnowledgeBase::open(a);
  const auto runs = kb::run_summaries(kb);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].gpu_name, "NVIDIA H200");
  EXPECT_EQ(runs[0].gpu_kind, "measured");
  EXPECT_EQ(runs[0].results, 4);
  EXPECT_EQ(runs[0].by_status, (std::map<std::string, int64_t>{{"compile_error", 1}, {"ok", 2}, {"wrong_answer", 1}}));
  EXPECT_EQ(runs[1].gpu_kind, "predicted");
  EXPECT_EQ(runs[1].results, 2);
  const auto problems = kb::problem_summaries(kb);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].problem, "gelu");
  EXPECT_EQ(problems[0].runs, 2);
  EXPECT_EQ(problems[0].results, 6);
  EXPECT_EQ(problems[0].ok, 4);
  EXPECT_EQ(problems[0].gpus, (std::vector<std::string>{"NVIDIA H200"}));
  const auto gpus = kb::gpu_summaries(kb);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].runs, 1);
  EXPECT_EQ(gpus[0].results, 4);
  EXPECT_EQ(gpus[1].results, 2);
}

}  // namespace
