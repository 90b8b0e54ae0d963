#pragma once
// A problem (templates/<name>/problem.yaml) and its kernel variants (<variant>.yaml + .cu).
// docs/TEMPLATES.md describes the file format; this is its in-memory form.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.hpp"
#include "core/dtype.hpp"
#include "core/expr.hpp"

namespace soltune {

// inout: a buffer the kernel reads and overwrites in place. Drawn like an input before every run
// (the timed loop redraws all of it before every repetition), checked like an output; the
// reference reads the drawn values through its name and writes what the kernel must leave there
// into `<name>.out`, a double array its args name.
// workspace: scratch the kernels share with the caller, zeroed once and left zeroed by every launch
// (docs/TEMPLATES.md); its shape may use dtype_bytes and the device symbols besides the sizes.
// constant (kind: constant): data the variants' kernels read from a __constant__ symbol of its name,
// filled before they run; the reference and the baseline take it as an input.
enum class Role { in, out, inout, temp, workspace, constant };
std::string_view role_name(Role r);  // "in", "out", "inout", "temp", "workspace", "constant"
inline bool role_is_drawn(Role r) { return r == Role::in || r == Role::inout; }     // random or given data before a run
inline bool role_is_checked(Role r) { return r == Role::out || r == Role::inout; }  // compared with the reference

// How a buffer's inputs are drawn: normal(mean, std) or uniform(lo, hi).
struct InitSpec {
  enum class Kind { normal, uniform } kind = Kind::normal;
  double a = 0, b = 1;
  std::string str() const;
};

// The magnitudes the full-range correctness round draws for one input: log-uniform between min and
// max, with the signs given. By default the dtype's whole finite range, subnormals included, both
// signs; a problem narrows it where the operation cannot take that range, and says why. The bounds
// are expressions over the sizes and dtype_max (the input dtype's largest finite value).
struct MagnitudeRange {
  enum class Sign { both, positive, negative } sign = Sign::both;
  Expr min, max;    // empty: the dtype's smallest subnormal, its largest finite value
  std::string why;  // required where the range is narrowed
  bool narrowed() const { return !min.empty() || !max.empty() || sign != Sign::both; }
};

// A reference argument naming a second array of a buffer: "<out>.magnitude" (the magnitude of
// what it sums) or "<inout>.out" (what the kernel must leave in an inout buffer).
struct ReferenceArray {
  enum class Kind { magnitude, out } kind;
  std::string buffer;
};
std::optional<ReferenceArray> reference_array(const std::string& arg);  // nothing for a plain name

struct ArgSpec {
  std::string name;
  bool is_buffer = true;
  std::string dtype;          // "T" (the task's dtype) or a concrete dtype name
  std::vector<Expr> shape;    // buffers: element count is the product (workspaces' may use device symbols)
  Role role = Role::in;
  InitSpec init;              // buffers with role in, inout or constant
  // Given data instead of random draws (inputs and constants): a .npy file (its dtype and element
  // count must be the buffer's), or raw little-endian elements of the buffer's dtype. Every round
  // reads the same data.
  std::filesystem::path file;
  bool file_raw = false;
  std::vector<InitSpec> edge_inits;  // extra correctness rounds: values near the dtype's edges, where relevant
  MagnitudeRange range;              // the full-range round's magnitudes (inputs and constants)
  // Outputs of a reduction: the reference also writes, per element, the magnitude of what it summed
  // (for C = A B, (|A| |B|)_ij) into `<name>.magnitude`, a double array its args name. The
  // per-element band then grows with it (Tolerance::mtol): a sum's rounding error scales with the
  // magnitudes of its terms, not with the result, which cancellation can make small.
  bool magnitude = false;
  Expr value;                 // scalars
  // Buffers a kernel takes as CUDA vectors (float2, int4...): `vec` elements per item. The shape
  // counts items; the buffer holds shape * vec elements of its dtype, drawn, referenced and compared
  // element by element.
  int lanes = 1;
  SourceLoc loc;

