#include "codegen/header_parts.hpp"

#include "codegen/content_hash.hpp"
#include "codegen/header_maps.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>

namespace soltune {
namespace {

std::string dims(const std::vector<Expr>& e) {
  std::string d = "dim3(";
  for (size_t k = 0; k < e.size(); ++k) d += (k ? ", " : "") + std::string("static_cast<unsigned>(") + e[k].text() + ")";
  return d + ")";
}

// The launches of a variant's plan besides the main one: before, then after (the plan's steps).
std::vector<const LaunchSpec*> extra_launches(const VariantSpec& v) {
  std::vector<const LaunchSpec*> out;
  for (const auto* l : v.all_launches())
    if (l != &v.launch) out.push_back(l);
  return out;
}

std::string join_sizes(const ProblemSpec& p, const std::string& prefix, const std::string& suffix) {
  std::string s;
  for (const auto& sz : p.sizes) s += prefix + sz + suffix;
  return s;
}

// A buffer's element count as C++ over doubles: the product of its shape.
std::string element_count(const ArgSpec& a) {
  std::string count = "1.0";
  for (const auto& e : a.shape) count += " * (" + e.text() + ")";
  return count;
}

// The problem's constant arguments, in order.
std::vector<const ArgSpec*> constants_of(const ProblemSpec& p) {
  std::vector<const ArgSpec*> out;
  for (const auto& a : p.args)
    if (a.role == Role::constant) out.push_back(&a);
  return out;
}

// plan_<j>: the specialization's constraints, geometry and scalar arguments for given sizes.
void plan(std::ostringstream& h, const ProblemSpec& p, DType dt, const Specialization& s, const std::string& fn, size_t j) {
  const auto& v = *s.variant;
  for (const auto& c : s.comment) h << "// " << c << "\n";
  h << "inline " << fn << "_plan " << fn << "_plan_" << j << "(" << join_sizes(p, "double ", ", ")
    << "double sms, double cc, double smem_optin, double l2_bytes) {\n  using namespace detail;\n"
    << "  (void)sms; (void)cc; (void)smem_optin; (void)l2_bytes;\n"
    << "  [[maybe_unused]] const double dtype_bytes = " << dtype_bytes(dt) << ";\n";
  for (size_t k = 0; k < v.knobs.size(); ++k)
    h << "  [[maybe_unused]] const double " << v.knobs[k].name << " = " << s.config.values.at(k) << ";\n";
  h << "  " << fn << "_plan p;\n  p.cc = static_cast<int>(cc);\n  p.ok = true";
  // An architecture-specific variant (sm_90a) runs its embedded cubin only: nvcc's plain sm_90 pass
  // rejects its code, so the header carries no source of it.
  if (!v.arch.empty())
    h << (s.binary.empty() ? "\n      && false  // no cubin was built for " + v.arch
                           : "\n#ifdef SOLTUNE_SOURCE_ONLY\n      && false  // " + v.arch + " code comes from its cubin only\n#endif\n"
                             "      && (cc == " + std::to_string(s.binary_cc) + ")");
  // The problem's rules first: no kernel serves a shape that breaks one.
  for (const auto& r : p.shape_rules) h << "\n      && (" << r.expr.text() << ")";
  for (const auto& c : v.constraints) h << "\n      && (" << c.text() << ")";
  // A size compiled into the kernel (a template argument): where that argument takes the value the
  // kernel was compiled with (the knobs are constants here, so "WIDTH * cols" at WIDTH 0 is any width).
  const auto tuned = specialization_bindings(v, s.config.values, s.shape.dims);
  for (const auto& a : size_template_args(v, p)) h << "\n      && ((" << a.text() << ") == " << a.eval_int(tuned) << ")";
  h << ";\n  if (!p.ok) return p;\n  p.grid = " << dims(v.launch.grid) << ";\n  p.block = " << dims(v.launch.block)
    << ";\n  p.smem = static_cast<size_t>(" << v.launch.smem.text() << ");\n";
  // A cluster given at launch: only where the device has clusters and the grid is whole clusters.
  if (!v.launch.cluster.empty())
    h << "  p.cluster = " << dims(v.launch.cluster) << ";\n"
      << "  p.ok = detail::cluster_fits(p.cc, p.grid, p.cluster);\n";
  h << tensor_map_plan(dt, v);
  const auto extra = extra_launches(v);
  for (size_t i = 0; i < extra.size(); ++i) {
    const auto& l = *extra[i];
    h << "  p.steps[" << i << "].run = " << (l.when.empty() ? "true" : "(" + l.when.text() + ") != 0") << ";\n"
      << "  p.steps[" << i << "].grid = " << dims(l.grid) << ";\n  p.steps[" << i << "].block = " << dims(l.block)
      << ";\n  p.steps[" << i << "].smem = static_cast<size_t>(" << l.smem.text() << ");\n";
  }
  // Scratch buffers lie in the caller's one allocation, each at a 256-byte boundary.
  for (size_t i = 0; i < v.scratch.size(); ++i) {
    const auto& a = v.scratch[i];
    h << "  p.scratch_elems[" << i << "] = static_cast<long long>(" << element_count(a) << ");\n"
      << "  p.scratch_offset[" << i << "] = p.scratch_bytes;\n"
      << "  p.scratch_bytes += (static_cast<size_t>(p.scratch_elems[" << i << "]) * sizeof("
      << dtype_cpp(a.resolve_dtype(dt)) << ") + 255) / 256 * 256;\n";
  }
  // A scalar past its dtype's range would wrap: no plan holds there.
  for (const auto& a : p.args) {
    if (a.is_buffer) continue;
    const DType sd = a.resolve_dtype(dt);
    if (!dtype_is_float(sd)) {
      const auto r = dtype_int_range(sd);
      char range[96];
      std::snprintf(range, sizeof range, " >= %.17g && v < %.17g", r.min, r.end);
      h << "  {\n    const double v = static_cast<double>(" << a.value.text() << ");\n    if (!(v" << range
        << ")) {\n      p.ok = false;\n      return p;\n    }\n  }\n";
    }
    h << "  p." << a.name << " = static_cast<" << dtype_cpp(sd) << ">(" << a.value.text() << ");\n";
  }
  const auto cs = constants_of(p);
  for (size_t i = 0; i < cs.size(); ++i) {
    h << "  p.constant_elems[" << i << "] = static_cast<long long>(" << element_count(*cs[i]) << ");\n";
  }
  h << "  return p;\n}\n\n";
}

// Copies the caller's data of each constant (host or device memory: cudaMemcpyDefault) into the
// kernel's __constant__ variable, stream-ordered before the launch: in the embedded cubin's library
// (`lib`), or the variable of the source's copy in namespace `ns`.
std::string constant_copies(const ProblemSpec& p, DType dt, const std::string& lib, const std::string& ns,
                            const std::string& indent) {
  std::string out;
  const auto cs = constants_of(p);
  for (size_t i = 0; i < cs.size(); ++i) {
    const auto& a = *cs[i];
    const std::string bytes = "static_cast<size_t>(p.constant_elems[" + std::to_string(i) + "]) * sizeof(" +
                              std::string(dtype_cpp(a.resolve_dtype(dt))) + ")";
    out += indent + "{  // constant '" + a.name + "'\n";
    if (!lib.empty())
      out += indent + "  void* sym = nullptr;\n" + indent + "  size_t sym_bytes = 0;\n" + indent +
             "  cudaError_t e = cudaLibraryGetGlobal(&sym, &sym_bytes, " + lib + ", \"" + a.name + "\");\n" + indent +
             "  if (e != cudaSuccess) return e;\n" + indent + "  if (" + bytes + " > sym_bytes) return cudaErrorInvalidValue;\n" +
             indent + "  if ((e = cudaMemcpyAsync(sym, " + a.name + ", " + bytes +
             ", cudaMemcpyDefault, stream)) != cudaSuccess) return e;\n";
    else
      out += indent + "  if (" + bytes + " > sizeof(" + ns + "::" + a.name + ")) return cudaErrorInvalidValue;\n" + indent +
             "  const cudaError_t e = cudaMemcpyToSymbolAsync(" + ns + "::" + a.name + ", " + a.name + ", " + bytes +
             ", 0, cudaMemcpyDefault, stream);\n" + indent + "  if (e != cudaSuccess) return e;\n";
    out += indent + "}\n";
  }
  return out;
}

// One kernel launch of a specialization's plan, as the body of a function returning its status:
// the embedded cubin where the device is the one it was built for, else the kernel from source.
// `geo` is the plan's member holding the launch's geometry ("p." for the main launch).
void launch_body(std::ostringstream& h, const ProblemSpec& p, DType dt, const Specialization& s, const LaunchSpec& l,
                 const std::string& geo, const std::string& image) {
  const auto& v = *s.variant;
  const auto b = specialization_bindings(v, s.config.values, s.shape.dims);
  const std::string expr = name_expression(l, dt, b);
  const std::string kernel = variant_namespace(s) + "::" + expr;
  // An input is const in the exported call (soltune checked that no kernel writes it), and passed
  // without const, which converts to whichever of T* and const T* the kernel declares.
  std::string call_args;
  for (const auto& name : l.args) {
    const auto* a = p.find_arg(name);
    const std::string arg = v.tensor_map(name)              ? tensor_map_local(name)
                            : a && a->is_buffer && a->role == Role::in ? "const_cast<" + a->item_cpp(dt) + "*>(" + name + ")"
                            : (!a || a->is_buffer)          ? name
                                                            : "p." + name;
    call_args += (call_args.empty() ? "" : ", ") + arg;
  }
  const bool main = &l == &v.launch;
  const bool cluster = main && !l.cluster.empty();
  const std::string grid = geo + "grid", block = geo + "block", smem = geo + "smem";
  // Dynamic shared memory beyond 48 KiB less the static part needs the opt-in (unknown static: any).
  const int smem_static = main ? s.smem_static : -1;
  const std::string optin = smem_static >= 0 ? std::to_string(48 * 1024 - smem_static) : "0";
  const auto lowered = s.lowered.find(expr);
  if (!s.binary.empty() && lowered != s.lowered.end())
    h << "#ifndef SOLTUNE_SOURCE_ONLY\n  if (p.cc == " << s.binary_cc << ") {  // the binary soltune timed\n"
      << "    static const detail::Embedded kernel = detail::load_embedded(detail::" << image << ", \"" << lowered->second
      << "\");\n    if (kernel.error != cudaSuccess) return kernel.error;\n" << constant_copies(p, dt, "kernel.lib", "", "    ")
      << "    return detail::launch_embedded(kernel.kernel, " << grid << ", " << block << ", " << smem << ", "
      << (main ? "p.cluster" : "dim3(1, 1, 1)") << ", " << optin << ", " << (l.programmatic ? "p.cc >= 90" : "false")
      << ", stream, " << call_args << ");\n  }\n"
      << "#endif\n";
  if (!v.arch.empty()) {  // its plan holds only where the cubin above runs
    h << "  return cudaErrorInvalidDeviceFunction;\n";
    return;
  }
  h << constant_copies(p, dt, "", variant_namespace(s), "  ");
  h << "  if (" << smem << " > " << optin << ") {\n    const cudaError_t e = cudaFuncSetAttribute(" << kernel
    << ", cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(" << smem << "));\n    if (e != cudaSuccess) return e;\n  }\n";
  if (!cluster && !l.programmatic) {
    h << "  " << kernel << "<<<" << grid << ", " << block << ", " << smem << ", stream>>>(" << call_args
      << ");\n  return cudaGetLastError();\n";
    return;
  }
  // Launch attributes: the main kernel's cluster, and programmatic serialisation for a launch that
  // may overlap the one before it where the device has programmatic dependent launch.
  h << "  cudaLaunchAttribute attrs[2];\n  const cudaLaunchConfig_t config = detail::launch_config(" << grid << ", " << block
    << ", " << smem << ", stream, " << (cluster ? "p.cluster" : "dim3(1, 1, 1)") << ", attrs"
    << (l.programmatic ? ", p.cc >= 90" : "") << ");\n";
  if (cluster)
    h << "  if (p.cluster.x * p.cluster.y * p.cluster.z > 8) {\n    const cudaError_t e = cudaFuncSetAttribute(" << kernel
      << ", cudaFuncAttributeNonPortableClusterSizeAllowed, 1);\n    if (e != cudaSuccess) return e;\n  }\n";
  h << "  return cudaLaunchKernelEx(&config, " << kernel << ", " << call_args << ");\n";
}

// The scratch buffers' pointers into the caller's allocation (null where a buffer has no elements).
std::string scratch_locals(DType dt, const VariantSpec& v) {
  std::string out;
  for (size_t i = 0; i < v.scratch.size(); ++i) {
    const std::string type = std::string(dtype_cpp(v.scratch[i].resolve_dtype(dt))) + "*";
    out += "  [[maybe_unused]] " + type + " " + v.scratch[i].name + " = p.scratch_elems[" + std::to_string(i) + "] > 0 ? reinterpret_cast<" +
           type + ">(static_cast<char*>(scratch) + p.scratch_offset[" + std::to_string(i) + "]) : nullptr;\n";
  }
  return out;
}

// launch_<j>: the specialization's launches with its knob values baked into the template arguments.
// A plan of one kernel is one function; a plan of several has one per launch, called in order.
// `params` and `args`: the launch functions' pointer parameters, and the same names as arguments.
void launch(std::ostringstream& h, const ProblemSpec& p, DType dt, const Specialization& s, const std::string& fn,
            size_t j, const std::string& params, const std::string& args, const std::string& image) {
  const auto& v = *s.variant;
  const std::string head = "(" + params + "const " + fn + "_plan& p, cudaStream_t stream) {\n";
  const auto extra = extra_launches(v);
  const std::string name = fn + "_launch_" + std::to_string(j);
  if (extra.empty()) {
    h << "inline cudaError_t " << name << head << scratch_locals(dt, v) << tensor_map_encodes(v);
    launch_body(h, p, dt, s, v.launch, "p.", image);
    h << "}\n\n";
    return;
  }
  std::string calls;
  size_t step = 0;
  for (const auto* l : v.all_launches()) {
    const bool main = l == &v.launch;
    const std::string part = name + "_" + (main ? std::string("main") : std::to_string(step));
    h << "inline cudaError_t " << part << head << scratch_locals(dt, v) << (main ? tensor_map_encodes(v) : "");
    launch_body(h, p, dt, s, *l, main ? "p." : "p.steps[" + std::to_string(step) + "].", image);
    h << "}\n";
    calls += main ? "  if ((e = " + part + "(" + args + "p, stream)) != cudaSuccess) return e;\n"
                  : "  if (p.steps[" + std::to_string(step) + "].run && (e = " + part + "(" + args +
                        "p, stream)) != cudaSuccess)\n    return e;\n";
    if (!main) ++step;
  }
  h << "inline cudaError_t " << name << head << "  cudaError_t e = cudaSuccess;\n" << calls << "  return e;\n}\n\n";
}

// Per in-place buffer, that it is overwritten; per workspace, what the caller owes it and its
// element count for the device it will run on.
std::string buffer_notes(const ProblemSpec& p, DType dt, const std::string& fn) {
  std::ostringstream h;
  for (const auto& a : p.args)
    if (a.is_buffer && a.role == Role::inout)
      h << "// '" << a.name << "' is read and overwritten in place: " << fn << " leaves its result there.\n\n";
  for (const auto& a : p.args) {
    if (!a.is_buffer || a.role != Role::workspace) continue;
    std::string shape, count;
    for (const auto& e : a.shape) {
      shape += (shape.empty() ? "" : ", ") + e.text();
      count += (count.empty() ? "" : " * ") + std::string("static_cast<long long>(") + e.text() + ")";
    }
    h << "// '" << a.name << "' is a workspace of [" << shape << "] elements of " << dtype_cpp(a.resolve_dtype(dt))
      << " (" << fn << "_" << a.name << "_elems gives the count):\n"
      << "// zero it once (cudaMemset) before the first call; every call leaves it zeroed again, so it can be\n"
      << "// reused as is. Calls that share one workspace must not run concurrently.\n"
      << "inline long long " << fn << "_" << a.name << "_elems(" << join_sizes(p, "double ", ", ")
      << "double sms, double cc, double smem_optin, double l2_bytes) {\n  using namespace detail;\n"
      << "  (void)sms; (void)cc; (void)smem_optin; (void)l2_bytes;\n"
      << "  [[maybe_unused]] const double dtype_bytes = " << dtype_bytes(dt) << ";\n"
      << "  return " << (count.empty() ? "1" : count) << ";\n}\n\n";
  }
  return h.str();
}

}  // namespace

std::string export_ident(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

std::string variant_namespace(const Specialization& s) {
  const auto& v = *s.variant;
  const std::string base = "v_" + export_ident(v.name);
  if (v.defines.empty()) return base;
  std::string text;
  for (const auto& [name, value] : define_values(v, s.dtype, specialization_bindings(v, s.config.values, s.shape.dims)))
    text += name + "=" + value + "\n";
  return base + "_" + content_hash(text).substr(0, 12);
}

std::vector<std::string> source_macros(const std::string& src) {
  static const std::regex define(R"(^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*))");
  std::vector<std::string> out;
  std::istringstream in(src);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (line.find('#') != std::string::npos && std::regex_search(line, m, define) &&
        std::find(out.begin(), out.end(), m[1].str()) == out.end())
      out.push_back(m[1].str());
  return out;
}

std::string split_includes(const std::string& src, std::set<std::string>& includes) {
  std::istringstream in(src);
  std::string line, body;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 8, "#include") == 0)
      includes.insert(line.substr(first));
    else
      body += line + "\n";
  }
  return body;
}

