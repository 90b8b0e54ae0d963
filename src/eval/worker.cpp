#include "eval/worker.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "eval/candidates.hpp"
#include "eval/cuda_devices.hpp"
#include "eval/cuda_runner.hpp"
#include "eval/wire.hpp"

namespace soltune {
namespace {

class Worker {
 public:
  Worker(int in, int out) : in_(in), out_(out) {}
  int loop();

 private:
  YAML::Node hello(const YAML::Node& m);
  Task task(const YAML::Node& m);
  // op run: checked and timed; op check: the first correctness round only (an audit).
  YAML::Node run(const YAML::Node& m, const std::string& cubin, bool timed);
  YAML::Node retime(const YAML::Node& m);
  // A candidate from a request: configuration, geometry and kernel name recomputed from the task.
  Candidate candidate(const Task& t, const YAML::Node& item) const;

  int in_, out_;
  std::unique_ptr<Compiler> compiler_;
  std::unique_ptr<CudaRunner> runner_;
  std::filesystem::path templates_;
  std::map<std::string, std::unique_ptr<ProblemSpec>> problems_;
};

YAML::Node Worker::hello(const YAML::Node& m) {
  templates_ = m["templates"].as<std::string>();
  const int device = m["device"].as<int>();
  const auto o = wire::decode_eval_options(m["options"]);
  compiler_ = std::make_unique<Compiler>(default_compiler_options());
  auto arch = m["arch"].as<std::string>();
  if (arch == "auto") arch = cuda_device(device).arch();
  runner_ = std::make_unique<CudaRunner>(device, *compiler_, arch, o);
  YAML::Node r;
  r["ok"] = true;
  r["device"] = wire::encode(runner_->device());
  r["arch"] = arch;
  return r;
}

Task Worker::task(const YAML::Node& m) {
  const auto name = m["problem"].as<std::string>();
  auto& spec = problems_[name];
  if (!spec) spec = std::make_unique<ProblemSpec>(load_problem(templates_, name));
  Task t{spec.get(), &spec->variant(m["variant"].as<std::string>()), parse_dtype(m["dtype"].as<std::string>()), {}};
  for (const auto& d : m["shape"]) t.shape.dims.emplace_back(d[0].as<std::string>(), d[1].as<int64_t>());
  return t;
}

Candidate Worker::candidate(const Task& t, const YAML::Node& item) const {
  const Space space(*t.variant, t.fixed(runner_->device()));
  Candidate c;
  c.result.key = item["key"].as<std::string>();
  c.result.config = space.parse_key(c.result.key);
  c.bindings = space.bind(c.result.config);
  plan_launches(t, c);
  return c;
}

namespace {
// The compiled program as the evaluator sent it; the candidate takes its kernels' resources.
CompileResult compiled(Candidate& c, const YAML::Node& item, const std::string& cubin) {
  CompileResult r;
  r.ok = true;
  r.cubin.assign(cubin.begin(), cubin.end());
  r.kernels = wire::decode_kernels(item["kernels"]);
  if (!take_compile_result(c, r)) throw Error("worker: a request for " + c.result.key + " names no kernel");
  return r;
}
}  // namespace

YAML::Node Worker::retime(const YAML::Node& m) {
  const Task t = task(m["task"]);
  std::vector<Candidate> cs;
  std::vector<CompileResult> rs;
  for (const auto& item : m["items"]) {
    std::string cubin;
    if (!wire::read_frame(in_, cubin)) throw Error("worker: input ended inside a retime request");
    cs.push_back(candidate(t, item));
    rs.push_back(compiled(cs.back(), item, cubin));
  }
  const auto r = runner_->retime(t, cs, rs, m["rounds"].as<int>());
  YAML::Node out;
  out["ok"] = true;
  out["baseline"] = r.baseline_us;
  for (size_t i = 0; i < r.config_us.size(); ++i) {
    out["configs"].push_back(r.config_us[i]);
    out["failed"].push_back(r.failed[i]);
  }
  return out;
}

YAML::Node Worker::run(const YAML::Node& m, const std::string& cubin, bool timed) {
  const Task t = task(m["task"]);
  Candidate c = candidate(t, m);
  const CompileResult r = compiled(c, m, cubin);
  runner_->set_batch(m["batch"] ? m["batch"].as<uint64_t>() : 0);
  if (timed)
    runner_->run(t, c, r, m["incumbent"].as<double>());
  else
    runner_->check(t, c, r);
  YAML::Node out;
  out["ok"] = true;
  out["outcome"] = wire::encode_outcome(c.result);
  out["lost"] = runner_->lost();
  return out;
}

int Worker::loop() {
  std::string payload;
  const bool trace = std::getenv("SOLTUNE_WORKER_TRACE") != nullptr;  // requests and answers on stderr
  while (wire::read_frame(in_, payload)) {
    YAML::Node reply;
    if (trace) std::fprintf(stderr, "worker %d <- %s\n", static_cast<int>(getpid()), payload.substr(0, 200).c_str());
    try {
      const auto m = wire::parse(payload);
      const auto op = m["op"].as<std::string>();
      if (op == "hello") {
        reply = hello(m);
      } else if (!runner_) {
        throw Error("worker: '" + op + "' before hello");
      } else if (op == "baseline") {
        reply["ok"] = true;
        reply["baseline"] = wire::encode(runner_->baseline(task(m["task"]), m["limit"] ? m["limit"].as<double>() : 0.0));
      } else if (op == "retime") {
        reply = retime(m);
      } else if (op == "run" || op == "check") {
        std::string cubin;
        if (!wire::read_frame(in_, cubin)) return 1;
        reply = run(m, cubin, op == "run");
      } else {
        throw Error("worker: unknown request '" + op + "'");
      }
    } catch (const std::exception& e) {
      reply = YAML::Node();
      reply["ok"] = false;
      reply["error"] = e.what();
    }
    if (trace) std::fprintf(stderr, "worker %d -> %s\n", static_cast<int>(getpid()), wire::emit(reply).substr(0, 300).c_str());
    if (!wire::write_frame(out_, wire::emit(reply))) return 1;
    if (runner_ && runner_->lost()) return 3;  // the context is gone: the tuner starts a new worker
  }
  return 0;
}

}  // namespace

int worker_main(int in, int out) {
  // Anything printed by libraries must not corrupt the protocol on stdout: move it to stderr.
  std::fflush(stdout);
  return Worker(in, out).loop();
}

}  // namespace soltune
