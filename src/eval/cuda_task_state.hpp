#pragma once
// Device-side state of one task: argument buffers (one input set unless a run config rotates
// several, one output, a double-precision shadow of each output for the reference, workspaces kept
// zeroed), baseline temporaries, the L2 flush buffer, events, the timing gate, and the loaded
// reference, baseline and builtin modules. Dropped and rebuilt whole after a candidate faults and
// the device is reset.
#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"
#include "core/rng.hpp"
#include "core/run_config.hpp"
#include "core/task.hpp"
#include "eval/builtin_kernels.hpp"
#include "eval/cublaslt_gemm.hpp"
#include "eval/cuda_raii.hpp"
#include "eval/tensor_map_encode.hpp"
#include "eval/timing_gate.hpp"

namespace soltune {

// A CUBIN loaded with its kernels, in the order of the compile request's name expressions.
struct LoadedModule {
  Library lib;
  std::map<std::string, cudaKernel_t> kernels;  // by name expression
  // Loads a compile result; returns the CUDA error (a candidate's failure, not an exception).
  static cudaError_t load(const CompileResult& r, LoadedModule& out, std::string& log);
  cudaKernel_t at(const std::string& name_expr) const;  // throws Error when missing
};

struct ArgSlot {
  const ArgSpec* spec = nullptr;
  DType dtype = DType::f32;
  int64_t elems = 0;
  std::vector<DeviceBuffer> sets;  // inputs: one per input set; outputs, inout buffers and temps: one, guarded
  // Drawn inputs, per set: what it must hold (builtin_kernels.cpp's soltune_verify_set checks it).
  struct SetDraw {
    unsigned long long base = 0;  // the full draw's seed
    unsigned long long rep = 0;   // the current repetition's draw over it; 0: none
    int dist = 0;                 // the round whose distribution both follow
  };
  std::vector<SetDraw> drawn;
  // Inputs read from a file: a copy of each set, to see a kernel write it. An inout buffer: the
  // values drawn into it (regenerated from its draw before every reference run) or its file's, for
  // the reference to read after the kernel overwrote the buffer.
  std::vector<DeviceBuffer> pristine;
  size_t guard = 0;                // bytes of guard zone before the data (outputs, inout buffers, temps)
  size_t tail = 0;                 // bytes of guard zone after it: the rest of the allocation
  void* data() const { return static_cast<char*>(sets[0].get()) + guard; }
  // Input set i's data (of an input; any other buffer has one set, between its guard zones).
  void* at(size_t i) const { return static_cast<char*>(sets[i % sets.size()].get()) + guard; }
  size_t data_bytes() const { return sets[0].bytes() - guard - tail; }
  DeviceBuffer ref;                // outputs and inout buffers: the reference's double-precision result
  DeviceBuffer mag;                // outputs that declare one: the reference's magnitude per element
  std::vector<char> given;         // an argument read from a file: its bytes, written into every draw
  std::vector<void*> symbols;      // constants: the __constant__ variables of the loaded candidates
  std::vector<void*> support_symbols;  // ... and of the reference's and baseline's modules, where they declare one
  alignas(8) unsigned char scalar[8] = {};
};

// A buffer cut to the rows a timed check samples (rows_check.cpp), and where its rows lie in the
// check's workspace: an input's gathered rows, or an output's rows (and magnitudes) as the reference
// computes them, in double.
struct SampledRows {
  ArgSlot* slot;
  long long row_elems;
  size_t at = 0, mag_at = 0;
};

// A scalar argument's value v stored in its dtype (s.scalar), as a launch passes it.
void store_scalar(ArgSlot& s, double v);

// Holds the argument array of one launch: cudaLaunchKernel wants a pointer to each value.
struct LaunchArgs {
  std::vector<void*> values;  // device pointers (and room for scalars' addresses)
  std::vector<void*> ptrs;    // what cudaLaunchKernel receives
};

// Whether the task's T_SOL is the compute ceiling's (FLOPs at the rate over bytes at the bandwidth).
bool compute_bound(const Task& t, const DeviceInfo& d);
// The L2 flush's reads before a timed repetition: the run config's size, else four times L2 (at
// least 256 MiB), twice L2 (at least 64 MiB) beside a compute-bound kernel.
size_t l2_flush_bytes(const Task& t, const DeviceInfo& d, const TimingOptions& timing);
// Input sets the timed repetitions rotate through in place of a flush before each: beside a
// compute-bound kernel whose own traffic (t.bytes()) covers L2 twice over in at most three
// repetitions, one more set than that takes (a set is used again only after the others' runs have
// evicted its lines), where they fit in half the device; 0 otherwise (one set, or the run config's
// input_sets, flushed before every repetition), and whenever the run config sets input_sets or the
// flush's size.
int rotation_sets(const Task& t, const DeviceInfo& d, const TimingOptions& timing);
// Input sets a task's state holds: the rotation's, else the run config's, else one.
int timed_input_sets(const Task& t, const DeviceInfo& d, const TimingOptions& timing);
// Device bytes the kept correctness rounds of a compute-bound task take (the reference's results of
// every round); 0 for a memory-bound one, which keeps none.
double kept_rounds_bytes(const Task& t, const DeviceInfo& d);
// What keeping the rounds must leave free: an eighth of the device.
inline size_t device_reserve(size_t total) { return total / 8; }

// The correctness rounds kept for one group of candidates (WorkerEvaluator::rounds_group) at a
// dtype and shape: each round's input seeds and the reference's results on those inputs. The
// variants at a shape share them, since inputs and reference are the problem's.
struct KeptRounds {
  uint64_t group = 0;
  struct Round {
    std::vector<unsigned long long> seeds;
    std::vector<DeviceBuffer> results;  // copies of TaskState::results()
  };
  std::map<int, Round> rounds;
  uint64_t last_used = 0;  // for the runner's least-recently-used order
};

class TaskState {
 public:
  // timing: the run config's (input sets: 0 means one; the flush's size).
  TaskState(const Task& t, const DeviceInfo& d, const Compiler& c, const std::string& arch, uint64_t seed,
            const TimingOptions& timing = {});
  const std::string& task_id() const { return id_; }
  int sets() const { return sets_; }
  cudaStream_t stream() const { return stream_.get(); }

