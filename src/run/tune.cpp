#include "run/tune.hpp"

#include <unistd.h>

#include <sstream>

#include "codegen/content_hash.hpp"
#include "core/error.hpp"
#include "run/kb_archive.hpp"

namespace soltune {

RunInfo describe_run(const RunConfig& cfg, const std::string& backend, const std::string& toolchain,
                     const std::string& command_line) {
  return RunInfo{.config_path = std::filesystem::weakly_canonical(cfg.path).string(),
                 .problem = cfg.problem,
                 .seed = cfg.seed,
                 .backend = backend,
                 .budget_text = "evals=" + std::to_string(cfg.budget.evals) + " seconds=" + std::to_string(cfg.budget.seconds),
                 .soltune_version = SOLTUNE_VERSION,
                 .command_line = command_line,
                 .toolchain = toolchain,
                 .settings = settings_text(cfg),
                 .pid = static_cast<int64_t>(::getpid()),
                 .host = this_host()};
}

TuneRun::TuneRun(TuneRequest req, Evaluator& ev)
    : req_(std::move(req)), ev_(ev), kb_(KnowledgeBase::open(req_.kb)), budget_(req_.cfg.budget) {
  gpu_ = kb_.gpu_id(ev_.device(), ev_.kind());
  if (req_.resume) {
    resumed_ = std::make_unique<ResumePoint>(resume_run(kb_, req_.info, gpu_, budget_));
    run_ = resumed_->run;
    budget_ = resumed_->budget;
    budget_.clock_start = req_.cfg.budget.clock_start;
  } else {
    run_ = kb_.begin_run(req_.info, gpu_);
  }
  for (const auto& v : req_.cfg.spec.variants) kb_.store_source(content_hash(v.source), v.source);
  // A variant built for another GPU's architecture is left out, and the run says so.
  for (const auto& why : unavailable_variants(req_.cfg, ev_.device())) {
    left_out_.push_back(why);
    kb_.add_run_note(run_, why + ": its tasks are skipped");
  }
}

TuneRun::~TuneRun() = default;

TuneOutcome TuneRun::run(TaskObserver& display, const std::atomic<bool>* stop) {
  ResumeEvaluator replay(ev_, resumed_ ? resumed_->recorded : RecordedRun{});  // answers what the run recorded
  KbArchive archive(kb_, run_, gpu_, req_.info, ev_.device(), resumed_.get(), display);
  Dispatcher dispatcher(req_.cfg, replay, archive);
  if (req_.only_tasks) {
    const auto only = *req_.only_tasks;
    dispatcher.include_only([only](const Task& t) { return only.count(t.id()) > 0; });
    if (dispatcher.tasks().empty()) throw Error(req_.cfg.path.string() + ": none of its tasks can be run here");
  }
  TuneOutcome out;
  try {
    out.reports = dispatcher.run(budget_, req_.cfg.seed, stop);
  } catch (const std::exception& e) {
    // An error of the machine, not of a candidate: what the run recorded is kept, and a resume
    // continues it once the cause is fixed. Marking it may fail for the same cause; it then stays
    // "running", which a resume continues too.
    try {
      kb_.finish_run(run_, "stopped");
    } catch (const std::exception&) {
    }
    throw Error(std::string(e.what()) + "\nsoltune: the run stopped; what it recorded is kept in " + req_.kb.string() +
                ". Once the cause is fixed, continue it with:\n  " + req_.resume_hint);
  }
  out.checkpoints_recorded = archive.checkpoints_recorded();
  out.checkpoints_matched = archive.checkpoints_matched();
  if (stop && stop->load()) {
    out.end = TuneOutcome::End::interrupted;
    kb_.finish_run(run_, "interrupted");
    return out;
  }
  // A template that does not compile at all is an error, not a result.
  for (const auto& r : out.reports) {
    const auto it = archive.compile_errors().find(r.task.id());
    if (r.outcome.evaluated > 0 && it != archive.compile_errors().end() && it->second.first == r.outcome.evaluated) {
      out.broken = BrokenTask{r.task.id(), r.task.variant->source_path, it->second.second};
      break;
    }
  }
  out.end = out.broken ? TuneOutcome::End::failed : TuneOutcome::End::finished;
  kb_.finish_run(run_, out.broken ? "failed" : "finished");
  return out;
}

}  // namespace soltune