std::string export_helpers() {
  return "namespace detail {\n"
         "// The functions soltune's expressions may call, over doubles as soltune evaluates them.\n"
         "inline double cdiv(double a, double b) { return std::ceil(a / b); }\n"
         "inline double fdiv(double a, double b) { return std::floor(a / b); }\n"
         "inline double mod(double a, double b) { return a - b * std::floor(a / b); }\n"
         "inline double pow(double a, double b) { return std::pow(a, b); }\n"
         "inline double min(double a, double b) { return a < b ? a : b; }\n"
         "inline double max(double a, double b) { return a > b ? a : b; }\n"
         "inline double is_pow2(double a) { return a >= 1 && a == std::floor(a) && (static_cast<unsigned long long>(a) & "
         "(static_cast<unsigned long long>(a) - 1)) == 0; }\n"
         "// Thread-block clusters given at launch: compute capability 9.0 or newer, a grid of whole clusters,\n"
         "// at most 16 blocks (more than 8 by the non-portable opt-in).\n"
         "inline bool cluster_fits(int cc, dim3 grid, dim3 cluster) {\n"
         "  const unsigned n = cluster.x * cluster.y * cluster.z;\n"
         "  return n == 1 || (cc >= 90 && n <= 16 && grid.x % cluster.x == 0 && grid.y % cluster.y == 0 && grid.z % cluster.z == 0);\n}\n"
         "// A launch's configuration, its attributes held in `attrs`: its cluster (if any), and programmatic stream\n"
         "// serialisation where it may start while the launch before it drains (its kernel waits with griddepcontrol).\n"
         "inline cudaLaunchConfig_t launch_config(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, dim3 cluster,\n"
         "                                        cudaLaunchAttribute (&attrs)[2], bool programmatic = false) {\n"
         "  cudaLaunchConfig_t c{};\n  c.gridDim = grid;\n  c.blockDim = block;\n  c.dynamicSmemBytes = smem;\n  c.stream = stream;\n"
         "  c.attrs = attrs;\n"
         "  if (cluster.x * cluster.y * cluster.z > 1) {\n"
         "    cudaLaunchAttribute& a = attrs[c.numAttrs++];\n    a.id = cudaLaunchAttributeClusterDimension;\n"
         "    a.val.clusterDim.x = cluster.x;\n    a.val.clusterDim.y = cluster.y;\n    a.val.clusterDim.z = cluster.z;\n  }\n"
         "  if (programmatic) {\n"
         "    cudaLaunchAttribute& a = attrs[c.numAttrs++];\n    a.id = cudaLaunchAttributeProgrammaticStreamSerialization;\n"
         "    a.val.programmaticStreamSerializationAllowed = 1;\n  }\n  return c;\n}\n"
         "}  // namespace detail\n";
}

