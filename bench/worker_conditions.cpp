// Bench (not a test): RMSNorm kernels timed in this process several ways, to find where soltune's
// figure parts from an outside harness's (docs/BENCHMARKS.md, session 11): by CudaRunner::run, as
// soltune's GPU worker times a candidate (correctness rounds, then the timed loop); by the same
// timed loop (time_launches) on a TaskState of its own; and by bare loops (a flush, CUDA events and
// the launch, nothing else) on that TaskState, on buffers of the bench's own, with a flush buffer
// of its own.
//   worker_conditions TEMPLATES ROWS COLS CEILINGS ROUNDS VARIANT:KEY...
// CEILINGS 1 measures the ceilings first, as the worker does at start (2 GiB buffers and probes).
// With CEILINGS "steps", it times a bare loop on buffers and a stream of its own only, from a fresh
// process on, after each piece of the worker's state is added in turn (NVML, mapped host memory,
// 2 GiB allocated and untouched, a TaskState, a CudaRunner), after CudaRunner::run of each kernel
// and after idling, then borrowing the TaskState's stream, its flush kernel handle or its events
// (one at a time, then all three), on a stream made then, on buffers allocated then, on the
// TaskState's buffers, with the kernels loaded again, with the TaskState's flush_l2, and then
// soltune's timed loop (time_launches) on the TaskState's buffers and on the bench's, gated and not,
// CudaRunner::run's steps one by one and its body copied, the same CUBINs loaded several times,
// and at the end fresh buffers with and without `looped` timed first: the step that found the
// cause (session 12: `looped` leaves x's lines in L2 under evict_last, past the flush). The names
// of the steps are printed with their rows; "steps-nvml-first" and "steps-runner-first" start NVML
// or a CudaRunner before anything is allocated.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "eval/candidates.hpp"
#include "eval/cuda_devices.hpp"
#include "eval/cuda_runner.hpp"
#include "eval/nvml_clock.hpp"
#include "eval/timing_loop.hpp"

using namespace soltune;

namespace {

// Three launches to warm up, then `reps` times queued: flush, start event, launch, end event; one
// synchronisation, and the median in microseconds.
double bare_loop_us(cudaStream_t s, const std::function<void()>& flush, const std::function<cudaEvent_t(int)>& event,
                    const std::function<cudaError_t()>& launch, int reps) {
  for (int i = 0; i < 3; ++i) SOLTUNE_CUDA(launch());
  SOLTUNE_CUDA(cudaStreamSynchronize(s));
  for (int r = 0; r < reps; ++r) {
    flush();
    SOLTUNE_CUDA(cudaEventRecord(event(2 * r), s));
    SOLTUNE_CUDA(launch());
    SOLTUNE_CUDA(cudaEventRecord(event(2 * r + 1), s));
  }
  SOLTUNE_CUDA(cudaStreamSynchronize(s));
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    float ms = 0;
    SOLTUNE_CUDA(cudaEventElapsedTime(&ms, event(2 * r), event(2 * r + 1)));
    us.push_back(ms * 1e3);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// soltune's flush kernel (a handle of the builtins) over a buffer of this bench's own, as the
// TaskState launches it over its own.
void flush_with(cudaKernel_t k, const DeviceBuffer& f, cudaStream_t s) {
  void* p = f.get();
  long long words = static_cast<long long>(f.bytes() / 16);
  void* args[] = {&p, &words, &p};  // the sink: written only if the buffer's xor hits a magic value, never here
  SOLTUNE_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(1056), dim3(256), args, 0, s));
}

