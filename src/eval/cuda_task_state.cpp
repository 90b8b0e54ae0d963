#include "eval/cuda_task_state.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/array_file.hpp"
#include "core/rng.hpp"
#include "core/rounds.hpp"
#include "eval/candidates.hpp"

namespace soltune {
namespace {

template <typename X>
void put(ArgSlot& s, double v) {
  const X x = static_cast<X>(v);
  std::memcpy(s.scalar, &x, sizeof x);
}

}  // namespace

void store_scalar(ArgSlot& s, double v) {
  switch (s.dtype) {
    case DType::i64: return put<long long>(s, v);
    case DType::i32: return put<int>(s, v);
    case DType::i16: return put<short>(s, v);
    case DType::i8: return put<signed char>(s, v);
    case DType::u64: return put<unsigned long long>(s, v);
    case DType::u32: return put<unsigned int>(s, v);
    case DType::u16: return put<unsigned short>(s, v);
    case DType::u8: return put<unsigned char>(s, v);
    case DType::boolean: return put<bool>(s, v);
    case DType::f32: return put<float>(s, v);
    case DType::f64: return put<double>(s, v);
    default: throw Error(s.spec->loc, "scalar '" + s.spec->name + "' needs an integer, bool, f32 or f64 dtype");
  }
}

namespace {

// A draw's distribution as the fill, redraw and verify kernels take it.
struct DrawArgs {
  int kind;
  double a, b;
};
DrawArgs draw_args(const ArgSlot& s, int dist, const Bindings& bind) {
  const Draw d = round_draw(*s.spec, s.dtype, dist, bind);
  return {static_cast<int>(d.kind), d.a, d.b};
}

}  // namespace

cudaError_t LoadedModule::load(const CompileResult& r, LoadedModule& out, std::string& log) {
  if (auto e = Library::load(r.cubin, out.lib); e != cudaSuccess) {
    log = "loading the CUBIN failed: " + cuda_error_text(e);
    return e;
  }
  for (const auto& k : r.kernels) {
    cudaKernel_t h = nullptr;
    if (auto e = out.lib.kernel(k.lowered_name, h); e != cudaSuccess) {
      log = "kernel '" + k.name_expression + "' (" + k.lowered_name + ") not found: " + cuda_error_text(e);
      return e;
    }
    out.kernels[k.name_expression] = h;
  }
  return cudaSuccess;
}

cudaKernel_t LoadedModule::at(const std::string& name_expr) const {
  auto it = kernels.find(name_expr);
  if (it == kernels.end()) throw Error("no kernel '" + name_expr + "' in the loaded module");
  return it->second;
}

bool compute_bound(const Task& t, const DeviceInfo& d) {
  const auto& ceil = d.ceilings();
  const double unit = ceil.rate(t.problem->compute_unit(t.dtype)), bw = ceil.sol_bw();
  return unit > 0 && bw > 0 && t.flops() / unit > t.bytes() / bw;
}

double kept_rounds_bytes(const Task& t, const DeviceInfo& d) {
  if (!compute_bound(t, d)) return 0;
  double bytes = 0;
  const auto b = t.sizes();
  for (const auto& a : t.problem->args)
    if (a.is_buffer && role_is_checked(a.role))
      bytes += static_cast<double>(buffer_elements(a, b)) * sizeof(double) * (a.magnitude ? 2 : 1);
  return bytes * correctness_rounds(*t.problem);
}

size_t l2_flush_bytes(const Task& t, const DeviceInfo& d, const TimingOptions& timing) {
  // Four times L2, at least 256 MiB: triton.testing.do_bench's size, and the harness soltune is
  // compared in. Twice L2 could leave some of the last repetition's lines where replacement is not
  // strictly LRU; on the H200 the larger buffer changed no time measured, and it costs one more read
  // of the buffer per repetition, untimed. Beside a compute-bound kernel, whose time L2's contents
  // move least, twice L2: at a 4096^3 GEMM the 256 MiB read took half as long as the kernel, and
  // the smaller one moved no time (docs/FINDINGS.md).
  if (timing.flush_mib > 0) return static_cast<size_t>(timing.flush_mib * (1 << 20)) / 16 * 16;
  const auto l2 = static_cast<size_t>(d.l2_bytes);
  return compute_bound(t, d) ? std::max<size_t>(2 * l2, size_t{64} << 20) : std::max<size_t>(4 * l2, size_t{256} << 20);
}

int rotation_sets(const Task& t, const DeviceInfo& d, const TimingOptions& timing) {
  if (timing.input_sets > 0 || timing.flush_mib > 0 || !compute_bound(t, d) || d.l2_bytes <= 0) return 0;
  // An inout buffer is one set, drawn whole before every run: its lines would be in L2 at the start.
  for (const auto& a : t.problem->args)
    if (a.role == Role::inout) return 0;
  const double traffic = t.bytes(), l2 = static_cast<double>(d.l2_bytes);
  if (traffic <= 0) return 0;
  const int others = static_cast<int>(std::ceil(2 * l2 / traffic));
  if (others > 3) return 0;
  const int n = others + 1;
  const double need = task_device_bytes(t, n) + kept_rounds_bytes(t, d) + static_cast<double>(l2_flush_bytes(t, d, timing));
  return d.mem_bytes > 0 && need <= 0.5 * static_cast<double>(d.mem_bytes) ? n : 0;
}

int timed_input_sets(const Task& t, const DeviceInfo& d, const TimingOptions& timing) {
  if (const int n = rotation_sets(t, d, timing); n > 0) return n;
  return std::max(timing.input_sets, 1);
}

TaskState::TaskState(const Task& t, const DeviceInfo& d, const Compiler& c, const std::string& arch, uint64_t seed,
                     const TimingOptions& timing)
    : task_(t), dev_(&d), id_(t.id()), bind_(t.fixed(d)), seed_(Rng::mix(seed, std::hash<std::string>{}(t.id()))) {
  cudaStream_t created;
  SOLTUNE_CUDA(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
  stream_ = Handle<cudaStream_t, DestroyStream>(created);

  // One input set unless the run config asks for more, as outside harnesses time one input and a
  // caller has usually just written its own. The flush keeps inputs out of L2 (and, since the
  // evict_last demotion, every line: timing_loop.cpp); more sets only spread the inputs over more
  // pages. A kernel that replays a cached result is still caught: part of every set is drawn
  // afresh before each timed repetition (redraw_inputs).
  // Beside a compute-bound kernel with traffic enough, sets rotate instead (rotation_sets).
  const int rotation = rotation_sets(t, d, timing);
  rotate_ = rotation > 0;
  sets_ = rotate_ ? rotation : std::max(timing.input_sets, 1);
  compute_bound_ = compute_bound(t, d);

  auto add_slot = [&](const ArgSpec& a) {
    auto s = std::make_unique<ArgSlot>();
    s->spec = &a;
    s->dtype = a.resolve_dtype(t.dtype);
    if (a.is_buffer) {
      s->elems = buffer_elements(a, bind_);
      const size_t bytes = static_cast<size_t>(s->elems) * dtype_bytes(s->dtype);
      // A constant has one set; so has an inout buffer, drawn whole before every run.
      const int n = a.role == Role::in ? sets_ : 1;
      // Outputs, inout buffers, workspaces and temporaries sit between two guard zones: a write past
      // either end changes them.
      if (a.role == Role::in || a.role == Role::constant)
        for (int i = 0; i < n; ++i) s->sets.emplace_back(bytes);
      else
        allocate_guarded(*s, bytes);
      if (role_is_drawn(a.role)) s->drawn.resize(static_cast<size_t>(n));
      if ((a.role == Role::in && !a.file.empty()) || a.role == Role::inout)
        for (int i = 0; i < n; ++i) s->pristine.emplace_back(bytes);
      if (role_is_checked(a.role)) s->ref = DeviceBuffer(static_cast<size_t>(s->elems) * sizeof(double));
      if (a.magnitude) s->mag = DeviceBuffer(static_cast<size_t>(s->elems) * sizeof(double));
      if (a.role == Role::workspace) zero_workspace(*s);  // zeroed once; every kernel leaves it so
      // Guarded from the start: a timed loop that begins on a fresh state (the re-timing, after
      // another task's candidates) must find intact guard zones, not what cudaMalloc left there.
      else if (a.role != Role::in && a.role != Role::constant) fill_guarded(*s, 0xFF);
      if (!a.file.empty()) {  // checked before tuning; a file changed since is an error of the run
        auto f = read_array_file(a.file, a.file_raw, s->dtype);
        if (f.elems != s->elems)
          throw Error(a.loc, a.file.string() + " holds " + std::to_string(f.elems) + " elements, '" + a.name + "' needs " +
                                 std::to_string(s->elems) + " for " + t.id());
        s->given = std::move(f.bytes);
      }
    } else {
      store_scalar(*s, a.value.eval(bind_));
    }
    slots_.push_back(std::move(s));
  };
  for (const auto& a : t.problem->args) add_slot(a);
  for (const auto& a : t.problem->baseline_temps) add_slot(a);

  flush_bytes_ = l2_flush_bytes(t, d, timing);
  flush_ = DeviceBuffer(flush_bytes_);
  flush_early_ = std::min(static_cast<size_t>(d.l2_bytes), flush_bytes_ / 4) / 16 * 16;
  stats_ = DeviceBuffer(sizeof(CompareStats));
  SOLTUNE_CUDA(cudaMemsetAsync(flush_.get(), 0x5A, flush_.bytes(), stream()));

  // The reference, baseline and builtin kernels: NVRTC-compiled (and disk-cached) like candidates.
  auto requests = support_requests(t, bind_, arch);
  requests.insert(requests.begin(), CompileRequest{builtin_kernels_source(), "soltune_builtins.cu", builtin_name_expressions(), arch, {}});
  const auto results = c.compile_all(requests);
  require_compiled(results[0], "soltune's builtin kernels");
  require_compiled(results[1], t.problem->name + "'s reference");
  require_compiled(results[2], t.problem->name + "'s baseline");
  std::string log;
  if (LoadedModule::load(results[0], builtin_, log) != cudaSuccess ||
      LoadedModule::load(results[1], reference_, log) != cudaSuccess ||
      LoadedModule::load(results[2], baseline_, log) != cudaSuccess)
    throw Error("loading " + t.problem->name + "'s support kernels: " + log);
  gate_ = std::make_unique<TimingGate>(builtin_.at("soltune_gate"));
  if (t.problem->baseline_library) plan_library(*t.problem->baseline_library);
  bind_support_constants(reference_.lib);  // filled by the draws below, and by every draw after
  bind_support_constants(baseline_.lib);

  for (int i = 0; i < sets_; ++i) draw_inputs(i);
  SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
}

ArgSlot& TaskState::slot(const std::string& name) {
  for (auto& s : slots_)
    if (s->spec->name == name) return *s;
  for (auto& s : scratch_)
    if (s->spec->name == name) return *s;
  throw Error("no argument '" + name + "' in task " + id_);
}

LaunchArgs TaskState::args(const LaunchSpec& l, int set, bool reference, const TensorMapArgs* maps) {
  LaunchArgs a;
  a.values.reserve(l.args.size());
  for (const auto& name : l.args) {
    if (const TensorMapBlob* m = maps ? maps->find(name) : nullptr) {  // by value: its 128 bytes
      a.ptrs.push_back(const_cast<unsigned char*>(m->bytes));
      continue;
    }
    // "<out>.magnitude": the reference's second result for that output; "<inout>.out": its result
    // for an inout buffer (problem.yaml checks the names).
    if (const auto extra = reference ? reference_array(name) : std::nullopt) {
      auto& s = slot(extra->buffer);
      a.values.push_back(extra->kind == ReferenceArray::Kind::magnitude ? s.mag.get() : s.ref.get());
      a.ptrs.push_back(&a.values.back());
      continue;
    }
    auto& s = slot(name);
    if (!s.spec->is_buffer) {
      a.ptrs.push_back(s.scalar);
      continue;
    }
    const Role r = s.spec->role;
    void* p = s.sets.empty()                      ? nullptr  // a scratch buffer of no elements
              : (reference && r == Role::out)     ? s.ref.get()
              : (reference && r == Role::inout)   ? s.pristine[0].get()  // what was drawn, not what a kernel left
                                                  : s.at(static_cast<size_t>(set));
    a.values.push_back(p);
    a.ptrs.push_back(&a.values.back());
  }
  return a;
}

std::string TaskState::encode_tensor_maps(const VariantSpec& v, const Bindings& b, int set, TensorMapArgs& out) {
  out.names.clear();
  out.blobs.assign(v.tensor_maps.size(), TensorMapBlob{});
  for (size_t i = 0; i < v.tensor_maps.size(); ++i) {
    const auto& m = v.tensor_maps[i];
    const auto& s = slot(m.buffer);
    void* p = s.at(static_cast<size_t>(set));
    try {
      if (auto why = encode_tensor_map(tensor_map_params(m, b), m.elem_dtype(task_.dtype), p, out.blobs[i]); !why.empty())
        return why;
    } catch (const Error& e) {  // an expression the host check would have refused first
      return "tensor map '" + m.name + "': " + e.what();
    }
    out.names.push_back(m.name);
  }
  return "";
}

void TaskState::launch_builtin(const std::string& name_expr, std::vector<void*> args, int64_t n) {
  SOLTUNE_CUDA(try_builtin(name_expr, std::move(args), n));
}

void TaskState::launch_builtin(const std::string& name_expr, std::vector<void*> args, dim3 grid) {
  SOLTUNE_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(builtin_.at(name_expr)), grid, dim3(256), args.data(), 0, stream()));
}

