// GPU tests (label gpu): the timing gate makes every timed repetition measure GPU time only.
// The launch under test is two one-warp kernels with the CPU asleep between them: a few
// microseconds of GPU work. Ungated, the GPU records the start event, runs the first kernel and
// idles until the CPU wakes up, and the sleep is counted; gated, the clock starts only once the
// whole repetition is queued. These run in this process through the same time_launches that
// times the baseline and every candidate.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "eval/cuda_devices.hpp"
#include "eval/timing_loop.hpp"
#include "gpu_fixture.hpp"

namespace soltune {
namespace {

using std::chrono::microseconds;

CudaEvalOptions options(bool gate) {
  CudaEvalOptions o;
  o.target_ms = 1;  // with microsecond repetitions: min_reps
  o.min_reps = 10;
  o.max_reps = 10;
  o.warmup = 1;
  o.extra_batches = 0;
  o.measure_ceilings = false;
  o.timing.gate = gate;
  o.seed = 5;
  return o;
}

class TimingGateGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SOLTUNE_REQUIRE_GPU();
    SOLTUNE_CUDA(cudaSetDevice(0));
    dev_ = cuda_device(0);
    problem_ = load_problem(test::source_dir() / "templates", "gelu");
    // Any task gives a TaskState (stream, flush buffer, builtins, gate); the launches below are the test's own.
    task_ = Task{&problem_, &problem_.variants.front(), DType::f32, Shape{{{"n", int64_t{4096}}}}};
    st_ = std::make_unique<TaskState>(task_, dev_, compiler_, dev_.arch(), 1);
    out_ = DeviceBuffer(32 * sizeof(float));
  }
  // Times two launches of a one-warp FMA kernel (`iters` rounds of 8 dependent FMA chains) with the
  // CPU asleep for sleep(call) between them (call: launches made before, warm-up included).
  TimingOutcome time_two_kernels(const CudaEvalOptions& o, const std::function<microseconds(int)>& sleep,
                                 int iters = 4) {
    const cudaKernel_t k = st_->builtins().at("soltune_fma_probe");
    Geometry g;
    g.block = {32, 1, 1};
    void* p = out_.get();
    float a = 0.999f, b = 1e-3f;
    void* args[] = {&p, &iters, &a, &b};
    int call = 0;
    return time_launches(*st_, o, [&](int) {
      if (auto e = launch_kernel(k, g, args, st_->stream()); e != cudaSuccess) return e;
      std::this_thread::sleep_for(sleep(call++));
      return launch_kernel(k, g, args, st_->stream());
    }, TimingPlan{});
  }

  Compiler compiler_{default_compiler_options()};
  DeviceInfo dev_;
  ProblemSpec problem_;
  Task task_;
  std::unique_ptr<TaskState> st_;
  DeviceBuffer out_;
};

// The CPU sleeps 2 ms inside every repetition: gated, the median is the kernels' time; ungated it
// holds the sleep (less the ~25 us L2 flush the GPU runs before the start event while the CPU is
// still queueing), so this test fails if the gate does not hold the stream.
TEST_F(TimingGateGpu, CpuSleepInsideTheLaunchesIsNotTimed) {
  const auto two_ms = [](int) { return microseconds(2000); };
  const auto gated = time_two_kernels(options(true), two_ms);
  const auto ungated = time_two_kernels(options(false), two_ms);
  std::printf("two tiny kernels, CPU asleep 2 ms between them: median %.1f us gated (%d reps, %d gate timeouts), "
              "%.1f us ungated\n",
              gated.time.median_us, gated.time.reps, gated.gate_timeouts, ungated.time.median_us);
  ASSERT_EQ(gated.err, cudaSuccess) << cuda_error_text(gated.err);
  ASSERT_EQ(ungated.err, cudaSuccess) << cuda_error_text(ungated.err);
  EXPECT_EQ(gated.gate_timeouts, 0) << gated.note;
  EXPECT_TRUE(gated.note.empty()) << gated.note;
  EXPECT_EQ(gated.time.reps, 10);
  EXPECT_LT(gated.time.median_us, 500);
  EXPECT_LT(gated.time.max_us, 500) << "every gated repetition must exclude the sleep";
  EXPECT_GE(ungated.time.median_us, 1500) << "without the gate the sleep should be counted: the test cannot fail";
}

