// The tuner's side of the worker protocol, on the CPU, against a fake worker that crashes, hangs
// or answers garbage: each costs one candidate (fault or timeout), the worker is restarted, and
// every other result comes through.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "eval/gpu_lock.hpp"
#include "eval/wire.hpp"
#include "eval/worker_evaluator.hpp"
#include "../support/fields.hpp"

namespace soltune {
namespace {

class WorkerProtocol : public ::testing::Test {
 protected:
  ProblemSpec p = load_problem(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates", "gelu");
  Compiler compiler{default_compiler_options()};
  std::string counter = (std::filesystem::temp_directory_path() /
                         ("soltune-fake-" + std::to_string(getpid()) + "-" + safe_test_name()))
                            .string();
  static std::string safe_test_name() {
    std::string s = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (auto& c : s)
      if (c == '/') c = '_';
    return s;
  }
  void TearDown() override { std::filesystem::remove(counter); }

  WorkerOptions options(const std::string& mode, int nth) {
    WorkerOptions o;
    o.command = {FAKE_WORKER, mode, std::to_string(nth), counter};
    o.templates = std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates";
    o.timeout_cap_s = 1.5;
    o.start_timeout_s = 1.5;
    return o;
  }
  Task task() const { return Task{&p, &p.variant("vectorized"), DType::f32, Shape{{{"n", 1000003}}}}; }
  std::vector<Config> configs(const DeviceInfo& d) const {
    const Space s(p.variant("vectorized"), task().fixed(d));
    std::vector<Config> out;
    for (const char* k : {"BLOCK=256,VEC=4,EPT=1,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0",
                          "BLOCK=128,VEC=4,EPT=2,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0",
                          "BLOCK=512,VEC=2,EPT=2,GRID_STRIDE=1,BLOCKS_PER_SM=2,FAST_TANH=0,CACHE_HINT=1",
                          "BLOCK=64,VEC=1,EPT=4,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=0"})
      out.push_back(s.parse_key(k));
    return out;
  }
};

TEST_F(WorkerProtocol, HealthyWorkerAnswersEveryCandidate) {
  WorkerEvaluator ev(compiler, options("ok", 0));
  EXPECT_EQ(ev.device().uuid, "GPU-fake");
  EXPECT_EQ(ev.baseline(task()).t_ref_us, 100);
  const auto r = ev.evaluate(task(), configs(ev.device()));
  ASSERT_EQ(r.size(), 4u);
  for (const auto& x : r) {
    EXPECT_EQ(x.status, Status::ok) << x.log;
    EXPECT_EQ(x.time.median_us, 51);
    EXPECT_NE(x.log.find(x.key), std::string::npos);
  }
  EXPECT_EQ(ev.restarts(), 0);
}

TEST_F(WorkerProtocol, RetimeSendsEveryCubinAndReadsTheMedians) {
  WorkerEvaluator ev(compiler, options("ok", 0));
  ev.baseline(task());
  auto cs = configs(ev.device());
  cs.resize(3);
  const auto r = ev.retime(task(), cs, 4);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->baseline_us, std::vector<double>(4, 100.0));
  ASSERT_EQ(r->config_us.size(), 3u);
  EXPECT_EQ(r->config_us[2], std::vector<double>(4, 12.0));
  // The worker is still in step: the next request is answered normally.
  EXPECT_EQ(ev.evaluate(task(), {cs[0]}).front().status, Status::ok);
}

struct Misbehaviour {
  const char* mode;
  Status status;
  const char* why;
};

class WorkerFailures : public WorkerProtocol, public ::testing::WithParamInterface<Misbehaviour> {};

TEST_P(WorkerFailures, CostOneCandidateAndRestartTheWorker) {
  const auto m = GetParam();
  WorkerEvaluator ev(compiler, options(m.mode, 2));
  ev.baseline(task());
  const auto r = ev.evaluate(task(), configs(ev.device()));
  ASSERT_EQ(r.size(), 4u);
  for (size_t i = 0; i < r.size(); ++i) {
    if (i == 1) {
      EXPECT_EQ(r[i].status, m.status) << r[i].log;
      EXPECT_NE(r[i].log.find(m.why), std::string::npos) << r[i].log;
    } else {
      EXPECT_EQ(r[i].status, Status::ok) << i << ": " << r[i].log;
    }
  }
  EXPECT_EQ(ev.restarts(), 1);
}

INSTANTIATE_TEST_SUITE_P(Modes, WorkerFailures,
                         ::testing::Values(Misbehaviour{"crash", Status::fault, "signal 6"},
                                           Misbehaviour{"hang", Status::timeout, "no answer within"},
                                           Misbehaviour{"garbage", Status::fault, "malformed frame header"}),
                         [](const auto& test) { return std::string(test.param.mode); });

TEST_F(WorkerProtocol, WorkerThatCannotStartIsAnError) {
  try {
    WorkerEvaluator ev(compiler, options("start-crash", 0));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("failed to start 3 times"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exit code 7"), std::string::npos) << e.what();
  }
}

TEST_F(WorkerProtocol, SilentWorkerAtStartIsAnError) {
  auto o = options("ok", 0);
  o.command = {"sleep", "30"};
  EXPECT_THROW(WorkerEvaluator(compiler, o), Error);
}

// The GPU lock (eval/gpu_lock.hpp) in a lock folder of the test's own.
class WorkerLock : public WorkerProtocol {
 protected:
  void SetUp() override {
    std::string t = (std::filesystem::temp_directory_path() / "soltune-worker-lock-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    locks_ = t;
    ASSERT_EQ(setenv("SOLTUNE_LOCK_DIR", t.c_str(), 1), 0);
  }
  void TearDown() override {
    unsetenv("SOLTUNE_LOCK_DIR");
    std::filesystem::remove_all(locks_);
    WorkerProtocol::TearDown();
  }
  WorkerOptions locked(const std::string& mode, int nth, const std::string& key) {
    auto o = options(mode, nth);
    o.lock_key = key;
    o.lock_label = "GPU 0 (fake, " + key + ")";
    o.wait_for_gpu = false;
    return o;
  }
  static std::string refusal(const std::string& key) {
    try {
      GpuLock::acquire(key, "", false);
      return "";
    } catch (const Error& e) {
      return e.what();
    }
  }
  std::filesystem::path locks_;
};

TEST_F(WorkerLock, ASecondEvaluatorOnTheSameGpuFailsNamingTheHolder) {
  WorkerEvaluator first(compiler, locked("ok", 0, "GPU-fake"));
  try {
    WorkerEvaluator second(compiler, locked("ok", 0, "GPU-fake"));
    FAIL() << "two evaluators measured on one GPU at once";
  } catch (const Error& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("GPU 0 (fake, GPU-fake) is in use by pid " + std::to_string(getpid())), std::string::npos) << why;
    EXPECT_NE(why.find("eval_test"), std::string::npos) << "the holder's command line: " << why;
  }
  // The first goes on measuring.
  EXPECT_EQ(first.evaluate(task(), configs(first.device())).front().status, Status::ok);
}

TEST_F(WorkerLock, EvaluatorsOnOtherGpusOrWithoutALockDoNotBlock) {
  WorkerEvaluator a(compiler, locked("ok", 0, "GPU-fake"));
  WorkerEvaluator b(compiler, locked("ok", 0, "GPU-other"));
  WorkerEvaluator unlocked(compiler, options("ok", 0));
  EXPECT_EQ(b.device().uuid, "GPU-fake");
  EXPECT_EQ(unlocked.device().uuid, "GPU-fake");
}

TEST_F(WorkerLock, TheLockIsHeldAcrossWorkerRestartsAndReleasedWithTheEvaluator) {
  {
    WorkerEvaluator ev(compiler, locked("crash", 2, "GPU-fake"));
    ev.baseline(task());
    ev.evaluate(task(), configs(ev.device()));
    EXPECT_EQ(ev.restarts(), 1);
    EXPECT_NE(refusal("GPU-fake"), "") << "a restarted worker's evaluator still holds the GPU";
  }
  EXPECT_EQ(refusal("GPU-fake"), "");
  WorkerEvaluator next(compiler, locked("ok", 0, "GPU-fake"));
}

TEST(Wire, FramesAndValuesRoundTrip) {
  EXPECT_EQ(wire::frame_length(wire::frame("hello").substr(0, wire::kHeader)), 5u);
  EXPECT_THROW(wire::frame_length("garbage garbage!\n"), Error);
  EXPECT_THROW(wire::frame_length("0000000000000005"), Error);
  auto d = *find_known_gpu("H100");
  d.measured = Ceilings{4.2e12, 6e13, 9e14, "measured", 4.4e12};
  d.measured->tensor_8 = 1.9e15;
  d.measured->tensor_16_probe = 8.8e14;
  d.measured->tensor_8_probe = 1.7e15;
  const auto back = wire::decode_device(wire::parse(wire::emit(wire::encode(d))));
  EXPECT_EQ(back.name, d.name);
  EXPECT_EQ(back.sms, d.sms);
  EXPECT_EQ(back.l2_bytes, d.l2_bytes);
  ASSERT_TRUE(back.measured.has_value());
  EXPECT_DOUBLE_EQ(back.measured->mem_bw, 4.2e12);
  EXPECT_DOUBLE_EQ(back.measured->read_bw, 4.4e12);
  EXPECT_DOUBLE_EQ(back.measured->sol_bw(), 4.4e12);  // T_SOL's bandwidth: the better of copy and read
  EXPECT_DOUBLE_EQ(back.measured->tensor_8, 1.9e15);
  EXPECT_DOUBLE_EQ(back.measured->tensor_16_probe, 8.8e14);
  EXPECT_DOUBLE_EQ(back.measured->tensor_8_probe, 1.7e15);
  EvalResult e;
  e.status = Status::wrong_answer;
  e.log = "multi\nline: log";
  e.time = summarize({1.5, 2.25, 3.125});
  e.acc.checked = 1000003;
  e.acc.mismatches = 7;
  e.acc.rel_l2 = 1.0 / 3;
  e.acc.inputs_written = 12;
  e.acc.written_input = "x";
  double v = 0.25;  // every phase a value of its own
  for (const auto& [name, field] : kGpuPhaseFields) e.phases.*field = (v += 1.5);
  EvalResult f;
  wire::decode_outcome(wire::parse(wire::emit(wire::encode_outcome(e))), f);
  for (const auto& [name, field] : kGpuPhaseFields) EXPECT_DOUBLE_EQ(f.phases.*field, e.phases.*field) << name;
  EXPECT_EQ(f.status, Status::wrong_answer);
  EXPECT_EQ(f.log, e.log);
  EXPECT_DOUBLE_EQ(f.time.median_us, 2.25);
  EXPECT_EQ(f.acc.mismatches, 7);
  EXPECT_DOUBLE_EQ(f.acc.rel_l2, 1.0 / 3);
  EXPECT_EQ(f.acc.inputs_written, 12);
  EXPECT_EQ(f.acc.written_input, "x");
  EXPECT_EQ(f.acc.summary(), e.acc.summary());
  EXPECT_THROW(wire::parse("[not, a, map]"), Error);
}

// Every field the wire's structs list crosses it: each set to a value of its own, all come back.
TEST(Wire, EveryListedFieldRoundTrips) {
  int i = 0;
  const auto round = [](const YAML::Node& n) { return wire::parse(wire::emit(n)); };
  const auto d = test::distinct<DeviceInfo>(i);
  test::expect_fields_equal(wire::decode_device(round(wire::encode(d))), d, "device");
  const auto b = test::distinct<TaskBaseline>(i);
  test::expect_fields_equal(wire::decode_baseline(round(wire::encode(b))), b, "baseline");
  const auto o = test::distinct<CudaEvalOptions>(i);
  test::expect_fields_equal(wire::decode_eval_options(round(wire::encode(o))), o, "options");
  EvalResult e;
  e.time = test::distinct<Timing>(i);
  e.acc = test::distinct<Accuracy>(i);
  EvalResult f;
  wire::decode_outcome(round(wire::encode_outcome(e)), f);
  test::expect_fields_equal(f.time, e.time, "time");
  test::expect_fields_equal(f.acc, e.acc, "acc");
}

// Every evaluation option reaches the worker: each set away from its default, all come back.
TEST(Wire, EvaluationOptionsRoundTripWhole) {
  int i = 0;
  const auto o = test::distinct<CudaEvalOptions>(i);
  const auto back = wire::decode_eval_options(wire::parse(wire::emit(wire::encode(o))));
  EXPECT_TRUE(back == o);
  EXPECT_FALSE(back == CudaEvalOptions{});
  auto n = wire::encode(o);
  n["min_reps"] = std::vector<int>{12};
  EXPECT_THROW(wire::decode_eval_options(n), Error);
  n = wire::encode(o);
  n.remove("target_cv");
  EXPECT_THROW(wire::decode_eval_options(n), Error);
}

// The worker applies the launch limits again: ptxas's notes must reach it intact.
TEST(Wire, ResourcesKeepPtxasNotes) {
  Resources r;
  r.registers = 168;
  r.spill_loads = 4;
  r.smem_static = 1024;
  r.parsed = true;
  r.notes = {{PtxasNote::Kind::wgmma_serialized,
              "(C7519) warpgroup.arrive is injected in around line 1755 by compiler to allow use of registers in GMMA "
              "in function '_Z4gemmv'", 13},
             {PtxasNote::Kind::setmaxnreg_ignored,
              "(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.", 1}};
  for (const auto& sent : {r, Resources{}}) {
    const Resources back = wire::decode_resources(wire::parse(wire::emit(wire::encode(sent))));
    EXPECT_EQ(back.registers, sent.registers);
    EXPECT_EQ(back.spill_loads, sent.spill_loads);
    EXPECT_EQ(back.smem_static, sent.smem_static);
    EXPECT_EQ(back.parsed, sent.parsed);
    ASSERT_EQ(back.notes.size(), sent.notes.size());
    for (size_t i = 0; i < sent.notes.size(); ++i) {
      EXPECT_EQ(back.notes[i].kind, sent.notes[i].kind);
      EXPECT_EQ(back.notes[i].line, sent.notes[i].line);
      EXPECT_EQ(back.notes[i].count, sent.notes[i].count);
    }
  }
}

}  // namespace
}  // namespace soltune