cudaError_t TaskState::try_builtin(const std::string& name_expr, std::vector<void*> args, int64_t n) {
  const int64_t blocks = std::clamp<int64_t>((n + 255) / 256, 1, static_cast<int64_t>(dev_->sms) * 8);
  return cudaLaunchKernel(reinterpret_cast<const void*>(builtin_.at(name_expr)), dim3(static_cast<unsigned>(blocks)),
                          dim3(256), args.data(), 0, stream());
}

int TaskState::distributions() const { return correctness_rounds(*task_.problem); }

std::vector<unsigned long long> TaskState::draw_inputs(int set, int dist, const std::vector<unsigned long long>* seeds) {
  std::vector<unsigned long long> used;
  for (auto& s : slots_) {
    if (!s->spec->is_buffer || (!role_is_drawn(s->spec->role) && s->spec->role != Role::constant)) continue;
    const size_t i = static_cast<size_t>(set) % s->sets.size();
    void* p = s->at(i);
    long long n = s->elems;
    // Never poisoned, an inout buffer has its guard zones restored here: damage the previous
    // candidate did must not count against the next.
    if (s->spec->role == Role::inout) restore_guards(*s);
    if (!s->given.empty()) {  // the same given data every round
      SOLTUNE_CUDA(cudaMemcpyAsync(p, s->given.data(), s->given.size(), cudaMemcpyHostToDevice, stream()));
      if (!s->pristine.empty())
        SOLTUNE_CUDA(cudaMemcpyAsync(s->pristine[i].get(), p, s->pristine[i].bytes(), cudaMemcpyDeviceToDevice, stream()));
    } else {
      unsigned long long seed = seeds && used.size() < seeds->size() ? (*seeds)[used.size()] : next_random();
      used.push_back(seed);
      auto [kind, a, b] = draw_args(*s, dist, bind_);
      launch_builtin("soltune_fill<" + std::string(dtype_cpp(s->dtype)) + ">", {&p, &n, &seed, &kind, &a, &b}, n);
      if (!s->drawn.empty()) s->drawn[i] = ArgSlot::SetDraw{seed, 0, dist};
    }
    for (const auto* list : {&s->symbols, &s->support_symbols})
      for (void* sym : *list)
        SOLTUNE_CUDA(cudaMemcpyAsync(sym, p, static_cast<size_t>(n) * dtype_bytes(s->dtype), cudaMemcpyDeviceToDevice, stream()));
  }
  return used;
}

