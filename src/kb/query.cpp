// Reading a knowledge base back: best results, a run's results, what a task has tried, and the
// runs, GPUs and baselines behind them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/run_config.hpp"
#include "core/sol.hpp"
#include "kb/kb_impl.hpp"
#include "kb/result_columns.hpp"
#include "kb/table_columns.hpp"

namespace soltune {

namespace {

// The order "fastest" means among a group's results: measurements before predictions; then re-timed
// results, by their time over the T_ref re-timed beside them (a run's search times are taken minutes
// apart, under an SM clock that power may lower by a quarter: only the end's interleaved re-timing
// compares kernels fairly, and across runs as ratios); then the search's times. Ties go to the
// earlier result, so the answer does not change as equal results accumulate.
const std::string kFastestFirst =
    "r.time_kind = 'measured' DESC, r.retimed DESC, "
    "CASE WHEN r.retimed AND r.t_ref_us > 0 THEN r.time_us / r.t_ref_us ELSE r.time_us END, r.id";

ResultRecord read_result(const sqlite::Stmt& st) {
  ResultRecord r;
  for (const auto& c : kb::result_columns()) c.read(st, c.name, r);
  return r;
}

std::vector<ResultRecord> read_results(sqlite::Stmt& st) {
  std::vector<ResultRecord> out;
  while (st.step()) out.push_back(read_result(st));
  return out;
}

}  // namespace

std::vector<ResultRecord> KnowledgeBase::best(const std::string& problem, const std::string& gpu_name_filter,
                                              const std::vector<std::string>& source_hashes) const {
  // Grouped by GPU name, not row: a model device and a real one of the same name are different
  // rows (uuid, kind) but one GPU to a user, and there a measurement must beat a prediction.
  // Ties go to the earlier result, so the answer does not change as equal results accumulate.
  // Runs timed another way than soltune's (a config's timing:, backend "cuda (timing: ...)") are
  // comparisons with other harnesses, never a pick; nor is a time under its own T_SOL by more than
  // the ceilings' noise (a red flag to re-validate, never a win: core/sol.hpp).
  static const std::string kSql = R"sql(
    SELECT * FROM (
      SELECT r.*, g.name AS gpu_name,
             row_number() OVER (PARTITION BY g.name, r.variant, r.dtype, r.shape_key
                                ORDER BY )sql" + kFastestFirst + R"sql() AS pos
      FROM results r JOIN gpus g ON g.id = r.gpu_id JOIN runs u ON u.id = r.run_id
      WHERE r.problem = :problem AND r.status = 'ok' AND r.time_us IS NOT NULL
        AND substr(u.backend, 1, length(:other_timing)) != :other_timing
        AND NOT (coalesce(r.t_sol_us, 0) > 0 AND r.time_us < r.t_sol_us * (1 - :sol_noise))
        AND (:gpu = '' OR instr(lower(g.name), lower(:gpu)) > 0)
        AND (:hashes = '' OR instr(:hashes, ',' || r.source_hash || ',') > 0))
    WHERE pos = 1
    ORDER BY gpu_name, variant, dtype, shape_key)sql";
  std::string hashes;  // ",h1,h2,": hashes are hex, so a match is a whole hash
  for (const auto& h : source_hashes) hashes += (hashes.empty() ? "," : "") + h + ",";
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare(kSql);
  st.bind("problem", problem).bind("gpu", gpu_name_filter).bind("hashes", hashes);
  st.bind("other_timing", std::string(TimingOptions::kOtherTimingPrefix)).bind("sol_noise", kSolNoise);
  return read_results(st);
}

