#include "core/fallback.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace soltune {

std::optional<Config> fallback_config(const VariantSpec& v, DType t) {
  const Preset* f = v.fallback();
  if (!f) return std::nullopt;
  const Bindings b{{"dtype_bytes", static_cast<double>(dtype_bytes(t))}};
  Config c;
  for (const auto& e : f->values) {
    const double x = e.eval(b);
    if (!(x == std::floor(x)) || std::fabs(x) > 1e15) return std::nullopt;
    c.values.push_back(static_cast<int64_t>(x));
  }
  return c;
}

std::vector<int64_t> fallback_class(const ProblemSpec& p, const VariantSpec& v, const Config& c, const Shape& s) {
  const auto b = specialization_bindings(v, c.values, s.dims);
  std::vector<int64_t> out;
  for (const auto& a : size_template_args(v, p)) out.push_back(a.eval_int(b));
  return out;
}

std::vector<Shape> fallback_shapes(const ProblemSpec& p, DType t, const Shape& base) {
  const VariantSpec* v = p.fallback_variant();
  const auto c = v ? fallback_config(*v, t) : std::nullopt;
  if (!c) return {base};
  // The listed sizes a size template argument reads.
  std::vector<std::pair<std::string, std::vector<int64_t>>> listed;
  for (const auto& [name, o] : p.size_options) {
    if (o.values.empty()) continue;
    for (const auto& a : size_template_args(*v, p))
      if (std::find(a.variables().begin(), a.variables().end(), name) != a.variables().end()) {
        listed.emplace_back(name, o.values);
        break;
      }
  }
  std::vector<Shape> out;
  std::set<std::vector<int64_t>> seen;
  std::vector<size_t> at(listed.size(), 0);
  while (true) {
    Shape s = base;
    for (size_t k = 0; k < listed.size(); ++k)
      for (auto& [name, value] : s.dims)
        if (name == listed[k].first) value = listed[k].second[at[k]];
    if (seen.insert(fallback_class(p, *v, *c, s)).second) out.push_back(std::move(s));
    size_t k = 0;
    while (k < at.size() && ++at[k] == listed[k].second.size()) at[k++] = 0;
    if (k == at.size()) break;
  }
  return out;
}

std::vector<Shape> fallback_probe_shapes(const ProblemSpec& p, DType t) {
  static const std::vector<int64_t> kValues = {1, 2, 3, 7, 31, 33, 255, 1000, 4097, 65537, (1 << 20) + 3, (1 << 22) + 1};
  // Past three free sizes the grid of every value would be millions of shapes: a spread of six each.
  static const std::vector<int64_t> kSpread = {1, 3, 33, 1000, 4097, (1 << 20) + 3};
  constexpr double kMaxBytes = 4.0 * (1ull << 30);
  const auto listed = [&](const std::string& name) {
    const auto o = p.size_options.find(name);
    return o != p.size_options.end() && !o->second.values.empty() ? &o->second.values : nullptr;
  };
  const auto free = std::count_if(p.sizes.begin(), p.sizes.end(), [&](const std::string& s) { return !listed(s); });
  // A size with listed values (matmul's trans_b) takes each of them instead.
  std::vector<std::vector<int64_t>> values;
  for (const auto& name : p.sizes) values.push_back(listed(name) ? *listed(name) : free > 3 ? kSpread : kValues);
  std::vector<Shape> out;
  std::vector<size_t> at(p.sizes.size(), 0);
  while (true) {
    Shape s;
    for (size_t k = 0; k < p.sizes.size(); ++k) s.dims.emplace_back(p.sizes[k], values[k][at[k]]);
    const Task task{&p, nullptr, t, s};
    if (task.bytes() <= kMaxBytes && p.broken_rule(task.sizes()).empty()) out.push_back(std::move(s));
    size_t k = 0;
    while (k < at.size() && ++at[k] == values[k].size()) at[k++] = 0;
    if (k == at.size()) break;
  }
  return out;
}

std::string fallback_gap(const ProblemSpec& p, DType t, const DeviceInfo& d) {
  const VariantSpec* v = p.fallback_variant();
  if (!v) return "no fallback";
  const auto c = fallback_config(*v, t);
  if (!c) return "the fallback's values are not whole numbers for " + std::string(dtype_name(t));
  for (const auto& s : fallback_probe_shapes(p, t)) {
    const Space space(*v, Task{&p, v, t, s}.fixed(d));
    if (auto why = space.why_illegal(*c); !why.empty()) return s.key() + ": " + why;
  }
  return "";
}

}  // namespace soltune