std::vector<DeviceBuffer*> TaskState::results() {
  std::vector<DeviceBuffer*> out;
  for (auto& s : slots_)
    for (DeviceBuffer* b : {&s->ref, &s->mag})
      if (b->bytes() > 0) out.push_back(b);
  return out;
}

bool TaskState::keep_rounds() {
  if (!compute_bound_) return false;  // a memory-bound reference costs about what the candidate does
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  size_t round = 0;  // one round's results, kept beside those kept before
  for (const auto* b : results()) round += b->bytes();
  return round + device_reserve(total) <= free;
}

void TaskState::round_inputs(int round, KeptRounds* kept) {
  kept_results_ = nullptr;
  if (kept)
    if (const auto it = kept->rounds.find(round); it != kept->rounds.end()) {
      draw_inputs(0, round, &it->second.seeds);
      kept_results_ = &it->second.results;  // the comparison reads them where they are kept
      return;
    }
  const auto began = std::chrono::steady_clock::now();
  auto seeds = draw_inputs(0, round);
  run_reference(0);
  SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
  reference_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  if (!kept || !keep_rounds()) return;
  KeptRounds::Round k{std::move(seeds), {}};
  for (const auto* b : results()) {
    k.results.emplace_back(b->bytes());
    SOLTUNE_CUDA(cudaMemcpyAsync(k.results.back().get(), b->get(), b->bytes(), cudaMemcpyDeviceToDevice, stream()));
  }
  // Another task's state (another variant at the shape) may read them next, on its own stream.
  SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
  kept->rounds.emplace(round, std::move(k));
}

