#pragma once
// The knowledge base: one SQLite file (one per GPU if the user likes) recording every evaluated
// candidate as it completes. Each write commits before returning, so a crash loses at most the
// candidate in flight. Several processes may write one file (WAL, busy timeout); one object may be
// shared by threads (calls are serialized).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/audit.hpp"
#include "core/device.hpp"
#include "core/measure.hpp"
#include "core/sol.hpp"
#include "core/task.hpp"
#include "kb/records.hpp"

namespace soltune {

class KnowledgeBase {
 public:
  // Opens or creates (with missing parent folders). A file that is not SQLite, an SQLite file of
  // another application, or one with a newer schema throws Error naming the path and the reason,
  // and is left byte for byte unchanged. An older schema is migrated.
  // A file or folder this process may not write is refused here, naming which, not at the first write.
  static KnowledgeBase open(const std::filesystem::path& path);
  // For commands that only read (kb list, best, show, export-json; export): never creates or writes,
  // and reads files on read-only media. A missing file throws Error naming it. (An older schema is
  // migrated as open() does where the file can be written, and refused where it cannot.)
  static KnowledgeBase open_read_only(const std::filesystem::path& path);

  KnowledgeBase(KnowledgeBase&&) noexcept;
  KnowledgeBase& operator=(KnowledgeBase&&) noexcept;
  ~KnowledgeBase();

  const std::filesystem::path& path() const;

  // Insert-or-get by identity: name + uuid + kind (a model device has an empty uuid). The other
  // facts (limits, versions, ceilings) are updated to the latest seen.
  int64_t gpu_id(const DeviceInfo& d, TimeKind kind);
  int64_t begin_run(const RunInfo& r, int64_t gpu_id);
  // finished; interrupted (Ctrl-C); stopped (an error of the machine, e.g. a full disk: resumable);
  // failed (the run itself is wrong, e.g. a template whose every candidate fails to compile).
  void finish_run(int64_t run_id, const std::string& status);
  // Adds a line to the run's notes (e.g. a variant the device cannot run, left out); a line it
  // holds already is not repeated (a resumed run notes the same again).
  void add_run_note(int64_t run_id, const std::string& line);
  // Marks an unfinished run as running again (soltune tune --resume).
  void reopen_run(int64_t run_id);
  // The latest run of this config file that did not finish (running after a crash, interrupted, or
  // stopped by an error).
  std::optional<RunRecord> last_unfinished_run(const std::string& config_path) const;

  // Template sources by hash, so an export needs nothing but the knowledge base. Storing a known
  // hash again is a no-op; a different text under a known hash throws.
  void store_source(const std::string& hash, const std::string& text);
  std::optional<std::string> source(const std::string& hash) const;

  void record_baseline(int64_t run_id, const Task& t, const TaskBaseline& b);
  // One transaction, committed before returning. Returns the result's id.
  int64_t record(int64_t run_id, const Task& t, const std::string& source_hash, const EvalResult& r,
                 const SolScore& s);
  // A result of this run found wrong after it was recorded ok (a checked repetition of its
  // re-timing failed): its rows become `status`, their log prefixed with why, and it is no longer
  // anyone's best.
  void demote(int64_t run_id, const Task& t, const std::string& config_key, Status status, const std::string& why);

  // compute-sanitizer's verdicts on a tuned kernel (the result's GPU, task and configuration), audited
  // with the template text source_hash under toolchain: one row per tool, kept beside earlier audits.
  void record_audit(const ResultRecord& kernel, const std::string& source_hash, const std::string& toolchain,
                    const std::vector<ToolAudit>& tools);
  // The latest verdict of each tool (sanitizer_tools() order) on the kernel, audited with one of
  // source_hashes (empty: the result's own); tools never run on it are missing.
  std::vector<ToolAudit> audits(const ResultRecord& kernel, const std::vector<std::string>& source_hashes = {}) const;

  // Per (GPU name, variant, dtype, shape): the fastest result with status ok. Measured results win
  // over predicted ones; a prediction is returned only where the group has no measurement.
  // gpu_name_filter: a case-insensitive fragment of the GPU name ("" = all).
  // source_hashes: only results of these template sources (empty = any), e.g. the current ones.
  std::vector<ResultRecord> best(const std::string& problem, const std::string& gpu_name_filter = "",
                                 const std::vector<std::string>& source_hashes = {}) const;
  // The ok results of one configuration of a variant under one template text, filtered as best()
  // is: per (GPU name, shape) the fastest, measured ones first (a fallback's runs, for export).
  std::vector<ResultRecord> config_results(const std::string& problem, const std::string& variant, const std::string& dtype,
                                           const std::string& config_key, const std::string& gpu_name_filter,
                                           const std::string& source_hash) const;
  std::vector<ResultRecord> results(int64_t run_id) const;  // in recording order
  // Configuration keys already evaluated (any status) for the task on the GPU with the source, under
  // the toolchain and the backend (a run's RunInfo::toolchain and ::backend, which names a
  // non-default timing; "" = any).
  std::set<std::string> evaluated_keys(int64_t gpu_id, const Task& t, const std::string& source_hash,
                                       const std::string& toolchain = "", const std::string& backend = "") const;

  // Results from elsewhere that may seed a search for the task, never stand in for a measurement:
  // per (GPU name, shape) the fastest ok result of the same problem, variant and dtype, of this
  // template source and of its earlier versions (those also at the task's own shape and GPU), from
  // runs other than exclude_run; the task's own GPU name first, then by distance of shape (log2
  // over the sizes), then this source before earlier ones. With `backend` (the run's), the three
  // fastest at the task's own shape, source and GPU that runs of another backend measured (timed
  // another way, not known to this one) come first. At most `limit`, each configuration once.
  std::vector<ResultRecord> seeds(const Task& t, const std::string& gpu_name, const std::string& source_hash,
                                  int64_t exclude_run, size_t limit, const std::string& backend = "") const;
  // Every value each knob took in results of the task's problem and variant under template texts
  // other than source_hash (any dtype, shape, GPU, status): what the earlier versions offered, as
  // far as they were tried. Values of a key that is not KNOB=integer,... are skipped.
  std::map<std::string, std::set<int64_t>> knob_values_elsewhere(const Task& t, const std::string& source_hash) const;
  // The search state of a run's task after its last batch (one row per task, replaced each time).
  void save_checkpoint(int64_t run_id, const std::string& task_id, int64_t evaluated, const std::string& state);
  std::map<std::string, std::pair<int64_t, std::string>> checkpoints(int64_t run_id) const;  // task -> (evaluated, state)
  std::vector<RunRecord> runs() const;
  std::vector<GpuRecord> gpus() const;
  std::vector<BaselineRecord> baselines(int64_t run_id) const;

  struct Impl;

 private:
  explicit KnowledgeBase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace soltune