std::string embedded_helpers() {
  return "#ifndef SOLTUNE_SOURCE_ONLY\n"
         "namespace detail {\n"
         "// A kernel of an embedded cubin. The library is context-independent (every device's context gets\n"
         "// it when first used) and deliberately never unloaded: launches may come until the process ends.\n"
         "struct Embedded {\n  cudaKernel_t kernel = nullptr;\n  cudaLibrary_t lib = nullptr;  // its __constant__ variables\n"
         "  cudaError_t error = cudaSuccess;\n};\n"
         "inline Embedded load_embedded(const char* image, const char* name) {\n"
         "  Embedded e;\n"
         "  e.error = cudaLibraryLoadData(&e.lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0);\n"
         "  if (e.error == cudaSuccess) e.error = cudaLibraryGetKernel(&e.kernel, e.lib, name);\n  return e;\n}\n"
         "// Arguments by value, passed by address as the kernel's parameters (the same types soltune passed).\n"
         "template <typename... A>\n"
         "inline cudaError_t launch_embedded(cudaKernel_t k, dim3 grid, dim3 block, size_t smem, dim3 cluster,\n"
         "                                   size_t optin_above, bool programmatic, cudaStream_t stream, A... a) {\n"
         "  const void* f = reinterpret_cast<const void*>(k);\n"
         "  if (smem > optin_above) {  // dynamic beyond 48 KiB less the static part needs the opt-in\n"
         "    const cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));\n"
         "    if (e != cudaSuccess) return e;\n  }\n"
         "  void* args[] = {static_cast<void*>(&a)...};\n"
         "  if (cluster.x * cluster.y * cluster.z == 1 && !programmatic) return cudaLaunchKernel(f, grid, block, args, smem, stream);\n"
         "  if (cluster.x * cluster.y * cluster.z > 8) {  // beyond the portable size\n"
         "    const cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);\n"
         "    if (e != cudaSuccess) return e;\n  }\n"
         "  cudaLaunchAttribute attrs[2];\n"
         "  const cudaLaunchConfig_t config = launch_config(grid, block, smem, stream, cluster, attrs, programmatic);\n"
         "  return cudaLaunchKernelExC(&config, f, args);\n}\n"
         "}  // namespace detail\n#endif\n";
}