unsigned long long TaskState::redraw_threshold(const ArgSlot& s) const {
  // All of a set of at most 2^20 elements (a few microseconds). Otherwise a 64th of the chunks: with
  // the previous repetition's put back, a 32nd of the set is written, and a kernel cannot tell which
  // (a result replayed from an earlier repetition is wrong where they changed). Compute-bound tasks
  // too: drawing all 64 MiB of a 4096^3 GEMM's inputs takes about 25 us a repetition beside its
  // 175 us. An inout buffer always whole: the kernel overwrote it.
  if (s.elems <= (int64_t{1} << 20) || s.spec->role == Role::inout) return ~0ULL;
  return 1ULL << 58;
}

cudaError_t TaskState::redraw_inputs(int set) {
  for (auto& s : slots_) {
    if (s->drawn.empty()) continue;  // not an input (a constant)
    const size_t i = static_cast<size_t>(set) % s->sets.size();
    if (!s->given.empty()) {  // a file's data: an input keeps it, an inout buffer gets it back
      if (s->spec->role != Role::inout) continue;
      if (auto e = cudaMemcpyAsync(s->at(i), s->pristine[i].get(), s->pristine[i].bytes(), cudaMemcpyDeviceToDevice, stream());
          e != cudaSuccess)
        return e;
      continue;
    }
    auto& d = s->drawn[i];
    void* p = s->at(i);
    long long n = s->elems;
    unsigned long long base = d.base, from = d.rep, to = unpredictable() | 1, threshold = redraw_threshold(*s);
    auto [kind, a, b] = draw_args(*s, d.dist, bind_);
    // One thread per chunk. Queued behind the previous repetition: a fault of that candidate's
    // surfaces here or at the flush's wait, as its own error.
    if (auto e = try_builtin("soltune_redraw<" + std::string(dtype_cpp(s->dtype)) + ">",
                             {&p, &n, &base, &from, &to, &threshold, &kind, &a, &b}, (n + 63) / 64);
        e != cudaSuccess)
      return e;
    d.rep = to;
  }
  return cudaSuccess;
}