// A CPU far ahead of the GPU: a hundred repetitions of ~0.1 ms or more each are queued in a few
// milliseconds, so every gate is released long before the GPU reaches it (and the CPU may block on
// a full launch queue meanwhile). None may time out, and the gate must add no time of its own: the
// ungated median, which has no CPU gap to count here, is the same.
TEST_F(TimingGateGpu, GatesQueuedFarAheadPassAtOnce) {
  auto o = options(true);
  o.min_reps = o.max_reps = 100;
  const auto no_sleep = [](int) { return microseconds(0); };
  const auto gated = time_two_kernels(o, no_sleep, 50000);
  o.timing.gate = false;
  const auto ungated = time_two_kernels(o, no_sleep, 50000);
  std::printf("two 1-warp kernels of 50000 FMA rounds, no sleep: median %.1f us gated (max %.1f, %d reps, %d gate "
              "timeouts), %.1f us ungated\n",
              gated.time.median_us, gated.time.max_us, gated.time.reps, gated.gate_timeouts, ungated.time.median_us);
  ASSERT_EQ(gated.err, cudaSuccess) << cuda_error_text(gated.err);
  ASSERT_EQ(ungated.err, cudaSuccess) << cuda_error_text(ungated.err);
  EXPECT_EQ(gated.gate_timeouts, 0) << gated.note;
  EXPECT_EQ(gated.time.reps, 100);
  EXPECT_GT(gated.time.median_us, 50);  // sanity: the kernels were not compiled away
  EXPECT_NEAR(gated.time.median_us, ungated.time.median_us, 0.1 * ungated.time.median_us);
}

// The settle (the run config's timing: settle_us) idles the stream between the flush and the start
// event: each repetition waits that long, and none of it is timed.
TEST_F(TimingGateGpu, SettleWaitsOutsideTheTimedWindow) {
  auto o = options(true);
  o.timing.settle_us = 2000;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = time_two_kernels(o, [](int) { return microseconds(0); });
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("two tiny kernels after a 2 ms settle: median %.1f us, %d reps in %.1f ms of wall time\n",
              r.time.median_us, r.time.reps, wall_ms);
  ASSERT_EQ(r.err, cudaSuccess) << cuda_error_text(r.err);
  EXPECT_EQ(r.time.reps, 10);
  EXPECT_LT(r.time.max_us, 500) << "the settle fell inside the timed window";
  EXPECT_GE(wall_ms, 10 * 2.0) << "ten repetitions, each after a 2 ms settle";
}

// With a 1 ms gate timeout, every other launch sleeps 5 ms: those gates time out, and their
// repetitions (which hold ~4 ms of CPU gap) are dropped and run again; what is kept is clean,
// and the note says what happened.
TEST_F(TimingGateGpu, RepetitionsWhoseGateTimedOutAreDropped) {
  auto o = options(true);
  o.gate_timeout_ms = 1;
  const auto r = time_two_kernels(o, [](int call) { return microseconds(call % 2 ? 5000 : 0); });
  std::printf("every other launch sleeps 5 ms past a 1 ms gate: %d dropped, %d kept, median %.1f us, max %.1f us; "
              "note: %s\n",
              r.gate_timeouts, r.time.reps, r.time.median_us, r.time.max_us, r.note.c_str());
  ASSERT_EQ(r.err, cudaSuccess) << cuda_error_text(r.err);
  EXPECT_GT(r.gate_timeouts, 0);
  EXPECT_GT(r.time.reps, 0);
  EXPECT_LT(r.time.max_us, 500) << "a repetition with a CPU gap entered the median";
  EXPECT_NE(r.note.find("dropped"), std::string::npos) << r.note;
}

}  // namespace
}  // namespace soltune