  // Arguments for a launch: input set `set`; with `reference`, outputs are the double shadows, an
  // inout buffer is the values drawn into it and `<name>.out` its double shadow. A name among
  // `maps` (a candidate's, over the same input set) passes that encoded map by value.
  LaunchArgs args(const LaunchSpec& l, int set, bool reference, const TensorMapArgs* maps = nullptr);
  // Encodes v's tensor maps for a candidate's bindings over input set `set` (each over its buffer's
  // data: an input set's copy, an output's data between its guard zones) into out. Returns "" or why
  // one could not be encoded (the driver's CUresult with the map's parameters).
  std::string encode_tensor_maps(const VariantSpec& v, const Bindings& b, int set, TensorMapArgs& out);
  // Draws fresh random inputs into input set `set` (a new seed each call) from correctness round
  // dist's distribution (core/rounds.hpp; 0: the problem's declared one).
  // Returns the seeds drawn from, one per input drawn (in the order of the arguments); `seeds`, where
  // given, are used instead of new ones (the same draw again).
  std::vector<unsigned long long> draw_inputs(int set, int dist = 0, const std::vector<unsigned long long>* seeds = nullptr);
  // Correctness round `round`'s inputs in set 0 and the reference's results of them. Where `kept`
  // is given and the task is compute-bound, drawn and computed for the group's first candidate and
  // kept there: the others get the same inputs drawn again and the kept results, since the inputs
  // are not the candidates' to choose and the reference costs more than the candidate. Else both
  // anew.
  void round_inputs(int round, KeptRounds* kept);
  // Milliseconds round_inputs() has spent drawing inputs and running the reference where no kept
  // round served, over the state's life.
  double reference_ms() const { return reference_ms_; }
  // Before every timed repetition: new values in part of input set `set` (seeds from
  // unpredictable()), so that no repetition runs on inputs a kernel has seen, and a result kept
  // from an earlier call is wrong. The part is all of it where the set is small (drawing costs
  // little beside the kernel), a 64th of its chunks otherwise: finding which changed then costs a
  // kernel more reads than computing the result does. An inout buffer,
  // which the previous repetition overwrote, is drawn whole (or its file's data copied back).
  // Returns a launch's error (after a fault of the kernel before it), which is that kernel's.
  cudaError_t redraw_inputs(int set);
  // A loaded candidate's __constant__ variable of each constant argument, filled now and after every
  // draw (a constant has one set: the check that follows a draw sees the data the reference read).
  // Returns "" or why not (a variable missing or smaller than the data: the candidate's failure).
  std::string bind_constants(const Library& lib);
  void unbind_constants();  // before the modules bound go
  // The reference's and the baseline's __constant__ variables named as a constant argument, filled
  // with every draw as a candidate's are (a naive baseline reading its table from constant memory
  // had computed with zeros). A module that declares none reads the data by pointer.
  void bind_support_constants(const Library& lib);
  int distributions() const;  // the built-in rounds plus the problem's edge-value rounds
  uint64_t next_random() { return Rng::mix(seed_, ++draws_); }
  // From the OS's entropy, not the config's seed: where the timed loop checks, which a kernel must
  // not be able to predict. The search's own proposals never draw from it.
  uint64_t unpredictable() { return unpredictable_(); }
  void run_reference(int set);
  void poison_outputs();
  // A candidate's scratch buffers (VariantSpec::scratch, sized by its bindings), each between guard
  // zones, found by name by args(); kept while the next candidate needs the same sizes. Returns ""
  // or why they could not be allocated (the candidate's failure: its knobs asked for too much).
  std::string use_scratch(const VariantSpec& v, const Bindings& b);
  // Fills the scratch buffers with 0xFF bytes (NaN in every float type): a plan that reads what it
  // never wrote then produces NaN, which no check passes.
  void poison_scratch();
  // Compares every output with its reference (tolerance per dtype), then checks the workspaces
  // (check_workspaces); accumulates into acc.
  // `rel_l2_floor` widens each output's rel_l2 limit to at least that (the baseline's check).
  void compare_outputs(Accuracy& acc, double rel_l2_floor = 0);
  // Inputs are read-only: compares input set `set` (-1: every set) with what was drawn into it (an
  // inout buffer is not an input here: compare_outputs checks what the kernel left in it),
  // counts the bytes changed into acc (naming the first input changed) and restores them, so that
  // the reference and the next run read what was drawn. compare_outputs then fails the candidate.
  void check_inputs(Accuracy& acc, int set);
  // Workspaces must be all zero between launches: counts the bytes left non-zero and the guard bytes
  // changed into acc (scratch guard zones included), and re-zeroes any workspace found so, and
  // re-guards any scratch buffer, so that the next run starts clean.
  void check_workspaces(Accuracy& acc);
  // A checked timed repetition on input set `set` (the candidate has run): by the problem's check
  // routine where it declares one (a fraction of the reference's cost; timed_check.cpp), else by the
  // reference and compare_outputs. Accumulates into acc like compare_outputs.
  void check_repetition(Accuracy& acc, int set);
  void reset_workspaces();  // after a failed launch that may have run part of the way
  // T_ref's launches: the problem's library routine where it was planned, else its baseline kernels.
  cudaError_t run_baseline(int set);
  // What run_baseline times: the library's label, or the baseline kernels' (problem.yaml's labels).
  const std::string& baseline_source() const;
  // The library's plan ("cuBLASLt 13.1.0, ..."), or why the kernels serve instead; "" with no library.
  const std::string& baseline_library_note() const { return library_note_; }
  // Evicts L2 (not timed): waits for the work queued before it to finish, demotes lines a kernel
  // loaded under an evict_last policy (a context-wide host call), then queues the rest of the flush;
  // its first part, queued before the wait, keeps the GPU busy while the host wakes and demotes.
  // Returns the wait's error: a fault of the kernel run before is that candidate's, not an exception.
  cudaError_t flush_l2();
  // Before timed repetition `set`, queued ahead of its gate: new values in part of an input set and
  // L2 emptied of earlier lines. Flushing, that is the set's redraw and the flush. Rotating, the
  // previous repetition's set is redrawn (its lines then leave L2 with the rotation's traffic
  // before its next use), and only a batch's first repetition flushes (the warm-up's and the draws'
  // lines). Returns a launch's or the wait's error, that of the kernel before.
  cudaError_t before_repetition(int set, bool first_of_batch);
  // Rotating, between queuing a repetition and opening its gate: waits for the previous
  // repetition's end and demotes the lines it loaded under evict_last, which the rotation alone
  // would leave in L2 (flushing, flush_l2 does this). Returns the wait's error.
  cudaError_t before_release(Event& previous_end);
  bool rotates() const { return rotate_; }
  void settle(double us);  // the stream idles this long (a one-thread %globaltimer spin)
  Event& event(size_t i);  // a pool, grown on demand
  TimingGate& gate() { return *gate_; }  // one per task: its counter grows over the state's life

