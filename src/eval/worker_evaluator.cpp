#include "eval/worker_evaluator.hpp"

#include "eval/model_predictor.hpp"

#include <thread>

#include <algorithm>
#include <future>
#include <cstdio>

#include "eval/candidates.hpp"
#include "eval/wire.hpp"

namespace soltune {

double candidate_time_limit_s(double t_ref_us, const CudaEvalOptions& o, double cap_s) {
  const double launches = o.check_rounds + o.warmup + 3 + o.max_reps;
  return std::min(cap_s, 5.0 + launches * 20.0 * t_ref_us * 1e-6);
}

WorkerEvaluator::WorkerEvaluator(const Compiler& c, WorkerOptions o)
    : compiler_(c), opt_(std::move(o)), cores_(std::max<std::ptrdiff_t>(1, std::thread::hardware_concurrency())) {
  if (!opt_.lock_key.empty()) lock_ = GpuLock::acquire(opt_.lock_key, opt_.lock_label, opt_.wait_for_gpu);
  start();
}

WorkerEvaluator::~WorkerEvaluator() = default;

void WorkerEvaluator::start() {
  for (int attempt = 1;; ++attempt) {
    proc_ = std::make_unique<ChildProcess>(opt_.command);
    YAML::Node hello;
    hello["op"] = "hello";
    hello["templates"] = opt_.templates.string();
    hello["device"] = opt_.device;
    hello["arch"] = opt_.arch;
    auto eval = opt_.eval;
    eval.seed += static_cast<uint64_t>(restarts_);  // fresh draws after a restart
    eval.measure_ceilings = eval.measure_ceilings && !dev_.measured;
    hello["options"] = wire::encode(eval);
    YAML::Node reply;
    std::string why;
    if (call(hello, "", opt_.start_timeout_s, reply, why) == Outcome::ok) {
      if (!reply["ok"].as<bool>()) throw Error("the GPU worker could not start: " + reply["error"].as<std::string>());
      const auto d = wire::decode_device(reply["device"]);
      if (dev_.measured) {
        const auto measured = dev_.measured;  // measured once per run, kept across restarts
        dev_ = d;
        dev_.measured = measured;
      } else {
        dev_ = d;
      }
      arch_ = reply["arch"].as<std::string>();
      return;
    }
    if (attempt >= opt_.max_restarts_in_a_row) throw Error("the GPU worker failed to start " + std::to_string(attempt) + " times: " + why);
  }
}

WorkerEvaluator::Outcome WorkerEvaluator::call(const YAML::Node& req, const std::string& trailing, double timeout_s,
                                               YAML::Node& reply, std::string& why) {
  // The GPU's busy time: every request the worker serves, counted from the first candidate on.
  const auto began = ChildProcess::Clock::now();
  if (!first_run_ && req["op"].as<std::string>() == "run") first_run_ = began;
  struct Count {
    WorkerEvaluator& w;
    ChildProcess::Clock::time_point began;
    ~Count() {
      if (w.first_run_) w.busy_s_ += std::chrono::duration<double>(ChildProcess::Clock::now() - began).count();
    }
  } count{*this, began};
  return call_unmetered(req, trailing, timeout_s, reply, why);
}

std::optional<GpuUse> WorkerEvaluator::gpu_use() const {
  if (!first_run_) return std::nullopt;
  return GpuUse{busy_s_, std::chrono::duration<double>(ChildProcess::Clock::now() - *first_run_).count(), compile_wait_s_};
}

WorkerEvaluator::Outcome WorkerEvaluator::call_unmetered(const YAML::Node& req, const std::string& trailing,
                                                         double timeout_s, YAML::Node& reply, std::string& why) {
  const auto deadline = ChildProcess::Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  const std::string msg = wire::frame(wire::emit(req)) + trailing;
  std::string head, body;
  auto died = [&] {
    why = "the worker died (" + proc_->exit_text() + ")";
    return Outcome::died;
  };
  if (!proc_->write_all(msg)) return died();
  auto st = proc_->read_exact(wire::kHeader, head, deadline);
  if (st == ChildProcess::ReadStatus::ok) {
    try {
      st = proc_->read_exact(wire::frame_length(head), body, deadline);
      if (st == ChildProcess::ReadStatus::ok) reply = wire::parse(body);
    } catch (const Error& e) {
      // A worker that answers garbage is as good as dead.
      proc_->kill();
      why = e.what();
      return Outcome::died;
    }
  }
  if (st == ChildProcess::ReadStatus::timeout) {
    proc_->kill();
    why = "no answer within " + std::to_string(timeout_s) + " s: the worker was killed";
    return Outcome::timeout;
  }
  if (st == ChildProcess::ReadStatus::closed) return died();
  return Outcome::ok;
}

TaskBaseline WorkerEvaluator::baseline_within(const Task& t, double limit_s) {
  YAML::Node req, reply;
  req["op"] = "baseline";
  req["task"] = wire::encode_task(t);
  if (limit_s > 0) req["limit"] = limit_s;
  std::string why;
  if (call(req, "", opt_.timeout_cap_s * 4, reply, why) != Outcome::ok) {
    ++restarts_;
    start();
    throw Error("timing the baseline of " + t.id() + ": " + why);
  }
  if (!reply["ok"].as<bool>()) throw Error(reply["error"].as<std::string>());
  auto b = wire::decode_baseline(reply["baseline"]);
  if (b.skipped.empty()) t_ref_[t.id()] = b.t_ref_us;
  return b;
}

bool WorkerEvaluator::send(const Task& t, Candidate& c, const CompileResult& r, const char* op, double limit_s,
                           YAML::Node& reply, uint64_t batch) {
  auto& res = c.result;
  YAML::Node req;
  req["op"] = op;
  req["task"] = wire::encode_task(t);
  req["key"] = res.key;
  req["kernels"] = wire::encode_kernels(r.kernels);
  const auto best = best_us_.find(t.id());
  req["incumbent"] = best == best_us_.end() ? 0.0 : best->second;
  if (batch != 0) req["batch"] = batch;
  std::string why;
  const auto started = ChildProcess::Clock::now();
  const auto out = call(req, wire::frame(std::string(r.cubin.begin(), r.cubin.end())), limit_s, reply, why);
  res.wall_ms = std::chrono::duration<double, std::milli>(ChildProcess::Clock::now() - started).count();
  if (out == Outcome::ok && reply["ok"].as<bool>()) {
    wire::decode_outcome(reply["outcome"], res);
    return true;
  }
  if (out == Outcome::ok) throw Error("the GPU worker failed on " + t.id() + " " + res.key + ": " + reply["error"].as<std::string>());
  res.status = out == Outcome::timeout ? Status::timeout : Status::fault;
  res.log = why;
  return false;
}

namespace {
// A candidate the device's limits rule out never reaches the GPU: status illegal, true.
bool statically_illegal(Candidate& c, const DeviceInfo& d) {
  auto why = plan_limits(c, d);
  if (why.empty()) return false;
  c.result.status = Status::illegal;
  c.result.log = std::move(why);
  return true;
}
}  // namespace

EvalResult WorkerEvaluator::check(const Task& t, const Config& config) {
  auto batch = prepare_candidates(t, dev_, arch_, {config});
  auto& c = batch.candidates.front();
  c.result.kind = TimeKind::measured;
  if (c.request < 0) return c.result;
  const auto compiled = compiler_.compile_all(batch.requests);
  const auto& r = compiled[static_cast<size_t>(c.request)];
  if (!take_compile_result(c, r) || statically_illegal(c, dev_)) return c.result;
  YAML::Node reply;
  send(t, c, r, "check", opt_.timeout_cap_s, reply);
  return c.result;
}

std::string WorkerEvaluator::finish(double grace_s) {
  proc_->close_input();
  return proc_->exit_text(grace_s);
}

void WorkerEvaluator::run_one(const Task& t, Candidate& c, const CompileResult& r, uint64_t batch) {
  auto& res = c.result;
  if (statically_illegal(c, dev_)) return;
  const auto it = t_ref_.find(t.id());
  const double limit = candidate_time_limit_s(it == t_ref_.end() ? 1e6 : it->second, opt_.eval, opt_.timeout_cap_s);
  YAML::Node reply;
  if (send(t, c, r, "run", limit, reply, batch)) {
    note_result(t, res);
    if (reply["lost"].as<bool>()) {
      proc_->exit_text();  // the worker ends itself after a fault
      ++restarts_;
      start();
    }
    return;
  }
  std::fprintf(stderr, "soltune: %s %s: %s; restarting the worker\n", t.id().c_str(), res.key.c_str(), res.log.c_str());
  ++restarts_;
  start();
}

void WorkerEvaluator::note_result(const Task& t, const EvalResult& r) {
  if (r.status != Status::ok) return;
  auto [it, fresh] = best_us_.emplace(t.id(), r.time.median_us);
  if (!fresh && r.time.median_us < it->second) it->second = r.time.median_us;
}

std::optional<Retimed> WorkerEvaluator::retime(const Task& t, const std::vector<Config>& configs, int rounds) {
  auto batch = prepare_candidates(t, dev_, arch_, configs);
  const auto compiled = compiler_.compile_all(batch.requests);  // cache hits: these ran before
  YAML::Node req, reply;
  req["op"] = "retime";
  req["task"] = wire::encode_task(t);
  req["rounds"] = rounds;
  std::string cubins;
  for (auto& c : batch.candidates) {
    if (c.request < 0 || !take_compile_result(c, compiled[c.request]))
      throw Error("re-timing " + t.id() + ": " + c.result.key + " no longer compiles: " + c.result.log);
    YAML::Node item;
    item["key"] = c.result.key;
    item["kernels"] = wire::encode_kernels(compiled[c.request].kernels);
    req["items"].push_back(item);
    cubins += wire::frame(std::string(compiled[c.request].cubin.begin(), compiled[c.request].cubin.end()));
  }
  std::string why;
  const auto it = t_ref_.find(t.id());
  const double limit = rounds * (1.0 + static_cast<double>(configs.size())) *
                       candidate_time_limit_s(it == t_ref_.end() ? 1e6 : it->second, opt_.eval, opt_.timeout_cap_s);
  if (call(req, cubins, limit, reply, why) != Outcome::ok) {
    ++restarts_;
    start();
    throw Error("re-timing " + t.id() + ": " + why);
  }
  if (!reply["ok"].as<bool>()) throw Error(reply["error"].as<std::string>());
  Retimed r;
  r.baseline_us = reply["baseline"].as<std::vector<double>>();
  for (const auto& v : reply["configs"]) r.config_us.push_back(v.as<std::vector<double>>());
  for (const auto& v : reply["failed"]) r.failed.push_back(v.as<std::string>());
  if (r.config_us.size() != configs.size() || r.failed.size() != configs.size()) throw Error("worker protocol: retime answered for the wrong number of configurations");
  return r;
}

std::shared_future<CompileResult> WorkerEvaluator::start_compile(const CompileRequest& given) {
  CompileRequest req = given;
  req.deadline = deadline_;  // stopped where the budget ends, not waited for past it
  return std::async(std::launch::async, [this, req] {
           cores_.acquire();
           struct Release {
             std::counting_semaphore<>& s;
             ~Release() { s.release(); }
           } release{cores_};
           return compiler_.compile(req);
         }).share();
}

namespace {
// A macro kernel's configurations share one name expression and differ in their definitions.
std::string ahead_key(const Task& t, const CompileRequest& r) {
  std::string key = t.id() + "\n" + r.name_expressions.front();
  for (const auto& o : r.extra_options) key += "\n" + o;
  return key;
}
}  // namespace

void WorkerEvaluator::prefetch(const Task& t, const std::vector<Config>& configs) {
  const auto batch = prepare_candidates(t, dev_, arch_, configs);
  std::lock_guard lock(ahead_mu_);
  for (const auto& req : batch.requests) {
    auto& f = ahead_[ahead_key(t, req)];
    if (!f.valid()) f = start_compile(req);
  }
}

std::vector<EvalResult> WorkerEvaluator::evaluate(const Task& t, const std::vector<Config>& configs) {
  auto batch = prepare_candidates(t, dev_, arch_, configs);
  // Every compile starts at once (unless prefetched, when it may be done already); each candidate
  // goes to the GPU as soon as its own compile is done, in order, so the GPU works while the rest
  // of the batch still compiles.
  std::vector<std::shared_future<CompileResult>> compiling;
  std::unique_lock lock(ahead_mu_);
  for (const auto& req : batch.requests) {
    if (auto it = ahead_.find(ahead_key(t, req)); it != ahead_.end()) {
      compiling.push_back(std::move(it->second));
      ahead_.erase(it);
    } else {
      compiling.push_back(start_compile(req));
    }
  }
  lock.unlock();
  std::vector<CompileResult> compiled(compiling.size());
  std::vector<EvalResult> out;
  for (auto& c : batch.candidates) {
    c.result.kind = TimeKind::measured;
    if (past_deadline()) break;  // the budget ended: the rest of the batch is not measured
    if (c.request >= 0) {
      // Time the GPU sat idle for this compile (after the first candidate reached it).
      const auto waited_from = ChildProcess::Clock::now();
      compiled[c.request] = compiling[c.request].get();  // an infrastructure Error surfaces here
      if (first_run_) compile_wait_s_ += std::chrono::duration<double>(ChildProcess::Clock::now() - waited_from).count();
      if (compiled[c.request].abandoned) break;
      if (take_compile_result(c, compiled[c.request])) {
        c.result.occupancy_blocks = occupancy_blocks_per_sm(c.result.res, c.result.geo, dev_);
        run_one(t, c, compiled[c.request], rounds_group(t));
      }
    }
    out.push_back(std::move(c.result));
  }
  return out;
}

uint64_t WorkerEvaluator::rounds_group(const Task& t) {
  auto& g = group_[t.dtype_shape()];
  if (g.id == 0 || g.used == kRoundsShared) g = RoundsGroup{++groups_, 0};
  ++g.used;
  return g.id;
}

std::unique_ptr<Predictor> WorkerEvaluator::predictor(const Task& t) {
  return std::make_unique<ModelPredictor>(t, dev_);
}

}  // namespace soltune
