#include "eval/wire.hpp"

#include <limits>
#include <type_traits>

namespace soltune::wire {
namespace {

// A struct with a field list (core/fields.hpp) as a mapping of its fields, nested lists as nested
// mappings; decoding requires every field.
template <typename S>
YAML::Node encode_fields(const S& s) {
  YAML::Node n;
  for_each_field(kFields<S>, [&](const auto& f) {
    using V = typename std::remove_cvref_t<decltype(f)>::Value;
    if constexpr (kHasFields<V>) n[f.name] = encode_fields(s.*(f.member));
    else n[f.name] = s.*(f.member);
  });
  return n;
}
template <typename S>
void decode_fields(const YAML::Node& n, S& s, const char* what) {
  if (!n.IsMap()) throw Error(std::string("worker protocol: malformed ") + what);
  for_each_field(kFields<S>, [&](const auto& f) {
    using V = typename std::remove_cvref_t<decltype(f)>::Value;
    const YAML::Node v = n[f.name];
    if (!v) throw Error(std::string("worker protocol: in the ") + what + ", '" + f.name + "' is missing");
    if constexpr (kHasFields<V>) {
      decode_fields(v, s.*(f.member), what);
    } else {
      try {
        s.*(f.member) = v.template as<V>();
      } catch (const YAML::Exception&) {
        throw Error(std::string("worker protocol: in the ") + what + ", '" + f.name + "' is not of its type");
      }
    }
  });
}

}  // namespace

std::string emit(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetDoublePrecision(std::numeric_limits<double>::max_digits10);
  e << n;
  return e.c_str();
}

YAML::Node parse(const std::string& text) {
  try {
    auto n = YAML::Load(text);
    if (!n.IsMap()) throw Error("worker protocol: expected a mapping");
    return n;
  } catch (const YAML::Exception& e) {
    throw Error(std::string("worker protocol: malformed message: ") + e.what());
  }
}

YAML::Node encode(const DeviceInfo& d) {
  YAML::Node n = encode_fields(d);
  if (d.measured) n["measured"] = encode_fields(*d.measured);
  return n;
}

DeviceInfo decode_device(const YAML::Node& n) {
  DeviceInfo d;
  decode_fields(n, d, "device description");
  if (n["measured"]) decode_fields(n["measured"], d.measured.emplace(), "device description");
  return d;
}

YAML::Node encode(const TaskBaseline& b) { return encode_fields(b); }

TaskBaseline decode_baseline(const YAML::Node& n) {
  TaskBaseline b;
  decode_fields(n, b, "baseline");
  b.kind = TimeKind::measured;
  return b;
}

YAML::Node encode(const CudaEvalOptions& o) { return encode_fields(o); }

CudaEvalOptions decode_eval_options(const YAML::Node& n) {
  CudaEvalOptions o;
  decode_fields(n, o, "evaluation options");
  return o;
}

YAML::Node encode(const Resources& r) {
  YAML::Node n;
  n["sizes"] = std::vector<int>{r.registers, r.spill_stores, r.spill_loads, r.stack, r.smem_static, r.cmem, r.parsed ? 1 : 0};
  for (const auto& x : r.notes) {
    YAML::Node note;
    note["kind"] = static_cast<int>(x.kind);
    note["count"] = x.count;
    note["line"] = x.line;
    n["notes"].push_back(note);
  }
  return n;
}

Resources decode_resources(const YAML::Node& n) {
  if (!n.IsMap() || !n["sizes"]) throw Error("worker protocol: malformed resources");
  const auto v = n["sizes"].as<std::vector<int>>();
  if (v.size() != 7) throw Error("worker protocol: malformed resources");
  Resources r;
  r.registers = v[0];
  r.spill_stores = v[1];
  r.spill_loads = v[2];
  r.stack = v[3];
  r.smem_static = v[4];
  r.cmem = v[5];
  r.parsed = v[6] != 0;
  for (const auto& x : n["notes"]) {
    const int kind = x["kind"].as<int>();
    if (kind < 0 || kind > static_cast<int>(PtxasNote::Kind::setmaxnreg_ignored))
      throw Error("worker protocol: unknown ptxas note kind " + std::to_string(kind));
    r.notes.push_back(PtxasNote{static_cast<PtxasNote::Kind>(kind), x["line"].as<std::string>(), x["count"].as<int>()});
  }
  return r;
}

YAML::Node encode_kernels(const std::vector<CompiledKernel>& ks) {
  YAML::Node out;
  for (const auto& k : ks) {
    YAML::Node n;
    n["name"] = k.name_expression;
    n["lowered"] = k.lowered_name;
    n["res"] = encode(k.res);
    out.push_back(n);
  }
  return out;
}

std::vector<CompiledKernel> decode_kernels(const YAML::Node& n) {
  if (!n.IsSequence() || n.size() == 0) throw Error("worker protocol: malformed kernel list");
  std::vector<CompiledKernel> out;
  for (const auto& k : n)
    out.push_back(CompiledKernel{k["name"].as<std::string>(), k["lowered"].as<std::string>(), decode_resources(k["res"])});
  return out;
}

YAML::Node encode_outcome(const EvalResult& r) {
  YAML::Node n;
  n["status"] = std::string(status_name(r.status));
  n["log"] = r.log;
  n["time"] = encode_fields(r.time);
  n["acc"] = encode_fields(r.acc);
  n["occupancy"] = r.occupancy_blocks;
  for (const auto& [name, field] : kGpuPhaseFields) n["phases"][name] = r.phases.*field;
  return n;
}

void decode_outcome(const YAML::Node& n, EvalResult& r) {
  r.status = parse_status(n["status"].as<std::string>());
  r.log = n["log"].as<std::string>();
  decode_fields(n["time"], r.time, "timing");
  decode_fields(n["acc"], r.acc, "accuracy");
  r.occupancy_blocks = n["occupancy"].as<int>();
  for (const auto& [name, field] : kGpuPhaseFields) r.phases.*field = n["phases"][name].as<double>();
}

YAML::Node encode_task(const Task& t) {
  YAML::Node n;
  n["problem"] = t.problem->name;
  n["variant"] = t.variant->name;
  n["dtype"] = std::string(dtype_name(t.dtype));
  for (const auto& [k, v] : t.shape.dims) {
    YAML::Node d;
    d.push_back(k);
    d.push_back(v);
    n["shape"].push_back(d);
  }
  return n;
}

}  // namespace soltune::wire