  const LoadedModule& builtins() const { return builtin_; }
  void abandon_all();  // after a device reset: forget every handle without releasing it

 private:
  ArgSlot& slot(const std::string& name);
  // The module's __constant__ variable of constant s, in sym: "" where it holds the data, else why
  // not (missing: the module declares no variable of that name).
  static std::string constant_symbol(const Library& lib, const ArgSlot& s, void*& sym, bool& missing);
  int64_t guard_damage(const ArgSlot& s);  // guard bytes a kernel changed (writes out of bounds)
  void zero_workspace(ArgSlot& s);         // guard bytes around, zeros inside
  void fill_guarded(ArgSlot& s, int inside);  // guard bytes around, `inside` bytes between
  void restore_guards(ArgSlot& s);               // guard bytes around, the data left as it is
  static constexpr size_t kGuardBytes = 64 * 1024;  // a multiple of 256: data() keeps cudaMalloc's alignment
  // A guarded buffer's allocation: data bytes between guard zones, rounded up to the driver's 2 MiB
  // granularity, the rounding added to the trailing zone, so that no byte of the allocation past the
  // data is writable unseen.
  static constexpr size_t kAllocGranularity = 2 * 1024 * 1024;
  static void allocate_guarded(ArgSlot& s, size_t bytes);
  static constexpr unsigned char kGuardByte = 0xA5;
  void launch_builtin(const std::string& name_expr, std::vector<void*> args, int64_t n);  // throws
  void launch_builtin(const std::string& name_expr, std::vector<void*> args, dim3 grid);  // 256 threads a block; throws
  void gemm_projection_check(const RoutineCall& call, Accuracy& acc, int set);
  void reference_rows_check(const RoutineCall& call, Accuracy& acc, int set);    // rows_check.cpp
  void reference_picked_check(const RoutineCall& call, Accuracy& acc, int set);  // rows_check.cpp
  // The outputs among `cut` at rows `rows` (r of `total`, on the device) against the reference's rows
  // in ws, folded into acc; stats: a zeroed CompareStats per buffer of `cut`.
  void compare_sampled(const std::vector<SampledRows>& cut, const unsigned char* ws, const long long* rows, int64_t r,
                       long long total, CompareStats* stats, Accuracy& acc);
  std::vector<long long> draw_rows(long long m, int64_t r);  // r distinct rows of m, from unpredictable()
  // An output's band: its own dtype's tolerance; an integer or bool one without a declared
  // tolerance compares exactly, a float one takes the task dtype's.
  Tolerance output_tolerance(const ArgSlot& s) const;
  // A comparison's errors into acc: the largest absolute and relative ones, rel L2 (precision_ok
  // false where it is over the dtype's limit).
  static void add_errors(Accuracy& acc, const CompareStats& cs, double rel_l2_limit);
  std::vector<DeviceBuffer*> results();  // every output's ref, then its mag where it has one
  // Set by round_inputs from a kept round; read (and cleared) by the next compare_outputs.
  const std::vector<DeviceBuffer>* kept_results_ = nullptr;
  DeviceBuffer check_ws_;  // the check routine's temporaries, kept while large enough
  Event check_marks_[3];   // around the check routine's projection and exact rows: their GPU time, for the log
  bool keep_rounds();  // whether a round's results are worth keeping and fit the device's free memory
  double reference_ms_ = 0;
  cudaError_t try_builtin(const std::string& name_expr, std::vector<void*> args, int64_t n);
  // The count a builtin counting kernel adds to the counter it is given (zeroed first), read back.
  int64_t device_count(const std::function<void(void*)>& launches);

