// Resuming (run/resume.hpp) over a knowledge base written here: the run found, its results and
// baseline loaded, its budget's seconds left, and each setting that differs refused with both values.
#include "run/resume.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "../kb/kb_fixture.hpp"

namespace soltune {
namespace {

class ResumeTest : public test::KbFixture {
 protected:
  ResumeTest() : KbFixture("resume_") {}
  RunInfo info(const std::string& settings = "seed=7\nevals=40") const {
    RunInfo i;
    i.config_path = "configs/gelu.yaml";
    i.problem = "gelu";
    i.backend = "cuda";
    i.toolchain = "nvrtc 13.0";
    i.settings = settings;
    i.pid = 999999999;  // no such process: the run is not going
    i.host = this_host();
    return i;
  }
  // An interrupted run with one baseline and two results.
  int64_t interrupted(KnowledgeBase& kb, int64_t gpu) {
    const int64_t run = kb.begin_run(info(), gpu);
    TaskBaseline b;
    b.t_ref_us = 100;
    b.t_sol_us = 10;
    kb.record_baseline(run, task("vectorized", DType::f32, 4096), b);
    for (const auto& [key, us] : {std::pair{"V=1", 20.0}, std::pair{"V=2", 15.0}}) {
      EvalResult r = untimed_result(key, Status::ok, TimeKind::measured);
      r.time.median_us = us;
      r.time.reps = 10;
      kb.record(run, task("vectorized", DType::f32, 4096), "h", r, {us, 100, 10, 0.5, 0.5, false, true});
    }
    kb.finish_run(run, "interrupted");
    return run;
  }
};

TEST_F(ResumeTest, TheInterruptedRunIsFoundWithWhatItRecorded) {
  auto kb = KnowledgeBase::open(dir_ / "kb.sqlite");
  const int64_t gpu = kb.gpu_id(real_, TimeKind::measured);
  const int64_t run = interrupted(kb, gpu);
  const auto p = resume_run(kb, info(), gpu, Budget{40, 0});
  EXPECT_EQ(p.run, run);
  EXPECT_EQ(p.config_path, "configs/gelu.yaml");
  const auto id = task("vectorized", DType::f32, 4096).id();
  ASSERT_EQ(p.recorded.results.count(id), 1u);
  EXPECT_EQ(p.recorded.results.at(id).size(), 2u);
  EXPECT_EQ(p.recorded.results.at(id).at("V=2").time.median_us, 15.0);
  EXPECT_EQ(p.recorded.baselines.at(id).t_ref_us, 100.0);
  EXPECT_EQ(kb.runs().front().status, "running");  // marked running again
}

TEST_F(ResumeTest, EverySettingThatDiffersIsNamedWithBothValues) {
  auto kb = KnowledgeBase::open(dir_ / "kb.sqlite");
  const int64_t gpu = kb.gpu_id(real_, TimeKind::measured);
  interrupted(kb, gpu);
  RunInfo now = info("seed=8\nevals=40");
  now.backend = "model";
  try {
    resume_run(kb, now, kb.gpu_id(model_, TimeKind::predicted), Budget{40, 0});
    FAIL() << "resumed with other settings";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("was started with other settings"), std::string::npos) << what;
    EXPECT_NE(what.find("seed: 7 then, 8 now"), std::string::npos) << what;
    EXPECT_NE(what.find("backend: cuda then, model now"), std::string::npos) << what;
    EXPECT_NE(what.find("GPU: NVIDIA H200 GPU-0123-4567 then, NVIDIA H200  now"), std::string::npos) << what;
  }
  EXPECT_EQ(kb.runs().front().status, "interrupted");  // left as it was
}

TEST_F(ResumeTest, ARunStillGoingOrNoneAtAllIsRefused) {
  auto kb = KnowledgeBase::open(dir_ / "kb.sqlite");
  const int64_t gpu = kb.gpu_id(real_, TimeKind::measured);
  EXPECT_THROW(
      {
        try {
          resume_run(kb, info(), gpu, Budget{40, 0});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("holds no unfinished run of configs/gelu.yaml"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  // A run whose process is alive but another program (its pid reused) is not going: resumed.
  RunInfo reused = info();
  reused.pid = getpid();  // this test: alive, not soltune
  const int64_t first = kb.begin_run(reused, gpu);
  EXPECT_EQ(resume_run(kb, info(), gpu, Budget{40, 0}).run, first);

  // A soltune process alive on this host (a child whose argv[0] says so) is going: refused.
  const pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "soltune", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(child, 0);
  for (int i = 0; i < 200 && test::read_file("/proc/" + std::to_string(child) + "/cmdline").find("soltune") != 0; ++i)
    usleep(10000);  // until the child has exec'd
  RunInfo going = info();
  going.pid = child;
  kb.finish_run(first, "finished");
  kb.begin_run(going, gpu);
  try {
    resume_run(kb, info(), gpu, Budget{40, 0});
    ADD_FAILURE() << "resumed a run that is still going";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is still going: soltune process " + std::to_string(child)), std::string::npos)
        << e.what();
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace soltune