// A buffer of n floats uniform in [-2, 2) (an outside harness's inputs), through a host copy.
DeviceBuffer host_filled(long long n, unsigned seed) {
  std::vector<float> h(static_cast<size_t>(n));
  unsigned v = seed;
  for (auto& x : h) {
    v = v * 1664525u + 1013904223u;
    x = static_cast<float>(v >> 8) * (4.0f / 16777216.0f) - 2.0f;
  }
  DeviceBuffer b(h.size() * sizeof(float));
  SOLTUNE_CUDA(cudaMemcpy(b.get(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  return b;
}

}  // namespace

// What a step's bare loop uses instead of its own (null: its own): a TaskState's stream, flush kernel
// handle or events, other x, w, y and flush buffers, or kernel handles loaded again.
struct Borrowed {
  cudaStream_t stream = nullptr;
  cudaKernel_t flush = nullptr;
  TaskState* events = nullptr;
  void *x = nullptr, *w = nullptr, *y = nullptr;
  const DeviceBuffer* flush_buf = nullptr;
  const std::vector<cudaKernel_t>* kernels = nullptr;
  bool state_flush = false;              // the TaskState's flush_l2 (its own buffer), on its stream
  const CudaEvalOptions* loop = nullptr;  // time_launches on the TaskState (`events`) with these options
  bool state_sets = false;                // the loop launches on the TaskState's input sets in turn, as soltune does
  bool verify = false;                    // the loop checks repetitions of each batch, as CudaRunner::run asks
  bool fresh_module = false;              // each kernel loaded just before its loop, unloaded after
  bool rounds = false;                    // CudaRunner::run's correctness rounds before each loop
  const SmClock* nvml = nullptr;          // the SM clock read before and after each loop, as run does
  bool random_pick = false;               // two checked repetitions per batch, as run checks, not one
  size_t first = 0;                       // the first kernel (column) timed: 1 leaves `looped` out
};

// " [min q1 q3 max]" of a timing, in us: is a slow median a shift of every repetition or a mixture?
std::string spread(const Timing& t) {
  char buf[96];
  std::snprintf(buf, sizeof buf, " [%.2f %.2f %.2f %.2f]", t.min_us, t.q1_us, t.q3_us, t.max_us);
  return buf;
}

// The bare loop (this bench's own x, w, y and flush buffer, soltune's flush kernel) for each kernel,
// on a stream of its own: no TaskState needed, unless a step borrows its stream, flush kernel
// handle or events.
void steps(const std::vector<std::pair<std::string, const Candidate*>>& ks, const std::vector<cudaKernel_t>& hs,
           const std::vector<const CompileResult*>& compiled, cudaKernel_t flush_k, const LaunchSpec& spec, long long rows, long long cols,
           const std::function<Borrowed(int)>& add_piece, int pieces, const char* const* names) {
  DeviceBuffer x = host_filled(rows * cols, 1), w = host_filled(cols, 2), y(rows * cols * 4), f(size_t{256} << 20);
  SOLTUNE_CUDA(cudaMemset(f.get(), 0x5A, f.bytes()));
  cudaStream_t own;
  SOLTUNE_CUDA(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
  std::vector<Event> ev(400);
  void *px = x.get(), *pw = w.get(), *py = y.get();
  long long r_ = rows, c_ = cols;
  float eps = 1e-6f;
  void* args[] = {&px, &pw, &py, &r_, &c_, &eps};
  for (int piece = 0; piece <= pieces; ++piece) {
    const Borrowed b = piece > 0 ? add_piece(piece - 1) : Borrowed{};
    const cudaStream_t s = b.stream ? b.stream : own;
    const cudaKernel_t fk = b.flush ? b.flush : flush_k;
    const DeviceBuffer& fb = b.flush_buf ? *b.flush_buf : f;
    const auto& kh = b.kernels ? *b.kernels : hs;
    px = b.x ? b.x : x.get();
    pw = b.w ? b.w : w.get();
    py = b.y ? b.y : y.get();
    auto event = [&](int i) { return b.events ? b.events->event(static_cast<size_t>(i)).get() : ev[static_cast<size_t>(i)].get(); };
    std::printf("%-44s", names[piece]);
    for (size_t i = 0; i < b.first; ++i) std::printf(" %8s", "-");
    for (size_t i = b.first; i < ks.size(); ++i) {
      auto launch = [&] { return launch_kernel(kh[i], ks[i].second->result.geo, args, s); };
      if (b.loop) {  // soltune's timed loop itself, on these buffers or on the TaskState's sets in turn
        TaskState& st = *b.events;
        LoadedModule mod;
        cudaKernel_t k = kh[i];
        if (b.fresh_module) {
          std::string log;
          SOLTUNE_CUDA(LoadedModule::load(*compiled[i], mod, log));
          k = mod.at(ks[i].second->name_expr);
        }
        if (b.rounds) {
          auto a = st.args(spec, 0, false);
          for (int round = 0; round < st.distributions(); ++round) {
            st.draw_inputs(0, round);
            st.run_reference(0);
            st.poison_outputs();
            SOLTUNE_CUDA(launch_kernel(k, ks[i].second->result.geo, a.ptrs.data(), s));
            SOLTUNE_CUDA(cudaStreamSynchronize(s));
            Accuracy acc;
            st.compare_outputs(acc);
          }
        }
        if (b.nvml) (void)b.nvml->mhz();
        const auto o = time_launches(st, *b.loop, [&](int set) {
          if (!b.state_sets) return launch_kernel(k, ks[i].second->result.geo, args, s);
          auto a = st.args(spec, set, false);
          return launch_kernel(k, ks[i].second->result.geo, a.ptrs.data(), s);
        }, TimingPlan{0, b.verify ? (b.random_pick ? 2 : 1) : 0});
        if (b.nvml) (void)b.nvml->mhz();
        SOLTUNE_CUDA(o.err);
        std::printf(" %8.2f%s", o.time.median_us, spread(o.time).c_str());
        continue;
      }
      auto flush = [&] {
        if (b.state_flush)
          SOLTUNE_CUDA(b.events->flush_l2());
        else
          flush_with(fk, fb, s);
      };
      std::printf(" %8.2f", bare_loop_us(s, flush, event, launch, 200));
    }
    // Where the buffers sit: a translation-cache effect would follow their addresses.
    if (b.state_sets) {
      const auto a = b.events->args(spec, 0, false);
      std::printf("   TaskState's x %p y %p\n", a.values.at(0), a.values.at(2));
    } else {
      std::printf("   x %p y %p flush %p\n", px, py, fb.get());
    }
  }
  SOLTUNE_CUDA(cudaStreamDestroy(own));
}

// CudaRunner::run's body copied here step for step (its private members replaced by what it holds:
// the device, options and an SM clock), with parts that can be left out (`skip`: 1 the device
// limits and occupancy, 2 the shared-memory attribute, 4 the SM clock reads, 8 the correctness
// rounds): where does run's extra microsecond come from?
void run_copy(TaskState& st, const DeviceInfo& dev, const CudaEvalOptions& opt, const SmClock& clock, const Task& t,
              Candidate& c, const CompileResult& r, int skip) {
  auto& res = c.result;
  if (!(skip & 1)) {
    if (auto why = launch_limits(res.res, res.geo, dev); !why.empty()) throw Error(why);
    res.occupancy_blocks = occupancy_blocks_per_sm(res.res, res.geo, dev);
  }
  LoadedModule mod;
  SOLTUNE_CUDA(LoadedModule::load(r, mod, res.log));
  const cudaKernel_t k = mod.at(c.name_expr);
  if (!(skip & 2) && res.geo.smem + res.res.smem_static > 48 * 1024)
    SOLTUNE_CUDA(cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(res.geo.smem), 0));
  auto launch = [&](int set) {
    auto a = st.args(t.variant->launch, set, false);
    return launch_kernel(k, res.geo, a.ptrs.data(), st.stream());
  };
  res.acc = Accuracy{};
  const int rounds = (skip & 8) ? 0 : std::max(opt.check_rounds, st.distributions());
  for (int round = 0; round < rounds; ++round) {
    st.draw_inputs(0, round);
    st.run_reference(0);
    st.poison_outputs();
    SOLTUNE_CUDA(launch(0));
    SOLTUNE_CUDA(cudaStreamSynchronize(st.stream()));
    st.compare_outputs(res.acc);
    res.acc.rounds = round + 1;
  }
  if (!(skip & 4)) (void)clock.mhz();
  TimingPlan plan;
  plan.incumbent_us = 0;
  plan.checks_per_batch = 2;
  const auto timed = time_launches(st, opt, launch, plan);
  SOLTUNE_CUDA(timed.err);
  res.time = timed.time;
  if (!(skip & 4)) (void)clock.mhz();
  Accuracy after;
  st.check_workspaces(after);
}

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: worker_conditions TEMPLATES ROWS COLS CEILINGS ROUNDS VARIANT:KEY...\n");
    return 2;
  }
  try {
    const auto problem = load_problem(argv[1], "rmsnorm");
    const Shape shape{{{"rows", std::stoll(argv[2])}, {"cols", std::stoll(argv[3])}}};
    CudaEvalOptions o;
    // "steps", or "steps-nvml-first" / "steps-runner-first": NVML, or a CudaRunner (NVML included),
    // started before this bench allocates anything, as soltune's worker starts.
    const std::string mode = argv[4];
    const bool step_mode = mode.rfind("steps", 0) == 0;
    o.measure_ceilings = !step_mode && std::stoi(argv[4]) != 0;
    const int rounds = std::stoi(argv[5]);
    Compiler compiler(default_compiler_options());
    const DeviceInfo dev = cuda_device(0);
    const std::string arch = dev.arch();
    SOLTUNE_CUDA(cudaSetDevice(0));
    std::unique_ptr<CudaRunner> runner_ptr;
    if (!step_mode) runner_ptr = std::make_unique<CudaRunner>(0, compiler, arch, o);

    struct Kernel {
      Task task;
      Candidate cand;
      CompileResult compiled;
    };
    std::vector<Kernel> ks;
    for (int i = 6; i < argc; ++i) {
      const std::string spec = argv[i];
      const auto colon = spec.find(':');
      const Task t{&problem, &problem.variant(spec.substr(0, colon)), DType::f32, shape};
      const Space space(*t.variant, t.fixed(dev));
      auto batch = prepare_candidates(t, dev, arch, {space.parse_key(spec.substr(colon + 1))});
      if (batch.requests.size() != 1) throw Error(spec + ": not a legal configuration here");
      Kernel k{t, batch.candidates.front(), compiler.compile(batch.requests.front())};
      if (!take_compile_result(k.cand, k.compiled)) throw Error(spec + ": " + k.cand.result.log);
      ks.push_back(std::move(k));
    }
    const long long rows = std::stoll(argv[2]), cols = std::stoll(argv[3]);
    if (step_mode) {
      std::vector<std::pair<std::string, const Candidate*>> list;
      std::vector<LoadedModule> mods(ks.size());
      std::vector<cudaKernel_t> hs;
      for (size_t i = 0; i < ks.size(); ++i) {
        std::string log;
        SOLTUNE_CUDA(LoadedModule::load(ks[i].compiled, mods[i], log));
        hs.push_back(mods[i].at(ks[i].cand.name_expr));
        list.emplace_back(ks[i].cand.result.key, &ks[i].cand);
      }
      LoadedModule builtins;
      std::string log;
      SOLTUNE_CUDA(LoadedModule::load(
          compiler.compile(CompileRequest{builtin_kernels_source(), "soltune_builtins.cu", builtin_name_expressions(), arch, {}}),
          builtins, log));
      std::unique_ptr<SmClock> clock;
      MappedHostBuffer mapped;
      DeviceBuffer untouched;
      std::unique_ptr<TaskState> state;
      std::unique_ptr<CudaRunner> runner, runner1;
      std::unique_ptr<TaskState> state1, state2;
      const char* names[] = {"fresh process", "+ NVML (SmClock)", "+ mapped host memory", "+ 2 GiB allocated, untouched",
                             "+ a TaskState", "+ a CudaRunner (no ceilings)", "after CudaRunner::run of each kernel",
                             "after 3 s idle", "with the TaskState's stream", "with the TaskState's flush kernel",
                             "with the TaskState's events", "with all three", "on a stream made now",
                             "on this bench's stream again", "on x, w, y and flush allocated now",
                             "on the TaskState's x, w, y (own flush)", "with the kernels loaded again",
                             "on x, w, y and flush allocated now, again", "on this bench's buffers again",
                             "with the TaskState's flush_l2 (its buffer)", "all the TaskState's (flush_l2, x, w, y)",
                             "time_launches on the TaskState, its x, w, y", "  the same, gate off",
                             "time_launches, this bench's x, w, y", "  the same, gate off",
                             "on this bench's buffers again", "time_launches, the TaskState's sets in turn",
                             "  set 0 drawn as the edge round", "  bare loop on set 0 (edge)",
                             "  set 0 drawn as declared again", "on this bench's buffers again",
                             "after CudaRunner::run with one input set", "after CudaRunner::run (two sets) again",
                             "time_launches, a TaskState made now, 1 set", "time_launches, a TaskState made now, 2 sets",
                             "time_launches, the first TaskState, verified", "  after the last kernel's correctness rounds",
                             "on this bench's buffers again", "time_launches, the 1-set TaskState again",
                             "  verified", "  after the last kernel's correctness rounds, unverified",
                             "  verified again", "after CudaRunner::run (one set) of the rowregs only",
                             "time_launches, a 1-set TaskState made after freeing two",
                             "  one made after freeing looped's 1-set TaskState", "on this bench's buffers again",
                             "time_launches on the 1-set CudaRunner's TaskState", "  verified",
                             "  kernels loaded just before, correctness rounds, verified (as run)",
                             "  kernels loaded just before, verified", "  correctness rounds, verified",
                             "after CudaRunner::run (one set) of the rowregs only", "on this bench's buffers again",
                             "  as run, with the SM clock read", "  as run", "  as run, with the SM clock read",
                             "after CudaRunner::run (one set) of the rowregs only", "  as run",
                             "after CudaRunner::run (one set) of the rowregs only", "  as run, with the SM clock read",
                             "  as run, the checked repetition drawn as run draws it",
                             "after CudaRunner::run (one set) of the rowregs only", "  as run, drawn as run draws it",
                             "on this bench's buffers again", "module instance 1 (all kept loaded), bare loop",
                             "module instance 2", "module instance 3", "module instance 4", "module instance 5",
                             "module instance 6", "module instance 1 again", "module instance 4 again",
                             "on this bench's buffers again", "CudaRunner::run copied, whole", "  then CudaRunner::run",
                             "  copied, without the device limits", "  without the shared-memory attribute",
                             "  without the SM clock reads", "  without the correctness rounds", "  copied, whole, again",
                             "  then CudaRunner::run again", "on this bench's buffers again",
                             "fresh x, w, y: rowregs only (no looped before)", "  the same buffers, looped first",
                             "  the same, rowregs only", "  w written again, rowregs only",
                             "  looped first again", "  after cudaCtxResetPersistingL2Cache, rowregs only",
                             "on this bench's buffers again"};
      cudaStream_t fresh = nullptr;
      DeviceBuffer late_x, late_w, late_y, late_f, fresh_x, fresh_w, fresh_y;
      std::vector<LoadedModule> again(ks.size());
      std::vector<cudaKernel_t> again_h;
      std::deque<std::vector<LoadedModule>> instances;
      std::deque<std::vector<cudaKernel_t>> instance_h;
      CudaEvalOptions ungated = o;
      ungated.timing.gate = false;
      // soltune's timed loop (time_launches) on a TaskState, launching on its input sets in turn.
      auto timed_loop = [&](TaskState& st) {
        Borrowed b{st.stream(), nullptr, &st};
        b.loop = &o;
        b.state_sets = true;
        return b;
      };
      // CudaRunner::run of the kernels from `from` on, each printed with its median and spread.
      auto run_each = [&](CudaRunner& r, size_t from) {
        for (size_t i = from; i < ks.size(); ++i) {
          r.run(ks[i].task, ks[i].cand, ks[i].compiled, 0);
          std::printf("  [run: %s %.2f us%s] ", ks[i].task.variant->name.c_str(), ks[i].cand.result.time.median_us,
                      spread(ks[i].cand.result.time).c_str());
        }
        std::printf("\n");
      };
      if (mode == "steps-nvml-first") clock = std::make_unique<SmClock>(dev.uuid);
      if (mode == "steps-runner-first") runner = std::make_unique<CudaRunner>(0, compiler, arch, o);
      std::printf("%s: bare loop on this bench's buffers, us, per kernel in argument order:\n", mode.c_str());
      std::vector<const CompileResult*> compiled;
      for (auto& k : ks) compiled.push_back(&k.compiled);
      steps(list, hs, compiled, builtins.at("soltune_flush_read"), ks.back().task.variant->launch, rows, cols, [&](int piece) {
        Borrowed b;
        switch (piece) {
          case 0: if (!clock) clock = std::make_unique<SmClock>(dev.uuid); break;
          case 1: mapped = MappedHostBuffer(4096); break;
          case 2: untouched = DeviceBuffer(size_t{2} << 30); break;
          case 3: state = std::make_unique<TaskState>(ks.back().task, dev, compiler, arch, 3); break;
          case 4: if (!runner) runner = std::make_unique<CudaRunner>(0, compiler, arch, o); break;
          case 5:
            run_each(*runner, 0);
            break;
          case 6: std::this_thread::sleep_for(std::chrono::seconds(3)); break;
          case 7: b.stream = state->stream(); break;
          case 8: b.flush = state->builtins().at("soltune_flush_read"); break;
          case 9: b.events = state.get(); break;
          case 10: b = Borrowed{state->stream(), state->builtins().at("soltune_flush_read"), state.get()}; break;
          case 11: SOLTUNE_CUDA(cudaStreamCreateWithFlags(&fresh, cudaStreamNonBlocking)); b.stream = fresh; break;
          case 13:
          case 16:
            late_x = host_filled(rows * cols, 1), late_w = host_filled(cols, 2), late_y = DeviceBuffer(rows * cols * 4);
            late_f = DeviceBuffer(size_t{256} << 20);
            SOLTUNE_CUDA(cudaMemset(late_f.get(), 0x5A, late_f.bytes()));
            b.x = late_x.get(), b.w = late_w.get(), b.y = late_y.get(), b.flush_buf = &late_f;
            break;
          case 14: {
            const auto a = state->args(ks.back().task.variant->launch, 0, false);
            b.x = a.values.at(0), b.w = a.values.at(1), b.y = a.values.at(2);
            break;
          }
          case 15:
            for (size_t i = 0; i < ks.size(); ++i) {
              std::string l;
              SOLTUNE_CUDA(LoadedModule::load(ks[i].compiled, again[i], l));
              again_h.push_back(again[i].at(ks[i].cand.name_expr));
            }
            b.kernels = &again_h;
            break;
          case 18:
            b = Borrowed{state->stream(), nullptr, state.get()};
            b.state_flush = true;
            break;
          case 19:
          case 20:
          case 21: {
            b = Borrowed{state->stream(), nullptr, state.get()};
            b.state_flush = true;
            const auto a = state->args(ks.back().task.variant->launch, 0, false);
            b.x = a.values.at(0), b.w = a.values.at(1), b.y = a.values.at(2);
            if (piece == 20) b.loop = &o;
            if (piece == 21) b.loop = &ungated;
            break;
          }
          case 22:
          case 23:
            b = Borrowed{state->stream(), nullptr, state.get()};
            b.loop = piece == 22 ? &o : &ungated;
            break;
          case 24:
            run_each(*runner, 0);
            break;
          case 25:
          case 26:
          case 28:
            if (piece == 26) state->draw_inputs(0, 3);  // the correctness round CudaRunner::run draws last
            if (piece == 28) state->draw_inputs(0, 0);
            b = timed_loop(*state);
            break;
          case 27: {
            b = Borrowed{state->stream(), nullptr, state.get()};
            b.state_flush = true;
            const auto a = state->args(ks.back().task.variant->launch, 0, false);
            b.x = a.values.at(0), b.w = a.values.at(1), b.y = a.values.at(2);
            break;
          }
          case 30:
          case 31: {
            auto& r = piece == 30 ? runner1 : runner;
            if (!r) {
              CudaEvalOptions o1 = o;
              o1.timing.input_sets = 1;
              runner1 = std::make_unique<CudaRunner>(0, compiler, arch, o1);
            }
            run_each(*r, 0);
            break;
          }
          case 32:
          case 33: {
            TimingOptions t;
            t.input_sets = piece == 32 ? 1 : 0;
            auto& made = piece == 32 ? state1 : state2;
            made = std::make_unique<TaskState>(ks.back().task, dev, compiler, arch, 5, t);
            b = timed_loop(*made);
            break;
          }
          case 34:
          case 35:
          case 37:
          case 38:
          case 39:
          case 40: {
            TaskState& st = piece < 37 ? *state : *state1;
            if (piece == 35 || piece == 39) {  // CudaRunner::run's correctness rounds (kernel ks.back())
              auto a = st.args(ks.back().task.variant->launch, 0, false);
              for (int round = 0; round < st.distributions(); ++round) {
                st.draw_inputs(0, round);
                st.run_reference(0);
                st.poison_outputs();
                SOLTUNE_CUDA(launch_kernel(hs.back(), ks.back().cand.result.geo, a.ptrs.data(), st.stream()));
                SOLTUNE_CUDA(cudaStreamSynchronize(st.stream()));
                Accuracy acc;
                st.compare_outputs(acc);
              }
            }
            b = timed_loop(st);
            b.verify = piece == 34 || piece == 35 || piece == 38 || piece == 40;
            break;
          }
          case 41:
            run_each(*runner1, 1);
            break;
          case 42:
          case 43: {
            TimingOptions t;
            t.input_sets = 1;
            if (piece == 42) {
              state1.reset();
              state2.reset();
            } else {
              state1 = std::make_unique<TaskState>(ks.front().task, dev, compiler, arch, 9, t);
              state1.reset();
            }
            auto& made = piece == 42 ? state1 : state2;
            made = std::make_unique<TaskState>(ks.back().task, dev, compiler, arch, 5, t);
            b = timed_loop(*made);
            break;
          }
          case 45:
          case 46: {
            TaskState& st = runner1->state_for(ks.back().task);
            b = timed_loop(st);
            b.verify = piece == 46;
            break;
          }
          case 47:
          case 48:
          case 49: {
            TaskState& st = runner1->state_for(ks.back().task);
            b = timed_loop(st);
            b.verify = true;
            b.fresh_module = piece != 49;
            b.rounds = piece != 48;
            break;
          }
          case 52:
          case 53:
          case 54:
          case 56:
          case 58: {
            TaskState& st = runner1->state_for(ks.back().task);
            b = timed_loop(st);
            b.verify = true;
            b.fresh_module = true;
            b.rounds = true;
            if (piece != 53 && piece != 56) b.nvml = clock.get();
            break;
          }
          case 59:
          case 61: {
            TaskState& st = runner1->state_for(ks.back().task);
            b = timed_loop(st);
            b.verify = true;
            b.fresh_module = true;
            b.rounds = true;
            b.random_pick = true;
            break;
          }
          case 63:
          case 64:
          case 65:
          case 66:
          case 67:
          case 68:
          case 69:
          case 70: {
            // The same CUBINs loaded again and again, each instance kept: does a kernel's time follow
            // where its code was placed?
            const size_t inst = piece <= 68 ? static_cast<size_t>(piece - 63) : (piece == 69 ? 0 : 3);
            if (piece <= 68) {
              instances.emplace_back(ks.size());
              instance_h.emplace_back();
              for (size_t i = 0; i < ks.size(); ++i) {
                std::string l;
                SOLTUNE_CUDA(LoadedModule::load(ks[i].compiled, instances.back()[i], l));
                instance_h.back().push_back(instances.back()[i].at(ks[i].cand.name_expr));
              }
            }
            b.kernels = &instance_h[inst];
            break;
          }
          case 81:
          case 82:
          case 83:
          case 84:
          case 85:
          case 86: {
            // Does a kernel that loads the weight with an L2 evict_last policy (looped, HINT=2) leave
            // it in L2 past the flush, for the kernels timed after it?
            if (piece == 81) {
              fresh_x = host_filled(rows * cols, 5), fresh_w = host_filled(cols, 6), fresh_y = DeviceBuffer(rows * cols * 4);
            }
            if (piece == 84) {
              std::vector<float> hw(static_cast<size_t>(cols), 1.5f);
              SOLTUNE_CUDA(cudaMemcpy(fresh_w.get(), hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));
            }
            if (piece == 86) SOLTUNE_CUDA(cudaCtxResetPersistingL2Cache());
            b.x = fresh_x.get(), b.w = fresh_w.get(), b.y = fresh_y.get();
            b.first = (piece == 82 || piece == 85) ? 0 : 1;
            break;
          }
          case 72:
          case 74:
          case 75:
          case 76:
          case 77:
          case 78: {
            static const int kSkip[] = {0, 0, 0, 1, 2, 4, 8, 0};
            CudaEvalOptions o1 = o;
            o1.timing.input_sets = 1;
            TaskState& st = runner1->state_for(ks.back().task);
            for (size_t i = 1; i < ks.size(); ++i) {
              run_copy(st, runner1->device(), o1, *clock, ks[i].task, ks[i].cand, ks[i].compiled, kSkip[piece - 71]);
              std::printf("  [copy: %s %.2f us%s] ", ks[i].task.variant->name.c_str(), ks[i].cand.result.time.median_us,
                          spread(ks[i].cand.result.time).c_str());
            }
            std::printf("\n");
            break;
          }
          case 73:
          case 79:
          case 50:
          case 55:
          case 57:
          case 60:
            run_each(*runner1, 1);
            break;
          default: break;
        }
        return b;
      }, 88, names);
      return 0;
    }
    CudaRunner& runner = *runner_ptr;
    // Buffers of this bench's own, allocated once: x and the weight filled on the host, y, a flush.
    DeviceBuffer own_x = host_filled(rows * cols, 1), own_w = host_filled(cols, 2), own_y(rows * cols * 4),
                 own_flush(size_t{256} << 20);
    SOLTUNE_CUDA(cudaMemset(own_flush.get(), 0x5A, own_flush.bytes()));
    std::printf("rmsnorm f32 %sx%s on %s, ceilings %s; us: CudaRunner::run (median, reps) | time_launches on a "
                "TaskState of its own | bare loop (200 reps): its x, w, y | x drawn as the edge round | "
                "this bench's x, w, y | and its flush buffer\n",
                argv[2], argv[3], dev.name.c_str(), o.measure_ceilings ? "measured first" : "not measured");
    for (int round = 0; round < rounds; ++round) {
      for (auto& k : ks) {
        k.cand.result.time = {};
        runner.run(k.task, k.cand, k.compiled, 0);
        const auto run_us = k.cand.result.time.median_us;
        const int run_reps = k.cand.result.time.reps;
        TaskState st(k.task, dev, compiler, arch, 7 + round);
        LoadedModule mod;
        std::string log;
        SOLTUNE_CUDA(LoadedModule::load(k.compiled, mod, log));
        const cudaKernel_t h = mod.at(k.cand.name_expr);
        auto launch = [&](int set) {
          auto a = st.args(k.task.variant->launch, set, false);
          return launch_kernel(h, k.cand.result.geo, a.ptrs.data(), st.stream());
        };
        const auto loop = time_launches(st, o, launch, TimingPlan{});
        SOLTUNE_CUDA(loop.err);
        const cudaStream_t ss = st.stream();
        auto st_flush = [&] { SOLTUNE_CUDA(st.flush_l2()); };
        auto st_event = [&](int i) { return st.event(static_cast<size_t>(i)).get(); };
        auto st_launch = [&] { return launch(0); };
        const double bare = bare_loop_us(ss, st_flush, st_event, st_launch, 200);
        st.draw_inputs(0, 3);  // the edge round's normal(0, 0.001): the inputs a timed loop runs on
        const double edge = bare_loop_us(ss, st_flush, st_event, st_launch, 200);
        // The same kernel on this bench's buffers: x, w, y allocated outside the TaskState.
        void* px = own_x.get();
        void* pw = own_w.get();
        void* py = own_y.get();
        long long r_ = rows, c_ = cols;
        float eps = 1e-6f;
        void* own_args[] = {&px, &pw, &py, &r_, &c_, &eps};
        auto own = [&] { return launch_kernel(h, k.cand.result.geo, own_args, ss); };
        const double own_bufs = bare_loop_us(ss, st_flush, st_event, own, 200);
        const double own_all = bare_loop_us(
            ss, [&] { flush_with(st.builtins().at("soltune_flush_read"), own_flush, ss); }, st_event, own, 200);
        std::printf("round %d %-8s %-70s %8.2f (%3d) | %8.2f | %8.2f | %8.2f | %8.2f | %8.2f   [%s]\n", round + 1,
                    k.task.variant->name.c_str(), k.cand.result.key.c_str(), run_us, run_reps, loop.time.median_us, bare,
                    edge, own_bufs, own_all, std::string(status_name(k.cand.result.status)).c_str());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "worker_conditions: %s\n", e.what());
    return 1;
  }
}