void TaskState::check_inputs(Accuracy& acc, int set) {
  for (auto& s : slots_) {
    if (s->spec->role == Role::inout) continue;  // written by design: compare_outputs checks it
    for (size_t i = 0; i < s->drawn.size(); ++i) {
      if (set >= 0 && i != static_cast<size_t>(set) % s->drawn.size()) continue;
      int64_t changed = 0;
      if (!s->pristine.empty()) {  // read from a file: compared with its copy, restored from it
        auto& copy = s->pristine[i];
        changed = device_count([&](void* out) {
          const void* x = s->sets[i].get();
          const void* y = copy.get();
          long long n = static_cast<long long>(copy.bytes());
          launch_builtin("soltune_count_diff", {&x, &y, &n, &out}, (n + 15) / 16);
        });
        if (changed)
          SOLTUNE_CUDA(cudaMemcpyAsync(s->sets[i].get(), copy.get(), copy.bytes(), cudaMemcpyDeviceToDevice, stream()));
      } else {  // drawn: compared with the draw recomputed, restored by the same kernel
        const auto& d = s->drawn[i];
        changed = device_count([&](void* out) {
          void* p = s->sets[i].get();
          long long n = s->elems;
          unsigned long long base = d.base, rep = d.rep, threshold = redraw_threshold(*s);
          auto [kind, a, b] = draw_args(*s, d.dist, bind_);
          launch_builtin("soltune_verify_set<" + std::string(dtype_cpp(s->dtype)) + ">",
                         {&p, &n, &base, &rep, &threshold, &kind, &a, &b, &out}, (n + 63) / 64);
        });
      }
      if (changed == 0) continue;
      acc.inputs_written += changed;
      if (acc.written_input.empty()) acc.written_input = s->spec->name;
    }
  }
}

int64_t TaskState::device_count(const std::function<void(void*)>& launches) {
  SOLTUNE_CUDA(cudaMemsetAsync(stats_.get(), 0, sizeof(unsigned long long), stream()));
  launches(stats_.get());
  unsigned long long n = 0;
  SOLTUNE_CUDA(cudaMemcpyAsync(&n, stats_.get(), sizeof n, cudaMemcpyDeviceToHost, stream()));
  SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
  return static_cast<int64_t>(n);
}

std::string TaskState::constant_symbol(const Library& lib, const ArgSlot& s, void*& sym, bool& missing) {
  size_t bytes = 0;
  const size_t need = static_cast<size_t>(s.elems) * dtype_bytes(s.dtype);
  missing = false;
  if (auto e = lib.global(s.spec->name, sym, bytes); e != cudaSuccess) {
    (void)cudaGetLastError();
    missing = true;
    return "constant '" + s.spec->name + "': no __constant__ variable of that name at file scope in the module (" +
           cuda_error_text(e) + ")";
  }
  if (bytes < need)
    return "constant '" + s.spec->name + "': its __constant__ variable holds " + std::to_string(bytes) + " bytes, the data " +
           std::to_string(need);
  return "";
}

std::string TaskState::bind_constants(const Library& lib) {
  for (auto& s : slots_) {
    if (s->spec->role != Role::constant) continue;
    void* sym = nullptr;
    bool missing = false;
    if (auto why = constant_symbol(lib, *s, sym, missing); !why.empty()) return why;
    SOLTUNE_CUDA(cudaMemcpyAsync(sym, s->sets[0].get(), static_cast<size_t>(s->elems) * dtype_bytes(s->dtype),
                                 cudaMemcpyDeviceToDevice, stream()));
    s->symbols.push_back(sym);
  }
  return "";
}

void TaskState::bind_support_constants(const Library& lib) {
  for (auto& s : slots_) {
    if (s->spec->role != Role::constant) continue;
    void* sym = nullptr;
    bool missing = false;
    const auto why = constant_symbol(lib, *s, sym, missing);
    if (missing) continue;  // none of that name: the module reads the data by pointer, if at all
    if (!why.empty()) throw Error(task_.problem->name + "'s reference or baseline: " + why);
    s->support_symbols.push_back(sym);
  }
}

void TaskState::unbind_constants() {
  for (auto& s : slots_) s->symbols.clear();
}

void TaskState::run_reference(int set) {
  kept_results_ = nullptr;  // what it computes is what the next comparison reads
  // An inout buffer holds what the kernel left there: the reference reads the values drawn into it,
  // recomputed from its draw (drawn whole: the set is that draw's values everywhere). A file's data
  // stays in its copy.
  for (auto& s : slots_) {
    if (s->spec->role != Role::inout || !s->given.empty()) continue;
    const auto& d = s->drawn[0];
    void* p = s->pristine[0].get();
    long long n = s->elems;
    unsigned long long seed = d.rep != 0 ? d.rep : d.base;
    auto [kind, a, b] = draw_args(*s, d.dist, bind_);
    launch_builtin("soltune_fill<" + std::string(dtype_cpp(s->dtype)) + ">", {&p, &n, &seed, &kind, &a, &b}, n);
  }
  const auto& l = task_.problem->reference;
  const auto g = eval_geometry(l, bind_);
  auto a = args(l, set, true);
  SOLTUNE_CUDA(launch_kernel(reference_.at(name_expression(l, task_.dtype, bind_)), g, a.ptrs.data(), stream()));
}

void TaskState::poison_outputs() {
  for (auto& s : slots_)
    if (s->spec->is_buffer && s->spec->role == Role::out) {
      fill_guarded(*s, 0xFF);
    }
}