std::string bytes_literal(const std::string& bytes) {
  std::string out = "\n    \"";
  size_t col = 0;
  for (const unsigned char c : bytes) {
    if (col >= 110) {
      out += "\"\n    \"";
      col = 0;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      col += 2;
    } else if (c >= 0x20 && c < 0x7f && c != '?') {  // '?': no trigraphs under older standards
      out += static_cast<char>(c);
      ++col;
    } else {  // always three octal digits, so a digit that follows is never part of the escape
      const char oct[] = {'\\', static_cast<char>('0' + (c >> 6)), static_cast<char>('0' + ((c >> 3) & 7)),
                          static_cast<char>('0' + (c & 7)), '\0'};
      out += oct;
      col += 4;
    }
  }
  return out + "\"";
}

std::string export_dtype(const ProblemSpec& p, DType dt, const std::vector<const Specialization*>& specs,
                         const std::map<std::string, std::string>& images) {
  const std::string fn = export_ident(p.name) + "_" + std::string(dtype_name(dt));
  std::ostringstream h;
  const auto fallbacks = std::count_if(specs.begin(), specs.end(), [](const Specialization* s) { return s->fallback; });
  h << "// ---- " << dtype_name(dt) << ": " << specs.size() - fallbacks << " tuned specialization(s)"
    << (fallbacks ? " and the fallback" : ", no fallback") << "\n";
  h << "struct " << fn << "_plan {\n  bool ok = false;\n  int cc = 0;  // the device's compute capability\n"
    << "  // Set by _choice: 0, the kernel was tuned for these sizes; 1, the nearest tuned one whose\n"
    << "  // constraints hold here; 2, the problem's fallback (legal at every shape).\n  int source = 0;\n"
    << "  dim3 grid, block;\n  size_t smem = 0;\n  dim3 cluster{1, 1, 1};  // blocks per cluster, given at launch\n";
  if (const size_t maps = max_tensor_maps(specs); maps > 0)
    h << "  detail::TensorMapShape maps[" << maps << "];  // a specialization's tensor maps, in its variant's order\n";
  size_t steps = 0, scratch = 0;
  for (const auto* s : specs) {
    steps = std::max(steps, extra_launches(*s->variant).size());
    scratch = std::max(scratch, s->variant->scratch.size());
  }
  if (steps > 0)
    h << "  struct step {\n    bool run = false;\n    dim3 grid, block;\n    size_t smem = 0;\n  };\n"
      << "  step steps[" << steps << "];  // the launches before and after the main one, in order\n";
  if (scratch > 0)
    h << "  long long scratch_elems[" << scratch << "] = {};\n  size_t scratch_offset[" << scratch << "] = {};\n"
      << "  size_t scratch_bytes = 0;  // of the caller's scratch allocation this plan uses\n";
  for (const auto& a : p.args)
    if (!a.is_buffer) h << "  " << dtype_cpp(a.resolve_dtype(dt)) << " " << a.name << "{};\n";
  if (const auto cs = constants_of(p); !cs.empty())
    h << "  long long constant_elems[" << cs.size() << "] = {};  // of each constant, in the problem's order\n";
  h << "};\n\n";
  std::string params, checks;
  for (const auto& a : p.args) {
    if (!a.is_buffer) continue;
    // A constant's data may lie in host or device memory: it is copied, never read by a kernel.
    params += (a.role == Role::in || a.role == Role::constant ? "const " : "") + a.item_cpp(dt) + "* " + a.name + ", ";
    if (a.role != Role::constant)
      checks += "  if (reinterpret_cast<std::uintptr_t>(" + a.name + ") % 16 != 0) return cudaErrorInvalidValue;\n";
  }
  // Plans with scratch take it from the caller (as cuBLASLt's workspace): one allocation, its size
  // given; a plan that needs more than is given yields to the next one that fits.
  const bool has_scratch = scratch > 0;
  std::string args_only;
  for (const auto& a : p.args)
    if (a.is_buffer) args_only += a.name + ", ";
  const std::string launch_params = params + (has_scratch ? "void* scratch, " : "");
  if (has_scratch) {
    args_only += "scratch, ";
    checks += "  if (reinterpret_cast<std::uintptr_t>(scratch) % 256 != 0) return cudaErrorInvalidValue;\n";
  }
  const std::string avail_d = has_scratch ? "double scratch_bytes, " : "";
  for (size_t j = 0; j < specs.size(); ++j) {
    plan(h, p, dt, *specs[j], fn, j);
    const auto image = images.find(specs[j]->binary);
    launch(h, p, dt, *specs[j], fn, j, launch_params, args_only, image == images.end() ? "" : image->second);
  }
  const std::string sizes_d = join_sizes(p, "double ", ", ");
  const std::string size_args = join_sizes(p, "", ", ");
  // choice: exact shape first, then nearest in log2 distance; the first whose plan holds.
  h << "// The specialization a call with these sizes uses, or -1 when none is legal for them; *out (when\n"
    << "// given) gets its plan, whose `source` says whether it was tuned for these sizes, is the nearest\n"
    << "// tuned one or the fallback.\n"
    << "inline int " << fn << "_choice(" << sizes_d << "double sms, double cc, double smem_optin, double l2_bytes, "
    << avail_d << fn << "_plan* out = nullptr) {\n"
    << "  constexpr int kCount = " << specs.size() << ";\n  const double tuned[kCount][" << p.sizes.size() << "] = {";
  for (size_t j = 0; j < specs.size(); ++j) {
    h << (j ? ", " : "") << "{";
    for (size_t k = 0; k < p.sizes.size(); ++k) h << (k ? ", " : "") << specs[j]->shape.at(p.sizes[k]);
    h << "}";
  }
  h << "};\n  const bool fallback[kCount] = {";
  for (size_t j = 0; j < specs.size(); ++j) h << (j ? ", " : "") << (specs[j]->fallback ? "true" : "false");
  h << "};\n  const double here[] = {" << join_sizes(p, "", ", ") << "};\n"
    << "  for (const double v : here)\n    if (!(v >= 0)) return -1;  // a negative size: no plan holds\n"
    << "  double dist[kCount];\n  int order[kCount];\n  for (int j = 0; j < kCount; ++j) {\n"
    << "    dist[j] = 0;\n    for (int k = 0; k < " << p.sizes.size() << "; ++k)\n"
    << "      dist[j] += std::fabs(std::log2(here[k] > 0 ? here[k] : 1) - std::log2(tuned[j][k] > 0 ? tuned[j][k] : 1));\n"
    << "    if (fallback[j]) dist[j] = 1e300;  // the kernel of last resort: after every tuned one\n"
    << "    order[j] = j;\n  }\n"
    << "  for (int a = 1; a < kCount; ++a)  // insertion sort: stable, so ties keep their order\n"
    << "    for (int b = a; b > 0 && dist[order[b]] < dist[order[b - 1]]; --b) std::swap(order[b], order[b - 1]);\n"
    << "  for (int r = 0; r < kCount; ++r) {\n    " << fn << "_plan p;\n    switch (order[r]) {\n";
  for (size_t j = 0; j < specs.size(); ++j)
    h << "      case " << j << ": p = " << fn << "_plan_" << j << "(" << size_args << "sms, cc, smem_optin, l2_bytes); break;\n";
  h << "    }\n    if (p.ok" << (has_scratch ? " && static_cast<double>(p.scratch_bytes) <= scratch_bytes" : "")
    << ") {\n      p.source = fallback[order[r]] ? 2 : dist[order[r]] == 0 ? 0 : 1;\n      if (out) *out = p;\n      return order[r];\n    }\n  }\n  return -1;\n}\n\n";
  h << "inline bool " << fn << "_can_implement(" << sizes_d << "double sms, double cc, double smem_optin, double l2_bytes"
    << (has_scratch ? ", double scratch_bytes" : "") << ") {\n"
    << "  return " << fn << "_choice(" << size_args << "sms, cc, smem_optin, l2_bytes" << (has_scratch ? ", scratch_bytes" : "")
    << ") >= 0;\n}\n\n";
  if (has_scratch)
    h << "// The scratch bytes a call with these sizes uses given all it asks for (0: none; -1: no plan).\n"
      << "inline long long " << fn << "_scratch_bytes(" << sizes_d << "double sms, double cc, double smem_optin, double l2_bytes) {\n"
      << "  " << fn << "_plan p;\n  if (" << fn << "_choice(" << size_args
      << "sms, cc, smem_optin, l2_bytes, 1e300, &p) < 0) return -1;\n"
      << "  return static_cast<long long>(p.scratch_bytes);\n}\n\n";
  h << buffer_notes(p, dt, fn);
  // Sizes first: a negative one is refused before any conversion, and a call whose outputs are all
  // empty has nothing to do (its pointers may then be null).
  std::string negative, empty;
  for (const auto& name : p.sizes) negative += (negative.empty() ? "" : " || ") + name + " < 0";
  for (const auto& a : p.args) {
    if (!a.is_buffer || !role_is_checked(a.role)) continue;
    empty += (empty.empty() ? "" : " && ") + ("(" + element_count(a) + ") == 0");
  }
  h << "// Launches the tuned kernel for these sizes: cudaSuccess with nothing launched when every output\n"
    << "// is empty; cudaErrorInvalidValue (nothing launched) for a negative size, when no specialization\n"
    << "// is legal for the sizes or a pointer is misaligned; else the launch's own status.\n"
    << "inline cudaError_t " << fn << "(" << params << join_sizes(p, "long long ", ", ") << (has_scratch ? "void* scratch, size_t scratch_bytes, " : "")
    << "cudaStream_t stream = 0) {\n"
    << (negative.empty() ? "" : "  if (" + negative + ") return cudaErrorInvalidValue;\n")
    << "  {\n    using namespace detail;\n    if (" << empty << ") return cudaSuccess;\n  }\n"
    << checks << "  int dev = 0, sms = 0, ccM = 0, ccm = 0, optin = 0, l2 = 0;\n"
    << "  cudaError_t e = cudaGetDevice(&dev);\n  if (e != cudaSuccess) return e;\n"
    << "  if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return e;\n"
    << "  if ((e = cudaDeviceGetAttribute(&ccM, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess) return e;\n"
    << "  if ((e = cudaDeviceGetAttribute(&ccm, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess) return e;\n"
    << "  if ((e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess) return e;\n"
    << "  if ((e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev)) != cudaSuccess) return e;\n"
    << "  " << fn << "_plan p;\n  switch (" << fn << "_choice(" << join_sizes(p, "static_cast<double>(", "), ")
    << "sms, ccM * 10.0 + ccm, optin, l2, " << (has_scratch ? "static_cast<double>(scratch_bytes), " : "") << "&p)) {\n";
  for (size_t j = 0; j < specs.size(); ++j)
    h << "    case " << j << ": return " << fn << "_launch_" << j << "(" << args_only << "p, stream);\n";
  h << "    default: return cudaErrorInvalidValue;\n  }\n}\n\n";
  return h.str();
}

}  // namespace soltune
