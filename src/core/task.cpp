#include "core/task.hpp"

#include <algorithm>
#include <sstream>

#include "core/space.hpp"

namespace soltune {

std::string Shape::key() const {
  std::string s;
  for (const auto& [n, v] : dims) s += (s.empty() ? "" : ",") + n + "=" + std::to_string(v);
  return s;
}

std::optional<std::vector<std::pair<std::string, int64_t>>> key_values(const std::string& key) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::istringstream in(key);
  std::string part;
  while (std::getline(in, part, ',')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0) return std::nullopt;
    const auto text = part.substr(eq + 1);
    try {
      size_t used = 0;
      const int64_t v = std::stoll(text, &used);
      if (used != text.size()) return std::nullopt;
      out.emplace_back(part.substr(0, eq), v);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return out;
}

Shape parse_shape(const ProblemSpec& p, const std::string& key) {
  auto parts = key_values(key);
  if (!parts) throw Error("knowledge base: malformed shape '" + key + "'");
  Shape s{std::move(*parts)};
  if (s.dims.size() != p.sizes.size()) throw Error("knowledge base: shape '" + key + "' does not fit problem " + p.name);
  for (size_t i = 0; i < s.dims.size(); ++i)
    if (s.dims[i].first != p.sizes[i]) throw Error("knowledge base: shape '" + key + "' does not fit problem " + p.name);
  return s;
}

int64_t Shape::at(const std::string& name) const {
  for (const auto& [n, v] : dims)
    if (n == name) return v;
  throw Error("shape " + key() + " has no size '" + name + "'");
}

std::string Task::id() const { return problem->name + "/" + variant->name + "/" + dtype_shape(); }

std::string Task::dtype_shape() const { return std::string(dtype_name(dtype)) + "/" + shape.key(); }

std::string why_variant_cannot_run(const VariantSpec& v, const DeviceInfo& d) {
  if (v.arch.empty()) return "";
  const int cc = std::stoi(v.arch.substr(3, v.arch.size() - 4));
  if (cc == d.cc()) return "";
  return "variant '" + v.name + "' is built for " + v.arch + ", which runs only on compute capability " +
         std::to_string(cc / 10) + "." + std::to_string(cc % 10) + "; " + d.name + " is " + d.arch();
}

std::string variant_arch(const VariantSpec& v, const std::string& run_arch) { return v.arch.empty() ? run_arch : v.arch; }

void bind_device(Bindings& b, const DeviceInfo& d) {
  b["sms"] = d.sms;
  b["cc"] = d.cc();
  b["smem_optin"] = d.smem_per_block_optin;
  b["l2_bytes"] = static_cast<double>(d.l2_bytes);
  if (d.max_threads_per_block > 0) b["max_block_threads"] = d.max_threads_per_block;
}

Bindings Task::sizes() const {
  Bindings b;
  for (const auto& [n, v] : shape.dims) b[n] = static_cast<double>(v);
  b["dtype_bytes"] = dtype_bytes(dtype);
  return b;
}

Bindings Task::fixed(const DeviceInfo& d) const {
  Bindings b = sizes();
  bind_device(b, d);
  return b;
}

double Task::flops() const { return problem->flops.eval(sizes()); }
double Task::bytes() const { return problem->bytes.eval(sizes()); }
double Task::t_sol_us(const Ceilings& c) const {
  return soltune::t_sol_us(flops(), bytes(), c.rate(problem->compute_unit(dtype)), c.sol_bw());
}

Geometry eval_geometry(const LaunchSpec& l, const Bindings& b) {
  Geometry g;
  for (size_t i = 0; i < l.grid.size(); ++i) g.grid[i] = l.grid[i].eval_int(b);
  for (size_t i = 0; i < l.block.size(); ++i) g.block[i] = l.block[i].eval_int(b);
  g.smem = l.smem.eval_int(b);
  for (size_t i = 0; i < l.cluster.size(); ++i) g.cluster[i] = l.cluster[i].eval_int(b);
  for (int i = 0; i < 3; ++i)
    if (g.grid[i] < 1 || g.block[i] < 1 || g.cluster[i] < 1)
      throw Error(l.loc, "launch of '" + l.kernel + "' has a non-positive dimension: " + g.str());
  if (g.smem < 0) throw Error(l.loc, "launch of '" + l.kernel + "' asks for negative shared memory");
  return g;
}

double task_device_bytes(const Task& t, int input_sets) {
  const auto b = t.sizes();
  double bytes = 0;
  auto add = [&](const ArgSpec& a) {
    if (!a.is_buffer || a.role == Role::workspace) return;
    const double n = static_cast<double>(buffer_elements(a, b));  // a vector buffer's shape counts its lanes
    const double own = n * dtype_bytes(a.resolve_dtype(t.dtype));
    bytes += own * (a.role == Role::in ? std::max(input_sets, 1) : a.role == Role::inout ? 2 : 1);
    if (role_is_checked(a.role)) bytes += n * sizeof(double) * (a.magnitude ? 2 : 1);
  };
  for (const auto& a : t.problem->args) add(a);
  for (const auto& a : t.problem->baseline_temps) add(a);
  if (t.problem->baseline_library) bytes += 32.0 * (1 << 20);  // the library's workspace (eval/cublaslt_gemm.hpp)
  return bytes;
}

int64_t buffer_elements(const ArgSpec& a, const Bindings& b) {
  int64_t n = 1;
  for (const auto& e : a.shape) n *= e.eval_int(b);
  if (n < 0) throw Error(a.loc, "buffer '" + a.name + "' has a negative size");
  return n;
}

}  // namespace soltune