std::string TaskState::use_scratch(const VariantSpec& v, const Bindings& b) {
  bool same = scratch_.size() == v.scratch.size();
  std::vector<int64_t> elems;
  for (size_t i = 0; i < v.scratch.size(); ++i) {
    const auto& a = v.scratch[i];
    try {
      elems.push_back(buffer_elements(a, b));
    } catch (const Error& e) {  // a negative size, or an expression that does not evaluate here
      return "scratch buffer '" + a.name + "': " + e.what();
    }
    same = same && scratch_[i]->spec == &a && scratch_[i]->elems == elems.back();
  }
  if (same) return "";
  scratch_.clear();  // freed before the next sizes are allocated
  for (size_t i = 0; i < v.scratch.size(); ++i) {
    auto s = std::make_unique<ArgSlot>();
    s->spec = &v.scratch[i];
    s->dtype = v.scratch[i].resolve_dtype(task_.dtype);
    s->elems = elems[i];
    if (s->elems > 0) {
      const size_t bytes = static_cast<size_t>(s->elems) * dtype_bytes(s->dtype);
      size_t free_bytes = 0, total = 0;
      SOLTUNE_CUDA(cudaMemGetInfo(&free_bytes, &total));
      if (bytes + 2 * kGuardBytes > free_bytes / 2) {
        scratch_.clear();
        return "scratch buffer '" + s->spec->name + "' of " + std::to_string(bytes) + " bytes exceeds half the " +
               std::to_string(free_bytes) + " bytes of device memory free";
      }
      allocate_guarded(*s, bytes);
      fill_guarded(*s, 0xFF);
    }
    scratch_.push_back(std::move(s));
  }
  return "";
}

void TaskState::poison_scratch() {
  for (auto& s : scratch_)
    if (!s->sets.empty()) fill_guarded(*s, 0xFF);
}

Tolerance TaskState::output_tolerance(const ArgSlot& s) const {
  const auto it = task_.problem->tolerance.find(s.dtype);
  return it != task_.problem->tolerance.end() ? it->second
         : dtype_is_float(s.dtype)             ? task_.problem->tolerance.at(task_.dtype)
                                               : Tolerance{};
}

void TaskState::compare_outputs(Accuracy& acc, double rel_l2_floor) {
  bool band_ok = true;
  // A kept round's results, in results()'s order, stand in for the slots' own (round_inputs).
  const auto* kept = std::exchange(kept_results_, nullptr);
  size_t kept_i = 0;
  for (auto& s : slots_) {
    void* ref = s->ref.get();
    void* mag = s->mag.get();  // null without a magnitude: the band is atol + rtol * |ref|
    if (kept) {
      if (s->ref.bytes() > 0) ref = (*kept)[kept_i++].get();
      if (s->mag.bytes() > 0) mag = (*kept)[kept_i++].get();
    }
    if (!s->spec->is_buffer || !role_is_checked(s->spec->role)) continue;
    const Tolerance tol = output_tolerance(*s);
    SOLTUNE_CUDA(cudaMemsetAsync(stats_.get(), 0, sizeof(CompareStats), stream()));
    void* out = s->data();
    long long n = s->elems;
    double atol = tol.atol, rtol = tol.rtol, mtol = tol.mtol.empty() ? 0.0 : tol.mtol.eval(bind_);
    void* st = stats_.get();
    launch_builtin("soltune_compare<" + std::string(dtype_cpp(s->dtype)) + ">",
                   {&out, &ref, &mag, &n, &atol, &rtol, &mtol, &st}, n);
    CompareStats cs{};
    SOLTUNE_CUDA(cudaMemcpyAsync(&cs, stats_.get(), sizeof cs, cudaMemcpyDeviceToHost, stream()));
    SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
    acc.checked += static_cast<int64_t>(cs.checked);
    acc.mismatches += static_cast<int64_t>(cs.mismatches);
    acc.nonfinite += static_cast<int64_t>(cs.nonfinite);
    acc.unwritten += static_cast<int64_t>(cs.unwritten);
    add_errors(acc, cs, std::max(tol.rel_l2, rel_l2_floor));
    // Elements outside the band beyond what min_match allows (NaN and unwritten ones fail anyway).
    if (static_cast<double>(cs.mismatches) > (1.0 - tol.min_match) * static_cast<double>(cs.checked)) band_ok = false;
    acc.out_of_bounds += guard_damage(*s);
  }
  check_workspaces(acc);
  acc.settle(band_ok);
}

void TaskState::add_errors(Accuracy& acc, const CompareStats& cs, double rel_l2_limit) {
  acc.max_abs_err = std::max(acc.max_abs_err, cs.max_abs);
  acc.max_rel_err = std::max(acc.max_rel_err, cs.max_rel);
  const double rel = cs.sq_ref > 0 ? std::sqrt(cs.sq_err / cs.sq_ref) : std::sqrt(cs.sq_err);
  acc.rel_l2 = std::max(acc.rel_l2, rel);
  if (!(rel <= rel_l2_limit)) acc.precision_ok = false;
}