  Task task_;  // a copy: callers pass temporaries (the worker builds a Task per request)
  const DeviceInfo* dev_;
  std::string id_;
  Bindings bind_;
  int sets_ = 1;
  bool rotate_ = false;  // rotation_sets(): input sets rotate in place of a flush before each repetition
  bool compute_bound_ = false;  // T_SOL is the compute ceiling's
  // A chunk of s is redrawn before a timed repetition when its hash is at most this.
  unsigned long long redraw_threshold(const ArgSlot& s) const;
  uint64_t seed_;
  uint64_t draws_ = 0;
  std::mt19937_64 unpredictable_{(uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()};
  Handle<cudaStream_t, DestroyStream> stream_;
  std::vector<std::unique_ptr<ArgSlot>> slots_;
  std::vector<std::unique_ptr<ArgSlot>> scratch_;  // the current candidate's (elems 0: no buffer, a null pointer)
  DeviceBuffer flush_, stats_;
  size_t flush_bytes_ = 0, flush_early_ = 0;  // the flush's reads; of them, those queued before the wait
  Event flushed_prior_;     // the work before a flush, which its wait waits for
  std::vector<std::unique_ptr<Event>> events_;
  LoadedModule builtin_, reference_, baseline_;
  // The problem's library baseline, where every call of it was planned: one plan per step, null for
  // a step that runs a baseline launch; empty where the kernels serve.
  std::vector<std::unique_ptr<LtGemm>> library_;
  std::string library_note_;
  DeviceBuffer library_ws_;
  void plan_library(const LibraryBaseline& lib);
  // Last, so it goes first: it waits for its gates to pass while the stream and kernels still exist.
  std::unique_ptr<TimingGate> gate_;
};

}  // namespace soltune
