#include "core/fallback.hpp"

#include <cmath>

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

std::vector<Shape> fallback_probe_shapes(const ProblemSpec& p, DType t) {
  static const int64_t kValues[] = {1, 2, 3, 7, 31, 33, 255, 1000, 4097, 65537, (1 << 20) + 3, (1 << 22) + 1};
  constexpr double kMaxBytes = 4.0 * (1ull << 30);
  // A size with listed values (matmul's trans_b) takes each of them instead.
  std::vector<std::vector<int64_t>> values;
  for (const auto& name : p.sizes) {
    const auto o = p.size_options.find(name);
    if (o != p.size_options.end() && !o->second.values.empty()) values.push_back(o->second.values);
    else values.emplace_back(std::begin(kValues), std::end(kValues));
  }
  std::vector<Shape> out;
  std::vector<size_t> at(p.sizes.size(), 0);
  while (true) {
    Shape s;
    for (size_t k = 0; k < p.sizes.size(); ++k) s.dims.emplace_back(p.sizes[k], values[k][at[k]]);
    if (Task{&p, nullptr, t, s}.bytes() <= kMaxBytes) out.push_back(std::move(s));
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
