#pragma once
// A tuning task: one variant of one problem at one shape and dtype, and the evaluator interface that
// turns configurations of a task into results. src/eval implements it; search and agents use it.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "core/measure.hpp"
#include "core/predictor.hpp"
#include "core/problem.hpp"
#include "core/sol.hpp"

namespace soltune {

struct Shape {
  std::vector<std::pair<std::string, int64_t>> dims;  // in the problem's size order
  std::string key() const;                             // "n=268435456"
  int64_t at(const std::string& name) const;
};
// The parts of a canonical key, shape or configuration alike ("m=4096,n=1024" -> {{m, 4096}, {n,
// 1024}}), in order; nullopt where a part is not name=integer.
std::optional<std::vector<std::pair<std::string, int64_t>>> key_values(const std::string& key);
// The inverse of Shape::key() for a knowledge base's shape key: "m=4096,n=1024" -> the problem's
// Shape, checked against its sizes (throws Error otherwise).
Shape parse_shape(const ProblemSpec& p, const std::string& key);

struct Task {
  const ProblemSpec* problem = nullptr;
  const VariantSpec* variant = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  // Measures the variant's fallback configuration only: the run's variants leave out the problem's
  // fallback variant, which is still measured once per dtype so that export has it (config_tasks).
  bool fallback_only = false;

  std::string id() const;  // "gelu/vectorized/f32/n=268435456"
  // "f32/n=268435456": what the variants of a problem share (a baseline, a competition for the shape).
  std::string dtype_shape() const;
  Bindings sizes() const;  // the shape's sizes and dtype_bytes
  // Sizes, dtype_bytes and the device symbols: what constraints and geometry see besides knobs.
  Bindings fixed(const DeviceInfo& d) const;
  double flops() const;
  double bytes() const;
  // Speed of light on a device: the FLOPs at the rate of the problem's compute ceiling for this
  // dtype, or the bytes at the better of the copy and read bandwidths, whichever takes longer.
  double t_sol_us(const Ceilings& c) const;
};

// Why a variant cannot run on a device (its `arch` is another compute capability's), or "".
std::string why_variant_cannot_run(const VariantSpec& v, const DeviceInfo& d);
// The NVRTC target of a variant's candidates: its own `arch`, or the run's.
std::string variant_arch(const VariantSpec& v, const std::string& run_arch);

// Device symbol values for expressions (sms, cc, smem_optin, l2_bytes).
void bind_device(Bindings& b, const DeviceInfo& d);
// Evaluates a launch's geometry for the bindings; throws Error on a non-positive dimension.
Geometry eval_geometry(const LaunchSpec& l, const Bindings& b);
// Number of elements of a buffer argument for the bindings; a vector buffer's lanes are among them
// (its shape ends with them).
int64_t buffer_elements(const ArgSpec& a, const Bindings& b);
// The device memory a task's measurement holds besides a candidate's own scratch: every buffer of
// the problem (an input once per set), the reference's double per output element and magnitude,
// an inout buffer's copy of what was drawn, and the baseline's temporaries; workspaces, which are
// sized by the device, are left out. A shape needing more than the device has cannot be tuned.
double task_device_bytes(const Task& t, int input_sets = 1);

// What a task is measured against.
struct TaskBaseline {
  double t_ref_us = 0;     // the problem's baseline (unfused) time
  std::string source;      // what T_ref times: the library's label ("cuBLAS") or the baseline kernels'
  double t_sol_us = 0;     // speed of light on this device
  double flops = 0, bytes = 0;
  TimeKind kind = TimeKind::measured;
  Timing ref_timing;       // the baseline's timing, repetitions and spread
  std::string note;        // e.g. the baseline's own accuracy check
  bool replayed = false;   // taken from the knowledge base when a run resumes
  std::string skipped;     // non-empty: not timed, since its timing would outlast the limit given (why)
};
// What a worker measures of a baseline (kind and replayed are the parent's to set).
SOLTUNE_FIELDS(TaskBaseline, t_ref_us, source, t_sol_us, flops, bytes, ref_timing, note, skipped);

// Medians from an interleaved re-timing: the baseline's and each configuration's, one per round.
struct Retimed {
  std::vector<double> baseline_us;
  std::vector<std::vector<double>> config_us;
  // Per configuration: "" or why a checked repetition of its re-timing failed (then it is wrong).
  std::vector<std::string> failed;
};

// How busy the GPU was: seconds spent serving requests (candidates, baselines, re-timing) over the
// wall time since the first candidate reached it (the first compile batch excluded).
struct GpuUse {
  double busy_s = 0, wall_s = 0;
  double compile_wait_s = 0;  // of the idle time: waiting for a candidate's compile to finish
  double fraction() const { return wall_s > 0 ? busy_s / wall_s : 0; }
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual const DeviceInfo& device() const = 0;
  virtual std::string backend_name() const = 0;  // "cuda", "model"
  virtual TimeKind kind() const = 0;
  // Times (or predicts) the problem's baseline for the task, and derives T_SOL.
  virtual TaskBaseline baseline(const Task& t) = 0;
  // The same within a time limit: a baseline whose timing would take longer than limit_s, judged
  // from its first (checked) run, is not timed, and TaskBaseline::skipped says why. The default
  // (a backend whose baselines cost no GPU time) ignores the limit.
  virtual TaskBaseline baseline_within(const Task& t, double limit_s) { (void)limit_s; return baseline(t); }
  // Compiles the configurations in parallel, then checks and times them one after another.
  // A candidate's failure is a status in its result; only infrastructure failures throw.
  virtual std::vector<EvalResult> evaluate(const Task& t, const std::vector<Config>& configs) = 0;
  // The configurations the caller will evaluate next: a backend that compiles may start now, so that
  // its compiles run while the GPU measures the batch before them. A hint; the default ignores it.
  // It may be called from another thread while evaluate() runs (a task's next batch is known
  // while its current one is measured).
  virtual void prefetch(const Task& t, const std::vector<Config>& configs) { (void)t, (void)configs; }
  // Where the run's budget ends: compiles still running then are stopped, and evaluate() returns no
  // result for a configuration whose compile was stopped or whose turn on the GPU came after it (the
  // results it returns are the first ones of the batch, in order). nullopt: no deadline.
  virtual void set_deadline(std::optional<std::chrono::steady_clock::time_point> at) { deadline_ = at; }

 protected:
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  bool past_deadline() const { return deadline_ && std::chrono::steady_clock::now() >= *deadline_; }

 public:
  // A predictor of the task's configurations from what exists before the GPU times them (the
  // static report: ptxas resources, geometry), for the search's screen; null where there is none.
  virtual std::unique_ptr<Predictor> predictor(const Task& t) { (void)t; return nullptr; }
  // The GPU's busy fraction so far, where the backend drives one.
  virtual std::optional<GpuUse> gpu_use() const { return std::nullopt; }
  // A result obtained elsewhere (replayed from the knowledge base): the evaluator's own state, such
  // as the incumbent for early stops, learns it as if it had measured it.
  virtual void note_result(const Task& t, const EvalResult& r) { (void)t, (void)r; }
  // Times the baseline and the given configurations interleaved (baseline, each config; again, for
  // `rounds` rounds), so their ratios hold on a noisy machine. nullopt where the backend cannot.
  virtual std::optional<Retimed> retime(const Task& t, const std::vector<Config>& configs, int rounds) {
    (void)t, (void)configs, (void)rounds;
    return std::nullopt;
  }
};

}  // namespace soltune
