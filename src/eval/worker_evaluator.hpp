#pragma once
// The cuda backend as the tuner sees it: candidates are legality-checked and compiled here (TBB,
// every core), statically pruned against the device's limits, then sent one at a time to the GPU
// worker process (worker.hpp). The tuner never holds a CUDA context. A candidate whose worker
// dies (fault) or outlives its time limit (timeout; the worker is killed) costs itself only: the
// worker is restarted and the run goes on.
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"
#include "core/task.hpp"
#include <yaml-cpp/yaml.h>

#include "core/child_process.hpp"
#include "eval/cuda_runner.hpp"
#include "eval/gpu_lock.hpp"

namespace soltune {

struct WorkerOptions {
  std::vector<std::string> command;  // the worker program: {"/proc/self/exe", "worker"}
  std::filesystem::path templates;   // where the worker loads problems from (the run's templates)
  int device = 0;
  std::string arch = "auto";
  CudaEvalOptions eval;
  double timeout_cap_s = 60;      // per-candidate limit never exceeds this
  double start_timeout_s = 120;   // worker start-up, ceilings included
  int max_restarts_in_a_row = 3;  // workers that die before answering anything: infrastructure
  // The GPU is locked (eval/gpu_lock.hpp) for the evaluator's lifetime, before the first worker
  // starts (it measures ceilings at once): one measuring run per GPU. Empty key: no lock.
  std::string lock_key;    // the device's UUID
  std::string lock_label;  // how messages name it: gpu_label()
  bool wait_for_gpu = true;  // false: throw at once when another run holds the lock
};

// The time a candidate may take: generous for any kernel within 20x of the baseline per launch,
// over all the launches the protocol makes, plus fixed overhead; never above the cap.
double candidate_time_limit_s(double t_ref_us, const CudaEvalOptions& o, double cap_s);

class WorkerEvaluator final : public Evaluator {
 public:
  WorkerEvaluator(const Compiler& c, WorkerOptions o);
  ~WorkerEvaluator() override;
  const DeviceInfo& device() const override { return dev_; }
  // "cuda", or "cuda (timing: gate off, ...)" where the run config changes how candidates are timed.
  std::string backend_name() const override { return opt_.eval.timing.backend_name(); }
  TimeKind kind() const override { return TimeKind::measured; }
  TaskBaseline baseline(const Task& t) override { return baseline_within(t, 0); }
  TaskBaseline baseline_within(const Task& t, double limit_s) override;
  std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) override;
  std::optional<Retimed> retime(const Task& t, const std::vector<Config>& configs, int rounds) override;
  void note_result(const Task& t, const EvalResult& r) override;
  // Starts compiling the configurations now (every core, bounded), so that evaluate() finds them done.
  void prefetch(const Task& t, const std::vector<Config>& configs) override;
  // The model over knobs and sizes (eval/model_predictor.hpp: no compile).
  std::unique_ptr<Predictor> predictor(const Task& t) override;
  int restarts() const { return restarts_; }
  // The first correctness round of one configuration, nothing timed (op check). A worker that dies or
  // outlives the cap costs this result (fault, timeout) and is not restarted: an audit reads how
  // it ended from finish().
  EvalResult check(const Task& t, const Config& config);
  // Ends the worker (end of its input) and says how it ended ("exit code 0"), waiting up to grace_s.
  std::string finish(double grace_s);
  std::optional<GpuUse> gpu_use() const override;

 private:
  void start();
  // Sends one request (followed by `trailing`: already framed bytes, e.g. CUBINs) and waits for the
  // reply until the deadline.
  enum class Outcome { ok, timeout, died };
  Outcome call(const YAML::Node& req, const std::string& trailing, double timeout_s, YAML::Node& reply, std::string& why);
  Outcome call_unmetered(const YAML::Node& req, const std::string& trailing, double timeout_s, YAML::Node& reply,
                         std::string& why);
  void run_one(const Task& t, Candidate& c, const CompileResult& r, uint64_t batch);
  // Sends one compiled candidate (op run or check) and reads its outcome into c.result. false: the
  // worker timed out or died (status timeout or fault, the log says which); a worker's error throws.
  // batch: the group of candidates (rounds_group()) that share their correctness rounds (0: none).
  bool send(const Task& t, Candidate& c, const CompileResult& r, const char* op, double limit_s, YAML::Node& reply,
            uint64_t batch = 0);
  // A compile on a thread of its own, at most one per core at a time.
  std::shared_future<CompileResult> start_compile(const CompileRequest& req);

  const Compiler& compiler_;
  WorkerOptions opt_;
  DeviceInfo dev_;
  std::string arch_;
  std::optional<GpuLock> lock_;  // declared before proc_: released only after the worker has ended
  std::unique_ptr<ChildProcess> proc_;
  std::map<std::string, double> t_ref_;    // per task id, for the time limit
  std::map<std::string, double> best_us_;  // per task id: the incumbent for the early stop
  int restarts_ = 0;
  // Candidates at a dtype and shape (of any variant) share their correctness rounds' inputs, and the
  // reference's results on them, in groups of kRoundsShared: at a 4096^3 GEMM the float64 reference
  // takes 50 times a candidate's run (three rounds of it are worth 0.45 ms a candidate shared by 64,
  // 1.8 ms by 16). The inputs stay the harness's draw, never the candidates' to choose or see; the
  // timed repetitions, checked at random, run on inputs redrawn in part each time.
  static constexpr int kRoundsShared = 64;
  struct RoundsGroup {
    uint64_t id = 0;
    int used = 0;
  };
  uint64_t rounds_group(const Task& t);
  uint64_t groups_ = 0;                       // groups started so far
  std::map<std::string, RoundsGroup> group_;  // per Task::dtype_shape(): its current group
  std::optional<ChildProcess::Clock::time_point> first_run_;  // the first candidate sent to the GPU
  double compile_wait_s_ = 0;  // evaluate() waiting on compiles since the first candidate ran
  double busy_s_ = 0;                                          // time the worker spent serving requests since
  std::counting_semaphore<> cores_;
  std::mutex ahead_mu_;  // prefetch() may run while evaluate() does
  std::map<std::string, std::shared_future<CompileResult>> ahead_;  // prefetched: task id + name expression
};

}  // namespace soltune
