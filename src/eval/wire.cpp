#include "eval/wire.hpp"

#include <limits>

namespace soltune::wire {
namespace {

YAML::Node encode_ceilings(const Ceilings& c) {
  YAML::Node n;
  n["mem_bw"] = c.mem_bw;
  n["fp32"] = c.fp32;
  n["tensor_16"] = c.tensor_16;
  n["source"] = c.source;
  n["read_bw"] = c.read_bw;
  n["tensor_8"] = c.tensor_8;
  n["tensor_16_probe"] = c.tensor_16_probe;
  n["tensor_8_probe"] = c.tensor_8_probe;
  return n;
}
Ceilings decode_ceilings(const YAML::Node& n) {
  Ceilings c{n["mem_bw"].as<double>(), n["fp32"].as<double>(), n["tensor_16"].as<double>(), n["source"].as<std::string>(),
             n["read_bw"].as<double>()};
  c.tensor_8 = n["tensor_8"].as<double>();
  c.tensor_16_probe = n["tensor_16_probe"].as<double>();
  c.tensor_8_probe = n["tensor_8_probe"].as<double>();
  return c;
}
YAML::Node encode_timing(const Timing& t) {
  YAML::Node n;
  n["median"] = t.median_us;
  n["min"] = t.min_us;
  n["q1"] = t.q1_us;
  n["q3"] = t.q3_us;
  n["max"] = t.max_us;
  n["reps"] = t.reps;
  return n;
}
Timing decode_timing(const YAML::Node& n) {
  Timing t;
  t.median_us = n["median"].as<double>();
  t.min_us = n["min"].as<double>();
  t.q1_us = n["q1"].as<double>();
  t.q3_us = n["q3"].as<double>();
  t.max_us = n["max"].as<double>();
  t.reps = n["reps"].as<int>();
  return t;
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
  YAML::Node n;
  n["name"] = d.name;
  n["uuid"] = d.uuid;
  n["cc"] = std::vector<int>{d.cc_major, d.cc_minor};
  n["sms"] = d.sms;
  n["l2"] = d.l2_bytes;
  n["mem"] = d.mem_bytes;
  n["smem"] = std::vector<int>{d.smem_per_sm, d.smem_per_block, d.smem_per_block_optin};
  n["regs"] = std::vector<int>{d.regs_per_sm, d.regs_per_block};
  n["threads"] = std::vector<int>{d.max_threads_per_sm, d.max_threads_per_block, d.max_blocks_per_sm, d.warp_size};
  n["clock_khz"] = d.clock_khz;
  n["versions"] = std::vector<int>{d.driver_version, d.runtime_version, d.nvrtc_version};
  n["datasheet"] = encode_ceilings(d.datasheet);
  if (d.measured) n["measured"] = encode_ceilings(*d.measured);
  return n;
}

DeviceInfo decode_device(const YAML::Node& n) {
  DeviceInfo d;
  d.name = n["name"].as<std::string>();
  d.uuid = n["uuid"].as<std::string>();
  const auto cc = n["cc"].as<std::vector<int>>();
  const auto smem = n["smem"].as<std::vector<int>>();
  const auto regs = n["regs"].as<std::vector<int>>();
  const auto th = n["threads"].as<std::vector<int>>();
  const auto v = n["versions"].as<std::vector<int>>();
  if (cc.size() != 2 || smem.size() != 3 || regs.size() != 2 || th.size() != 4 || v.size() != 3)
    throw Error("worker protocol: malformed device description");
  d.cc_major = cc[0];
  d.cc_minor = cc[1];
  d.sms = n["sms"].as<int>();
  d.l2_bytes = n["l2"].as<int64_t>();
  d.mem_bytes = n["mem"].as<int64_t>();
  d.smem_per_sm = smem[0];
  d.smem_per_block = smem[1];
  d.smem_per_block_optin = smem[2];
  d.regs_per_sm = regs[0];
  d.regs_per_block = regs[1];
  d.max_threads_per_sm = th[0];
  d.max_threads_per_block = th[1];
  d.max_blocks_per_sm = th[2];
  d.warp_size = th[3];
  d.clock_khz = n["clock_khz"].as<int>();
  d.driver_version = v[0];
  d.runtime_version = v[1];
  d.nvrtc_version = v[2];
  d.datasheet = decode_ceilings(n["datasheet"]);
  if (n["measured"]) d.measured = decode_ceilings(n["measured"]);
  return d;
}

YAML::Node encode(const TaskBaseline& b) {
  YAML::Node n;
  n["t_ref"] = b.t_ref_us;
  n["source"] = b.source;
  n["t_sol"] = b.t_sol_us;
  n["flops"] = b.flops;
  n["bytes"] = b.bytes;
  n["timing"] = encode_timing(b.ref_timing);
  n["note"] = b.note;
  n["skipped"] = b.skipped;
  return n;
}

TaskBaseline decode_baseline(const YAML::Node& n) {
  TaskBaseline b;
  b.kind = TimeKind::measured;
  b.t_ref_us = n["t_ref"].as<double>();
  b.source = n["source"].as<std::string>();
  b.t_sol_us = n["t_sol"].as<double>();
  b.flops = n["flops"].as<double>();
  b.bytes = n["bytes"].as<double>();
  b.ref_timing = decode_timing(n["timing"]);
  b.note = n["note"].as<std::string>();
  b.skipped = n["skipped"].as<std::string>();
  return b;
}

YAML::Node encode(const CudaEvalOptions& o) {
  YAML::Node n;
  n["check_rounds"] = o.check_rounds;
  n["slow_factor"] = o.slow_factor;
  n["target_cv"] = o.target_cv;
  n["extra_batches"] = o.extra_batches;
  n["target_ms"] = o.target_ms;
  n["reps"] = std::vector<int>{o.min_reps, o.max_reps};
  n["warmup"] = o.warmup;
  n["seed"] = o.seed;
  n["measure_ceilings"] = o.measure_ceilings;
  n["gate"] = o.timing.gate;
  n["settle_us"] = o.timing.settle_us;
  n["input_sets"] = o.timing.input_sets;
  n["flush_mib"] = o.timing.flush_mib;
  n["gate_timeout_ms"] = o.gate_timeout_ms;
  return n;
}

CudaEvalOptions decode_eval_options(const YAML::Node& n) {
  auto get = [&n]<typename V>(const char* key, V& into) {
    if (!n[key]) throw Error(std::string("worker protocol: the evaluation options lack '") + key + "'");
    into = n[key].as<V>();
  };
  CudaEvalOptions o;
  get("check_rounds", o.check_rounds);
  get("slow_factor", o.slow_factor);
  get("target_cv", o.target_cv);
  get("extra_batches", o.extra_batches);
  get("target_ms", o.target_ms);
  std::vector<int> reps;
  get("reps", reps);
  if (reps.size() != 2) throw Error("worker protocol: the evaluation options' reps are not [min, max]");
  o.min_reps = reps[0];
  o.max_reps = reps[1];
  get("warmup", o.warmup);
  get("seed", o.seed);
  get("measure_ceilings", o.measure_ceilings);
  get("gate", o.timing.gate);
  get("settle_us", o.timing.settle_us);
  get("input_sets", o.timing.input_sets);
  get("flush_mib", o.timing.flush_mib);
  get("gate_timeout_ms", o.gate_timeout_ms);
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
  n["time"] = encode_timing(r.time);
  YAML::Node a;
  a["counts"] = std::vector<int64_t>{r.acc.checked,   r.acc.mismatches,    r.acc.nonfinite,
                                     r.acc.unwritten, r.acc.out_of_bounds, r.acc.workspace_dirty,
                                     r.acc.inputs_written};
  a["written_input"] = r.acc.written_input;
  a["errors"] = std::vector<double>{r.acc.max_abs_err, r.acc.max_rel_err, r.acc.rel_l2};
  a["rounds"] = r.acc.rounds;
  a["pass"] = r.acc.pass;
  a["precision_ok"] = r.acc.precision_ok;
  n["acc"] = a;
  n["occupancy"] = r.occupancy_blocks;
  for (const auto& [name, field] : kGpuPhaseFields) n["phases"][name] = r.phases.*field;
  return n;
}

void decode_outcome(const YAML::Node& n, EvalResult& r) {
  r.status = parse_status(n["status"].as<std::string>());
  r.log = n["log"].as<std::string>();
  r.time = decode_timing(n["time"]);
  const auto c = n["acc"]["counts"].as<std::vector<int64_t>>();
  const auto e = n["acc"]["errors"].as<std::vector<double>>();
  if (c.size() != 7 || e.size() != 3) throw Error("worker protocol: malformed accuracy");
  r.acc.checked = c[0];
  r.acc.mismatches = c[1];
  r.acc.nonfinite = c[2];
  r.acc.unwritten = c[3];
  r.acc.out_of_bounds = c[4];
  r.acc.workspace_dirty = c[5];
  r.acc.inputs_written = c[6];
  r.acc.written_input = n["acc"]["written_input"].as<std::string>();
  r.acc.max_abs_err = e[0];
  r.acc.max_rel_err = e[1];
  r.acc.rel_l2 = e[2];
  r.acc.rounds = n["acc"]["rounds"].as<int>();
  r.acc.pass = n["acc"]["pass"].as<bool>();
  r.acc.precision_ok = n["acc"]["precision_ok"].as<bool>();
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