  DType resolve_dtype(DType t) const { return dtype == "T" ? t : parse_dtype(dtype); }
  // The C++ type of one item: the dtype's, or its vector type.
  std::string item_cpp(DType t) const { return lanes == 1 ? std::string(dtype_cpp(resolve_dtype(t))) : dtype_vector_cpp(resolve_dtype(t), lanes); }
};

// One kernel launch: a __global__ function template, its template arguments ("T", or integer
// expressions over knobs and sizes, such as "BLOCK" or "WIDTH * cols"), its kernel arguments (by
// name) and its geometry.
struct LaunchSpec {
  std::string kernel;
  std::vector<std::string> template_args;
  std::vector<Expr> template_values;  // parallel to template_args; empty for "T"
  std::vector<std::string> args;
  std::vector<Expr> grid;   // 1 to 3 dimensions
  std::vector<Expr> block;  // 1 to 3 dimensions
  Expr smem;                // dynamic shared memory in bytes
  std::vector<Expr> cluster;  // blocks per cluster, 1 to 3 dimensions, given at launch (empty: none)
  Expr when;                  // a variant's launches around its kernel, a baseline's: run only where it holds (empty: always)
  // A launch after a variant's kernel may start while the launch before it drains (programmatic
  // dependent launch, compute capability 9.0 or newer; elsewhere it is an ordinary launch). Its
  // kernel must execute griddepcontrol.wait before it reads anything the earlier launches wrote.
  bool programmatic = false;
  SourceLoc loc;
  bool has_geometry() const { return !grid.empty() && !block.empty(); }
};

struct KnobSpec {
  std::string name;
  std::vector<int64_t> values;
  std::string doc;
};

// A design the template's author knows (PyTorch's, Triton's...): a value per knob, in knob order, as
// expressions over the sizes, dtype_bytes and the device. Searches try the legal ones first, so a
// tuned result is never worse than the known designs the space holds.
struct Preset {
  std::string name;
  std::vector<Expr> values;
};

// A side effect of some configurations that a caller should know of (e.g. L2 lines left kept), shown
// beside an exported kernel whose knobs, sizes and dtype_bytes make `when` true.
struct VariantNote {
  Expr when;
  std::string text;
};

// A kernel argument the harness builds (`tensor_maps:`): a TMA descriptor (CUtensorMap) over a buffer
// of the problem, encoded per candidate and input set; the kernel takes it by value. Dims, box and
// strides are innermost first, expressions over sizes, knobs and dtype_bytes (core/tensor_map.hpp
// holds the rules they must keep).
struct TensorMapSpec {
  enum class Swizzle { none, b32, b64, b128 };
  enum class L2 { none, b64, b128, b256 };  // L2 promotion: the size of the L2 fills a load asks for
  enum class Oob { zero, nan };             // what out-of-bounds elements read as
  std::string name, buffer;
  std::string elem;                      // "T" or a dtype name: the buffer's dtype unless `elem` is given
  std::string buffer_dtype;              // the buffer's, with its shape: a map must lie inside its buffer
  std::vector<Expr> buffer_shape;
  bool written = false;                  // over an output or workspace: TMA may store through it
  std::vector<Expr> dims, box, strides;  // strides in elements, of dims 1..rank-1; empty: row-major over dims
  Swizzle swizzle = Swizzle::none;
  L2 l2 = L2::b256;
  Oob oob = Oob::zero;
  SourceLoc loc;
  DType elem_dtype(DType task) const { return elem == "T" ? task : parse_dtype(elem); }
};

// A preprocessor definition the variant's kernels are compiled with (`defines:`), for kernels
// written as macro programs: -D name=value, the value an expression over knobs, sizes and
// dtype_bytes (an integer where it is one), or with `type` the task's element type ("float",
// "__nv_bfloat16"...).
struct DefineSpec {
  std::string name;
  Expr value;
  bool type = false;
  SourceLoc loc;
};

struct VariantSpec {
  std::string name, description;
  std::filesystem::path source_path;
  std::string source;
  LaunchSpec launch;             // args default to the problem's args, in order
  std::vector<KnobSpec> knobs;
  std::vector<Expr> constraints;
  std::vector<std::string> constraint_why;  // parallel to constraints: the reason one states ({expr, why}), or ""
  // Constraint i's stated reason, "" where it states none (or the spec was built without reasons).
  std::string constraint_reason(size_t i) const { return i < constraint_why.size() ? constraint_why[i] : std::string(); }
  Expr inflight_bytes;           // model hint: bytes one thread keeps in flight (optional)
  Expr registers;                // model hint: registers per thread, estimated before compiling (optional)
  ComputeUnit model_unit = ComputeUnit::fp32;  // model hint: the unit its arithmetic runs on
  std::vector<Preset> presets;   // optional
  // Named by problem.yaml's `fallback:`: presets[0], named "fallback", is a configuration legal at
  // every valid shape (over dtype_bytes only), measured by every search of the variant and exported
  // as the kernel of last resort. One variant of a problem at most.
  bool has_fallback = false;
  const Preset* fallback() const { return has_fallback ? &presets.front() : nullptr; }
  std::vector<VariantNote> notes;  // optional
  std::vector<DType> dtypes;     // the problem's dtypes it serves (empty: all of them)
  // An architecture-specific target ("sm_90a": wgmma, setmaxnreg): candidates compile for it and
  // run only on devices of exactly that compute capability. Empty: the device's own architecture.
  std::string arch;
  std::vector<TensorMapSpec> tensor_maps;  // kernel arguments the harness encodes (optional)
  // A plan of several launches (split-K partials and their fix-up, padding): kernels of the same
  // source run before and after the main one (`launch` above, whose geometry and resources a
  // candidate reports), on one stream, timed as one candidate. `scratch` buffers are theirs alone
  // (role temp): shaped over sizes, knobs, dtype_bytes and the device, contents undefined on entry.
  std::vector<LaunchSpec> before, after;
  std::vector<ArgSpec> scratch;
  std::vector<DefineSpec> defines;  // optional, in declaration order
  std::filesystem::path yaml_path;
  bool serves(DType t) const;
  const ArgSpec* find_scratch(const std::string& name) const;  // the scratch buffer of that name, or null
  // before, the main launch, after: every launch of the plan, in order (pointers into this spec).
  std::vector<const LaunchSpec*> all_launches() const;
  const TensorMapSpec* tensor_map(const std::string& name) const;  // the map of that name, or null
};

// Per element: |out - ref| <= atol + rtol * |ref| + mtol * mag, where mag is the reference's
// magnitude of an output declared with one (ArgSpec::magnitude; 0 otherwise) and mtol an expression
// over the sizes (a sum's rounding bound grows with its length). Over the output:
// ||out - ref|| / ||ref|| <= rel_l2, the precision check: an f32 problem computed in bf16 fails it
// even inside a loose per-element band. min_match: the fraction of elements that must lie within
// the per-element band (1 unless the problem says otherwise); NaN and unwritten elements fail
// whatever it is, and so does Inf unless the reference itself rounds to it in the output's dtype.
struct Tolerance {
  double atol = 0, rtol = 0;
  double rel_l2 = 1;
  double min_match = 1;
  Expr mtol;  // empty: 0
};

// A size that takes only listed values (a layout flag such as matmul's trans_b), with an optional
// default that a config's shape may then leave out.
struct SizeOption {
  std::vector<int64_t> values;
  std::vector<std::string> names;  // empty, or a name per value, which a config may write instead
  std::optional<int64_t> def;
  std::string doc;
  // "0 (none), 1 (relu)" or "0, 1": what a config may write.
  std::string listing() const;
  // The value a config's text names (a value or a name), if any.
  std::optional<int64_t> parse(const std::string& text) const;
};

// A rule every shape keeps (`requires:`), over the sizes: a config's shape that breaks one is refused
// at load with `why`, and an exported launch function returns cudaErrorInvalidValue for it.
struct ShapeRule {
  Expr expr;
  std::string why;
};

// A routine of soltune's or a vendor library's called over the problem's buffers and sizes: the
// library routine timed as the baseline (T_ref) where the library is present and takes the case,
// called as a framework calls it (the baseline's own kernels serve where it is not, and the baseline
// says why), or the check of timed repetitions a problem declares (docs/TEMPLATES.md).
struct RoutineCall {
  std::string routine;  // one of library_routines() or check_routines()
  std::string label;    // what T_ref is called where the routine times it ("cuBLAS"); "" for a check
  std::map<std::string, std::string> operands;  // the routine's operand -> the problem's buffer
  std::map<std::string, Expr> sizes;            // the routine's size -> an expression over the problem's sizes
  std::string kernel;  // reference_picked: the reference source's kernel that computes picked rows
  SourceLoc loc;
};

// T_ref on a vendor library (`baseline.library`): one routine call, or steps that are routine calls
// and, between them, the baseline's own launches (attention's unfused path: cuBLASLt's products
// around the baseline's softmax kernel). Timed where the library takes every call; the baseline's
// launches serve where it does not, and the baseline's note says why.
struct LibraryStep {
  std::optional<RoutineCall> call;  // a routine of library_routines(), its operands buffers or temps
  int launch = -1;                  // else the index of the baseline launch it runs
};
struct LibraryBaseline {
  std::string label;  // what T_ref is called where the library times it ("cuBLAS")
  std::vector<LibraryStep> steps;
  SourceLoc loc;
};

// A routine soltune can call: the operands and sizes it is given.
struct LibraryRoutine {
  std::string name;
  std::vector<std::string> inputs, outputs;  // operand names: buffers of the task's dtype unless below
  std::vector<std::string> sizes;            // required
  std::vector<std::string> optional_sizes;   // 0 where not given
  std::string doc;
  std::map<std::string, std::string> operand_dtypes;  // operands of a dtype of their own ("sa" -> "f32")
};
const std::vector<LibraryRoutine>& library_routines();
// Checks of timed repetitions that cost a fraction of the reference (`check:` in problem.yaml).
const std::vector<LibraryRoutine>& check_routines();

struct ProblemSpec {
  std::string name, description;
  std::filesystem::path dir;
  std::vector<std::string> sizes;
  std::map<std::string, SizeOption> size_options;  // sizes declared as {name, values, default, doc}
  std::vector<ShapeRule> shape_rules;               // `requires:`
  // The first rule these sizes break, as "why (expression)"; "" where they keep every one.
  std::string broken_rule(const Bindings& b) const;
  std::vector<DType> dtypes;
  std::vector<ArgSpec> args;
  std::map<DType, Tolerance> tolerance;
  Expr flops, bytes;
  std::map<DType, ComputeUnit> compute;  // `compute:`; dtypes it leaves out count against fp32
  ComputeUnit compute_unit(DType t) const;