std::vector<ResultRecord> KnowledgeBase::config_results(const std::string& problem, const std::string& variant,
                                                        const std::string& dtype, const std::string& config_key,
                                                        const std::string& gpu_name_filter,
                                                        const std::string& source_hash) const {
  // The filters of best(), for one configuration; per GPU name and shape its fastest.
  static const std::string kSql = R"sql(
    SELECT * FROM (
      SELECT r.*, g.name AS gpu_name,
             row_number() OVER (PARTITION BY g.name, r.shape_key
                                ORDER BY )sql" + kFastestFirst + R"sql() AS pos
      FROM results r JOIN gpus g ON g.id = r.gpu_id JOIN runs u ON u.id = r.run_id
      WHERE r.problem = :problem AND r.variant = :variant AND r.dtype = :dtype AND r.config_key = :config
        AND r.source_hash = :hash AND r.status = 'ok' AND r.time_us IS NOT NULL
        AND substr(u.backend, 1, length(:other_timing)) != :other_timing
        AND NOT (coalesce(r.t_sol_us, 0) > 0 AND r.time_us < r.t_sol_us * (1 - :sol_noise))
        AND (:gpu = '' OR instr(lower(g.name), lower(:gpu)) > 0))
    WHERE pos = 1
    ORDER BY time_kind = 'measured' DESC, gpu_name, shape_key)sql";
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare(kSql);
  st.bind("problem", problem).bind("variant", variant).bind("dtype", dtype).bind("config", config_key);
  st.bind("hash", source_hash).bind("gpu", gpu_name_filter);
  st.bind("other_timing", std::string(TimingOptions::kOtherTimingPrefix)).bind("sol_noise", kSolNoise);
  return read_results(st);
}

std::vector<ResultRecord> KnowledgeBase::seeds(const Task& t, const std::string& gpu_name,
                                               const std::string& source_hash, int64_t exclude_run,
                                               size_t limit, const std::string& backend) const {
  // Per (GPU, shape): the best of this template source, and the best of its earlier versions (an
  // edited template starts from what the old text did best, even at this very shape: under the new
  // text that configuration has not been measured).
  static const std::string kSql = R"sql(
    SELECT * FROM (
      SELECT r.*, g.name AS gpu_name,
             row_number() OVER (PARTITION BY g.name, r.shape_key, r.source_hash = :source_hash
                                ORDER BY )sql" + kFastestFirst + R"sql() AS pos
      FROM results r JOIN gpus g ON g.id = r.gpu_id
      WHERE r.problem = :problem AND r.variant = :variant AND r.dtype = :dtype
        AND r.status = 'ok' AND r.time_us IS NOT NULL AND r.run_id != :exclude)
    WHERE pos = 1 AND NOT (source_hash = :source_hash AND gpu_name = :gpu AND shape_key = :shape_key))sql";
  // Both queries below name the task, its source, GPU and the run to leave out the same way.
  auto bind_seed_query = [&](sqlite::Stmt& st) {
    kb::bind_task(st, t);
    st.bind("source_hash", source_hash).bind("exclude", exclude_run).bind("gpu", gpu_name);
  };
  std::vector<ResultRecord> rows;
  {
    std::lock_guard lock(impl_->mu);
    auto st = impl_->db.prepare(kSql);
    bind_seed_query(st);
    rows = read_results(st);
  }
  auto distance = [&](const ResultRecord& r) {
    const auto parts = key_values(r.shape_key);
    if (!parts) return std::numeric_limits<double>::infinity();  // a malformed key: no nearer than any other
    double d = 0;
    for (const auto& [name, v] : *parts)
      d += std::fabs(std::log2(static_cast<double>(std::max<int64_t>(v, 1))) -
                     std::log2(static_cast<double>(std::max<int64_t>(t.shape.at(name), 1))));
    return d;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const ResultRecord& a, const ResultRecord& b) {
    const bool ga = a.gpu_name == gpu_name, gb = b.gpu_name == gpu_name;
    if (ga != gb) return ga;
    const double da = distance(a), db = distance(b);
    if (da != db) return da < db;
    return a.source_hash == source_hash && b.source_hash != source_hash;  // this text before older ones
  });
  // The task's own shape as timed another way (an older soltune's timing, a config's timing:): not
  // known to this backend's search, so its fastest are the first to measure again.
  static const std::string kOtherBackendSql = R"sql(
    SELECT r.*, g.name AS gpu_name FROM results r JOIN gpus g ON g.id = r.gpu_id JOIN runs u ON u.id = r.run_id
    WHERE r.problem = :problem AND r.variant = :variant AND r.dtype = :dtype AND r.shape_key = :shape_key
      AND r.source_hash = :source_hash AND g.name = :gpu AND u.backend != :backend
      AND r.status = 'ok' AND r.time_us IS NOT NULL AND r.run_id != :exclude
    ORDER BY )sql" + kFastestFirst + R"sql( LIMIT 3)sql";
  if (!backend.empty()) {
    std::vector<ResultRecord> own;
    {
      std::lock_guard lock(impl_->mu);
      auto st = impl_->db.prepare(kOtherBackendSql);
      bind_seed_query(st);
      st.bind("backend", backend);
      own = read_results(st);
    }
    rows.insert(rows.begin(), own.begin(), own.end());
  }
  std::set<std::string> seen;
  std::vector<ResultRecord> out;
  for (auto& r : rows)
    if (out.size() < limit && seen.insert(r.config_key).second) out.push_back(std::move(r));
  return out;
}