void TaskState::zero_workspace(ArgSlot& s) { fill_guarded(s, 0); }

void TaskState::allocate_guarded(ArgSlot& s, size_t bytes) {
  const size_t total = (bytes + 2 * kGuardBytes + kAllocGranularity - 1) / kAllocGranularity * kAllocGranularity;
  s.sets.emplace_back(total);
  s.guard = kGuardBytes;
  s.tail = total - kGuardBytes - bytes;
}

void TaskState::fill_guarded(ArgSlot& s, int inside) {
  restore_guards(s);
  SOLTUNE_CUDA(cudaMemsetAsync(s.data(), inside, s.data_bytes(), stream()));
}

void TaskState::restore_guards(ArgSlot& s) {
  SOLTUNE_CUDA(cudaMemsetAsync(s.sets[0].get(), kGuardByte, s.guard, stream()));
  SOLTUNE_CUDA(cudaMemsetAsync(static_cast<char*>(s.data()) + s.data_bytes(), kGuardByte, s.tail, stream()));
}

void TaskState::check_workspaces(Accuracy& acc) {
  for (auto& s : slots_) {
    if (!s->spec->is_buffer || s->spec->role != Role::workspace) continue;
    // Workspaces are small (counters, a partial per block): reading one back costs little.
    std::vector<unsigned char> bytes(s->data_bytes());
    SOLTUNE_CUDA(cudaMemcpyAsync(bytes.data(), s->data(), bytes.size(), cudaMemcpyDeviceToHost, stream()));
    SOLTUNE_CUDA(cudaStreamSynchronize(stream()));
    const auto dirty = static_cast<int64_t>(bytes.size() - static_cast<size_t>(std::count(bytes.begin(), bytes.end(), 0)));
    const int64_t damage = guard_damage(*s);
    acc.workspace_dirty += dirty;
    acc.out_of_bounds += damage;
    if (dirty || damage) zero_workspace(*s);
  }
  for (auto& s : scratch_) {
    if (s->sets.empty()) continue;
    const int64_t damage = guard_damage(*s);
    acc.out_of_bounds += damage;
    if (damage) fill_guarded(*s, 0xFF);
  }
}

void TaskState::reset_workspaces() {
  for (auto& s : slots_)
    if (s->spec->is_buffer && s->spec->role == Role::workspace) zero_workspace(*s);
}

int64_t TaskState::guard_damage(const ArgSlot& s) {
  if (s.guard == 0) return 0;
  // Counted on the device: the trailing zone runs to the allocation's end (up to 2 MiB).
  return device_count([&](void* out) {
    unsigned value = kGuardByte;
    for (const auto& [p, bytes] : {std::pair<const void*, size_t>{s.sets[0].get(), s.guard},
                                   {static_cast<const char*>(s.data()) + s.data_bytes(), s.tail}}) {
      const void* q = p;
      long long n = static_cast<long long>(bytes);
      launch_builtin("soltune_count_ne", {&q, &n, &value, &out}, (n + 15) / 16);
    }
  });
}

void TaskState::plan_library(const LibraryBaseline& lib) {
  // library_routines(): cublaslt_gemm (batched, scaled by alpha), and cublaslt_scaled_gemm with its scales.
  std::vector<std::unique_ptr<LtGemm>> planned;
  std::string described;
  for (size_t i = 0; i < lib.steps.size(); ++i) {
    const auto& step = lib.steps[i];
    if (!step.call) {
      planned.emplace_back();
      continue;
    }
    const RoutineCall& call = *step.call;
    const auto size = [&](const char* name, int64_t otherwise) {
      return call.sizes.count(name) ? call.sizes.at(name).eval_int(bind_) : otherwise;
    };
    GemmShape s;
    s.dtype = task_.dtype;
    s.m = size("m", 0);
    s.n = size("n", 0);
    s.k = size("k", 0);
    s.trans_b = size("trans_b", 0) != 0;
    s.batch = size("batch", 1);
    s.alpha = call.sizes.count("alpha") ? call.sizes.at("alpha").eval(bind_) : 1.0;
    const void *sa = nullptr, *sb = nullptr;
    if (call.routine == "cublaslt_scaled_gemm") {
      s.scale = size("scale", 0);
      sa = slot(call.operands.at("sa")).at(0);
      sb = slot(call.operands.at("sb")).at(0);
    }
    std::string why;
    auto g = LtGemm::plan(s, why, sa, sb);
    if (!g) {
      const std::string which = lib.steps.size() > 1 ? "step " + std::to_string(i + 1) + ": " : "";
      library_note_ = "T_ref: the " + task_.problem->baseline_label + " (" + lib.label + " not used: " + which + why + ")";
      return;
    }
    if (described.empty()) described = g->description();
    planned.push_back(std::move(g));
  }
  library_ = std::move(planned);
  library_ws_ = DeviceBuffer(LtGemm::kWorkspaceBytes);
  library_note_ = "T_ref: " + lib.label + " (" + described + ")";
}

const std::string& TaskState::baseline_source() const {
  return library_.empty() ? task_.problem->baseline_label : task_.problem->baseline_library->label;
}

