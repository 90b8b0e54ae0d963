#include "core/space.hpp"

#include <algorithm>
#include <cmath>

#include "core/task.hpp"

namespace soltune {

Space::Space(const VariantSpec& v, Bindings fixed)
    : variant_(&v), knobs_(&v.knobs), constraints_(&v.constraints), presets_(&v.presets), fixed_(std::move(fixed)) {
  for (const auto& k : v.knobs) {
    auto& o = ordered_.emplace_back(k.values);
    std::sort(o.begin(), o.end());
  }
}

double Space::place(size_t knob, int64_t value) const {
  const auto& o = ordered_[knob];
  if (o.size() < 2) return 0.0;
  const auto at = std::lower_bound(o.begin(), o.end(), value) - o.begin();
  return static_cast<double>(at) / static_cast<double>(o.size() - 1);
}

std::vector<std::pair<std::string, Config>> Space::presets() const {
  std::vector<std::pair<std::string, Config>> out;
  for (const auto& p : *presets_) {
    Config c;
    for (const auto& e : p.values) {
      const double v = e.eval(fixed_);
      if (!(v == std::floor(v)) || std::fabs(v) > 1e15) break;  // not a whole number: not a value here
      c.values.push_back(static_cast<int64_t>(v));
    }
    if (c.values.size() == knobs().size() && legal(c)) out.emplace_back(p.name, std::move(c));
  }
  return out;
}

std::string Space::key(const Config& c) const {
  std::string s;
  for (size_t i = 0; i < knobs().size(); ++i) {
    if (i) s += ",";
    s += knobs()[i].name + "=" + std::to_string(c.values.at(i));
  }
  return s;
}

Config Space::parse_key(const std::string& key) const {
  const auto parts = key_values(key);
  if (!parts) throw Error("configuration key '" + key + "': each part must be KNOB=integer");
  if (parts->size() != knobs().size()) throw Error("configuration key '" + key + "' does not match this variant's knobs");
  Config c;
  for (size_t i = 0; i < parts->size(); ++i) {
    if ((*parts)[i].first != knobs()[i].name) throw Error("configuration key '" + key + "' does not match this variant's knobs");
    c.values.push_back((*parts)[i].second);
  }
  return c;
}

Bindings Space::bind(const Config& c) const {
  Bindings b = fixed_;
  for (size_t i = 0; i < knobs().size(); ++i) b[knobs()[i].name] = static_cast<double>(c.values.at(i));
  return b;
}

std::string Space::why_illegal(const Config& c) const {
  if (c.values.size() != knobs().size()) return "wrong number of knob values";
  for (size_t i = 0; i < knobs().size(); ++i) {
    const auto& vals = knobs()[i].values;
    if (std::find(vals.begin(), vals.end(), c.values[i]) == vals.end())
      return knobs()[i].name + "=" + std::to_string(c.values[i]) + " is not a listed value";
  }
  const auto b = bind(c);
  for (size_t i = 0; i < constraints_->size(); ++i)
    if (!(*constraints_)[i].eval_bool(b)) {
      const auto why = variant_->constraint_reason(i);
      return "constraint '" + (*constraints_)[i].text() + "' is false" + (why.empty() ? "" : ": " + why);
    }
  return over_device_limits(b);
}

std::string Space::over_device_limits(const Bindings& b) const {
  const auto threads_max = b.find("max_block_threads"), smem_max = b.find("smem_optin");
  if (threads_max == b.end() && smem_max == b.end()) return "";
  for (const auto* l : variant_->all_launches()) {
    if (!l->has_geometry() || (!l->when.empty() && !l->when.eval_bool(b))) continue;
    double threads = 1;
    for (const auto& e : l->block) threads *= e.eval(b);
    if (threads_max != b.end() && threads > threads_max->second)
      return "launch of '" + l->kernel + "' has " + std::to_string(static_cast<long long>(threads)) +
             " threads a block, over the device's " + std::to_string(static_cast<long long>(threads_max->second));
    const double smem = l->smem.empty() ? 0.0 : l->smem.eval(b);
    if (smem_max != b.end() && smem > smem_max->second)
      return "launch of '" + l->kernel + "' asks " + std::to_string(static_cast<long long>(smem)) +
             " B of dynamic shared memory, over the device's " + std::to_string(static_cast<long long>(smem_max->second));
  }
  return "";
}

bool Space::legal(const Config& c) const { return why_illegal(c).empty(); }

double Space::cardinality() const {
  double n = 1;
  for (const auto& k : knobs()) n *= static_cast<double>(k.values.size());
  return n;
}

Config Space::draw(Rng& rng) const {
  Config c;
  for (const auto& k : knobs()) c.values.push_back(k.values[rng.below(k.values.size())]);
  return c;
}

std::optional<Config> Space::sample(Rng& rng, int tries) const {
  // The random numbers drawn do not depend on what this object did before (the list below may be
  // cached or not): the same seed gives the same samples, however the space was used.
  if (!sparse())
    for (int t = 0; t < tries; ++t)
      if (auto c = draw(rng); legal(c)) return c;
  // Rejection failed (a tightly constrained space): a uniform pick among all legal ones, enumerated
  // once and kept.
  const auto& all = all_legal();
  if (all.empty()) return std::nullopt;
  return all[rng.below(all.size())];
}

bool Space::sparse() const {
  if (!sparse_) {
    constexpr int kProbe = 2000;
    Rng probe(0x5ba25e);
    int hits = 0;
    for (int t = 0; t < kProbe; ++t) hits += legal(draw(probe));
    sparse_ = hits < kProbe / 200;
  }
  return *sparse_;
}

std::vector<Config> Space::neighbours(const Config& c) const {
  std::vector<Config> out;
  for (size_t i = 0; i < knobs().size(); ++i) {
    const auto& vals = ordered_[i];
    auto pos = std::lower_bound(vals.begin(), vals.end(), c.values[i]) - vals.begin();
    for (long d : {-1L, 1L}) {
      long j = pos + d;
      if (j < 0 || j >= static_cast<long>(vals.size())) continue;
      Config n = c;
      n.values[i] = vals[j];
      if (legal(n)) out.push_back(std::move(n));
    }
  }
  return out;
}

std::vector<Config> Space::with_new_values(const Config& c,
                                           const std::map<std::string, std::set<int64_t>>& earlier) const {
  std::vector<Config> out;
  for (size_t i = 0; i < knobs().size(); ++i) {
    const auto it = earlier.find(knobs()[i].name);
    if (it == earlier.end()) continue;
    for (const int64_t v : knobs()[i].values) {
      if (it->second.count(v) || v == c.values[i]) continue;
      Config n = c;
      n.values[i] = v;
      if (legal(n)) out.push_back(std::move(n));
    }
  }
  return out;
}

Config Space::mutate(const Config& c, Rng& rng, double rate) const {
  Config m = c;
  bool changed = false;
  for (size_t i = 0; i < knobs().size(); ++i) {
    if (!rng.chance(rate)) continue;
    m.values[i] = knobs()[i].values[rng.below(knobs()[i].values.size())];
    changed = true;
  }
  if (!changed && !knobs().empty()) {
    auto i = rng.below(knobs().size());
    m.values[i] = knobs()[i].values[rng.below(knobs()[i].values.size())];
  }
  return m;
}

Config Space::crossover(const Config& a, const Config& b, Rng& rng) const {
  Config c = a;
  for (size_t i = 0; i < c.values.size(); ++i)
    if (rng.chance(0.5)) c.values[i] = b.values[i];
  return c;
}

std::optional<Config> Space::repair(const Config& c, Rng& rng) const {
  if (legal(c)) return c;
  // Breadth-first over knobs changed: first every single-knob change, then random pairs.
  std::vector<Config> singles;
  for (size_t i = 0; i < knobs().size(); ++i)
    for (auto v : knobs()[i].values) {
      Config n = c;
      n.values[i] = v;
      if (legal(n)) singles.push_back(std::move(n));
    }
  if (!singles.empty()) return singles[rng.below(singles.size())];
  for (int t = 0; t < 500; ++t) {
    Config n = c;
    for (int k = 0; k < 2; ++k) {
      auto i = rng.below(knobs().size());
      n.values[i] = knobs()[i].values[rng.below(knobs()[i].values.size())];
    }
    if (legal(n)) return n;
  }
  return sample(rng);
}

const std::vector<Config>& Space::all_legal() const {
  if (!legal_) legal_ = enumerate_legal(1u << 22);
  return *legal_;
}

bool Space::each_combination(const std::function<bool(const Config&)>& f) const {
  std::vector<size_t> idx(knobs().size(), 0);
  for (;;) {
    Config c;
    for (size_t i = 0; i < idx.size(); ++i) c.values.push_back(knobs()[i].values[idx[i]]);
    if (!f(c)) return false;
    size_t i = idx.size();
    for (; i > 0; --i) {
      if (++idx[i - 1] < knobs()[i - 1].values.size()) break;
      idx[i - 1] = 0;
    }
    if (i == 0) return true;  // every knob wrapped around
  }
}

std::vector<Config> Space::enumerate_legal(size_t limit) const {
  std::vector<Config> out;
  if (knobs().empty() || limit == 0) return out;
  each_combination([&](const Config& c) {
    if (legal(c)) out.push_back(c);
    return out.size() < limit;
  });
  return out;
}

}  // namespace soltune