  std::string reference_source;  // computes each out buffer as double
  LaunchSpec reference;
  // Macros the reference's and the baseline's sources are compiled with (`defines:`, over sizes),
  // as a variant's: naive kernels sized by the same macros as the tuned ones.
  std::vector<DefineSpec> reference_defines, baseline_defines;
  std::string baseline_description, baseline_source;
  std::string baseline_label = "baseline";         // what T_ref is called where the kernels time it
  std::optional<LibraryBaseline> baseline_library;  // tried first where given
  std::optional<RoutineCall> timed_check;  // checks timed repetitions in place of the reference, where given
  std::vector<ArgSpec> baseline_temps;
  std::vector<LaunchSpec> baseline;

  std::vector<VariantSpec> variants;

  const VariantSpec& variant(const std::string& name) const;  // throws Error naming the choices
  const VariantSpec* fallback_variant() const;                // the variant with a fallback, or null
  const ArgSpec* find_arg(const std::string& name) const;
};

// Device facts that constraints and geometry may use, besides sizes, dtype_bytes and knobs.
inline const std::vector<std::string> kDeviceSymbols = {"sms", "cc", "smem_optin", "l2_bytes", "max_block_threads"};

// Loads templates/<name>/ from `templates_dir`. Every error names the file, line and column.
ProblemSpec load_problem(const std::filesystem::path& templates_dir, const std::string& name);
std::vector<std::string> list_problems(const std::filesystem::path& templates_dir);

// The NVRTC name expression of a launch for given bindings, e.g. "gelu<float, 256, 4>".
std::string name_expression(const LaunchSpec& l, DType t, const Bindings& b);
// The name expressions of every kernel of v's plan for these bindings, the main kernel's first and
// each other once (launches whose `when` may not hold included: a header decides at call time).
std::vector<std::string> plan_name_expressions(const VariantSpec& v, DType t, const Bindings& b);
// The definitions of v's compile for these bindings, in declaration order: {name, value text}.
std::vector<std::pair<std::string, std::string>> define_values(const VariantSpec& v, DType t, const Bindings& b);
// The same as NVRTC options: "-Dname=value" each.
std::vector<std::string> define_options(const VariantSpec& v, DType t, const Bindings& b);
// Both for a list of definitions (the reference's or the baseline's, over sizes).
std::vector<std::pair<std::string, std::string>> define_values(const std::vector<DefineSpec>& defines, DType t,
                                                               const Bindings& b);
std::vector<std::string> define_options(const std::vector<DefineSpec>& defines, DType t, const Bindings& b);
// A specialization's bindings for its name expression: its knob values and the sizes it was tuned
// for (a template argument may name a size: the kernel is then compiled for that size alone).
Bindings specialization_bindings(const VariantSpec& v, const std::vector<int64_t>& knob_values,
                                 const std::vector<std::pair<std::string, int64_t>>& sizes);
// The texts of v's notes whose `when` holds for these knob values, sizes and dtype.
std::vector<std::string> notes_for(const VariantSpec& v, DType dtype, const std::vector<int64_t>& knob_values,
                                   const std::vector<std::pair<std::string, int64_t>>& sizes);
// The template arguments of a variant that name a problem size: a kernel compiled with the value
// such an argument takes at some sizes serves exactly the sizes where it takes the same value
// ("cols" one width; "WIDTH * cols" one width where WIDTH is 1, every width where it is 0).
std::vector<Expr> size_template_args(const VariantSpec& v, const ProblemSpec& p);

}  // namespace soltune