std::vector<ResultRecord> KnowledgeBase::results(int64_t run_id) const {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare(
      "SELECT r.*, g.name AS gpu_name FROM results r JOIN gpus g ON g.id = r.gpu_id "
      "WHERE r.run_id = :run_id ORDER BY r.id");
  st.bind("run_id", run_id);
  return read_results(st);
}

std::set<std::string> KnowledgeBase::evaluated_keys(int64_t gpu_id, const Task& t, const std::string& source_hash,
                                                    const std::string& toolchain, const std::string& backend) const {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare(
      "SELECT DISTINCT r.config_key FROM results r JOIN runs u ON u.id = r.run_id WHERE r.gpu_id = :gpu_id AND "
      "r.problem = :problem AND r.variant = :variant AND r.dtype = :dtype AND r.shape_key = :shape_key AND "
      "r.source_hash = :source_hash AND (:toolchain = '' OR u.toolchain = :toolchain) AND "
      "(:backend = '' OR u.backend = :backend)");
  st.bind("gpu_id", gpu_id).bind("source_hash", source_hash).bind("toolchain", toolchain).bind("backend", backend);
  kb::bind_task(st, t);
  std::set<std::string> keys;
  while (st.step()) keys.insert(st.text("config_key"));
  return keys;
}

std::map<std::string, std::set<int64_t>> KnowledgeBase::knob_values_elsewhere(const Task& t,
                                                                              const std::string& source_hash) const {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare(
      "SELECT DISTINCT config_key FROM results WHERE problem = :problem AND variant = :variant AND "
      "source_hash != :source_hash");
  st.bind("problem", t.problem->name).bind("variant", t.variant->name).bind("source_hash", source_hash);
  std::map<std::string, std::set<int64_t>> out;
  while (st.step()) {
    // Part by part: a value that is not an integer is no knob value, and the key's others still count.
    std::istringstream in(st.text("config_key"));
    std::string part;
    while (std::getline(in, part, ','))
      if (const auto kv = key_values(part); kv && kv->size() == 1) out[kv->front().first].insert(kv->front().second);
  }
  return out;
}

std::vector<RunRecord> KnowledgeBase::runs() const {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare("SELECT * FROM runs ORDER BY id");
  return kb::read_rows(st, kb::run_columns());
}

std::vector<GpuRecord> KnowledgeBase::gpus() const {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare("SELECT * FROM gpus ORDER BY id");
  return kb::read_rows(st, kb::gpu_columns());
}

std::vector<BaselineRecord> KnowledgeBase::baselines(int64_t run_id) const {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare("SELECT * FROM baselines WHERE run_id = :run_id ORDER BY id");
  st.bind("run_id", run_id);
  return kb::read_rows(st, kb::baseline_columns());
}

}  // namespace soltune