cudaError_t TaskState::run_baseline(int set) {
  auto run_launch = [&](const LaunchSpec& l) {
    const auto g = eval_geometry(l, bind_);
    auto a = args(l, set, false);
    return launch_kernel(baseline_.at(name_expression(l, task_.dtype, bind_)), g, a.ptrs.data(), stream());
  };
  if (!library_.empty()) {
    const auto& lib = *task_.problem->baseline_library;
    for (size_t i = 0; i < lib.steps.size(); ++i) {
      const auto& step = lib.steps[i];
      if (!step.call) {
        if (auto e = run_launch(task_.problem->baseline[static_cast<size_t>(step.launch)]); e != cudaSuccess) return e;
        continue;
      }
      // Inputs of the set being timed; outputs and temps have one buffer.
      const auto& ops = step.call->operands;
      const auto in = [&](const char* o) { return ops.count(o) ? slot(ops.at(o)).at(static_cast<size_t>(set)) : nullptr; };
      auto e = library_[i]->run(in("a"), in("b"), slot(ops.at("c")).data(), library_ws_.get(), stream(),
                                static_cast<const float*>(in("sa")), static_cast<const float*>(in("sb")));
      if (e == cudaErrorUnknown) throw Error(lib.label + " for " + id_ + ": " + library_[i]->last_error());
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  for (const auto& l : task_.problem->baseline) {
    if (!l.when.empty() && l.when.eval(bind_) == 0) continue;
    if (auto e = run_launch(l); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t TaskState::flush_l2() {
  void* sink = stats_.get();
  auto read = [&](size_t from, size_t bytes) {
    void* p = static_cast<char*>(flush_.get()) + from;
    long long n = static_cast<long long>(bytes / 16);
    if (n > 0) launch_builtin("soltune_flush_read", {&p, &n, &sink}, n);
  };
  // Lines a kernel loaded under an L2 evict_last policy outlast any flush by reads: `looped`
  // (HINT=2) left part of x in L2 for its next repetition, and for any kernel timed after it on the
  // same x, worth 2 us (3%) at RMSNorm f32 32768x1024 (docs/FINDINGS.md, Timing). Demoted to
  // normal first, they go with the rest. The demotion is a context-wide host call, so the kernel
  // before it must have finished: the first part of the flush (a quarter, at most one L2) keeps the
  // GPU busy while the host waits for that, wakes and demotes, and the rest (at least 1.5 L2) reads
  // the demoted lines out after them.
  SOLTUNE_CUDA(cudaEventRecord(flushed_prior_.get(), stream()));
  read(0, flush_early_);
  if (auto e = cudaEventSynchronize(flushed_prior_.get()); e != cudaSuccess) return e;
  SOLTUNE_CUDA(cudaCtxResetPersistingL2Cache());
  read(flush_early_, flush_bytes_ - flush_early_);
  return cudaSuccess;
}

cudaError_t TaskState::before_repetition(int set, bool first_of_batch) {
  if (!rotate_) {
    // Drawn behind the previous repetition and before the flush, which then evicts the new values.
    if (auto e = redraw_inputs(set); e != cudaSuccess) return e;
    return flush_l2();
  }
  // The set the previous repetition read (its check, if any, is done): redrawn now, it is read
  // again only after the other sets' repetitions, whose traffic evicts what the redraw wrote.
  if (auto e = redraw_inputs((set + sets_ - 1) % sets_); e != cudaSuccess) return e;
  return first_of_batch ? flush_l2() : cudaSuccess;
}

cudaError_t TaskState::before_release(Event& previous_end) {
  if (!rotate_) return cudaSuccess;
  if (auto e = cudaEventSynchronize(previous_end.get()); e != cudaSuccess) return e;
  SOLTUNE_CUDA(cudaCtxResetPersistingL2Cache());
  return cudaSuccess;
}

void TaskState::settle(double us) {
  unsigned long long ns = static_cast<unsigned long long>(us * 1000.0);
  void* args[] = {&ns};
  SOLTUNE_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(builtin_.at("soltune_spin")), dim3(1), dim3(1), args, 0,
                                stream()));
}

Event& TaskState::event(size_t i) {
  while (events_.size() <= i) events_.push_back(std::make_unique<Event>());
  return *events_[i];
}

void TaskState::abandon_all() {
  for (auto& s : scratch_)
    for (auto& b : s->sets) b.abandon();
  for (auto& s : slots_) {
    for (auto& b : s->sets) b.abandon();
    for (auto& b : s->pristine) b.abandon();
    s->ref.abandon();
    s->mag.abandon();
  }
  flush_.abandon();
  flushed_prior_.abandon();
  stats_.abandon();
  for (auto& e : events_) e->abandon();
  for (auto& e : check_marks_) e.abandon();
  check_ws_.abandon();
  if (gate_) gate_->abandon();
  builtin_.lib.abandon();
  reference_.lib.abandon();
  baseline_.lib.abandon();
  library_ws_.abandon();
  for (auto& g : library_) (void)g.release();  // their handles died with the context
  stream_.abandon();
}

}  // namespace soltune
