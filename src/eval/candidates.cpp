#include "eval/candidates.hpp"

#include <cuda_occupancy.h>

#include <algorithm>

#include "core/tensor_map.hpp"
#include "eval/device_props.hpp"

namespace soltune {

CandidateBatch prepare_candidates(const Task& t, const DeviceInfo& d, const std::string& arch,
                                  const std::vector<Config>& configs) {
  CandidateBatch b;
  const Space space(*t.variant, t.fixed(d));
  const std::string device_why = why_variant_cannot_run(*t.variant, d);
  const std::string target = variant_arch(*t.variant, arch);
  for (const auto& cfg : configs) {
    Candidate c;
    c.result.config = cfg;
    c.result.key = space.key(cfg);
    if (auto why = device_why.empty() ? space.why_illegal(cfg) : device_why; !why.empty()) {
      c.result.status = Status::illegal;
      c.result.log = why;
      b.candidates.push_back(std::move(c));
      continue;
    }
    c.bindings = space.bind(cfg);
    try {
      plan_launches(t, c);
    } catch (const Error& e) {
      c.result.status = Status::illegal;
      c.result.log = e.what();
      b.candidates.push_back(std::move(c));
      continue;
    }
    // A tensor map the driver would refuse: a reason per candidate, before any compile.
    if (auto why = why_tensor_maps_illegal(*t.variant, c.bindings); !why.empty()) {
      c.result.status = Status::illegal;
      c.result.log = why;
      b.candidates.push_back(std::move(c));
      continue;
    }
    // One program for the whole plan: the main kernel first, each other kernel once.
    std::vector<std::string> names{c.name_expr};
    for (const auto& l : c.plan)
      if (std::find(names.begin(), names.end(), l.name_expr) == names.end()) names.push_back(l.name_expr);
    c.request = static_cast<int>(b.requests.size());
    b.requests.push_back(CompileRequest{t.variant->source, t.variant->source_path.filename().string(), names, target,
                                        define_options(*t.variant, t.dtype, c.bindings)});
    b.candidates.push_back(std::move(c));
  }
  return b;
}

void plan_launches(const Task& t, Candidate& c) {
  c.plan.clear();
  const auto cc = c.bindings.find("cc");
  const bool has_pdl = cc != c.bindings.end() && cc->second >= 90;  // programmatic dependent launch
  for (const auto* l : t.variant->all_launches()) {
    if (!l->when.empty() && !l->when.eval_bool(c.bindings)) continue;
    const bool programmatic = l->programmatic && has_pdl;
    c.plan.push_back(PlannedLaunch{l, name_expression(*l, t.dtype, c.bindings), eval_geometry(*l, c.bindings), {},
                                   programmatic});
    if (l == &t.variant->launch) {
      c.result.geo = c.plan.back().geo;
      c.name_expr = c.plan.back().name_expr;
    }
  }
}

std::string picked_reference_name(const Task& t, const Bindings& b) {
  LaunchSpec picked = t.problem->reference;
  picked.kernel = t.problem->timed_check->kernel;
  return name_expression(picked, t.dtype, b);
}

std::vector<CompileRequest> support_requests(const Task& t, const Bindings& b, const std::string& arch) {
  std::vector<std::string> refs{name_expression(t.problem->reference, t.dtype, b)};
  if (const auto& c = t.problem->timed_check; c && c->routine == "reference_picked") refs.push_back(picked_reference_name(t, b));
  std::vector<std::string> names;
  for (const auto& l : t.problem->baseline) {
    auto n = name_expression(l, t.dtype, b);
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
  }
  const auto dir = t.problem->dir.string() + "/";
  return {CompileRequest{t.problem->reference_source, dir + "reference.cu", refs, arch,
                         define_options(t.problem->reference_defines, t.dtype, b)},
          CompileRequest{t.problem->baseline_source, dir + "baseline.cu", names, arch,
                         define_options(t.problem->baseline_defines, t.dtype, b)}};
}

void require_compiled(const CompileResult& r, const std::string& what) {
  if (!r.ok) throw Error(what + " does not compile:\n" + r.log);
}

bool take_compile_result(Candidate& c, const CompileResult& r) {
  c.result.compile_ms = r.ms;
  c.result.cache_hit = r.cache_hit;
  if (!r.ok || r.kernels.empty()) {
    c.result.status = r.timed_out ? Status::timeout : Status::compile_error;
    c.result.log = r.timed_out ? "compile: " + r.log : r.log;
    return false;
  }
  c.result.res = r.kernels.front().res;
  for (auto& l : c.plan)
    for (const auto& k : r.kernels)
      if (k.name_expression == l.name_expr) l.res = k.res;
  return true;
}

std::string plan_limits(const Candidate& c, const DeviceInfo& d) {
  for (const auto& l : c.plan)
    if (auto why = launch_limits(l.res, l.geo, d); !why.empty())
      return c.plan.size() == 1 ? why : l.spec->kernel + ": " + why;
  return "";
}

std::string cluster_limits(const Geometry& g, const DeviceInfo& d) {
  if (g.cluster_blocks() == 1) return "";
  if (d.cc() < 90)
    return "thread-block clusters need compute capability 9.0 or newer; " + d.name + " is " + d.arch();
  for (int i = 0; i < 3; ++i)
    if (g.grid[i] % g.cluster[i] != 0)
      return "grid dimension " + std::to_string(i) + " (" + std::to_string(g.grid[i]) +
             " blocks) is not a multiple of the cluster's (" + std::to_string(g.cluster[i]) + "): " + g.str();
  // 8 blocks is the portable size; sm_90 allows 16 with the non-portable attribute, set at launch.
  if (g.cluster_blocks() > kMaxClusterBlocks)
    return "cluster of " + std::to_string(g.cluster_blocks()) + " blocks exceeds the " +
           std::to_string(kMaxClusterBlocks) + " a device allows (8 portable, 16 on sm_90 by opt-in)";
  return "";
}

std::string launch_limits(const Resources& r, const Geometry& g, const DeviceInfo& d) {
  if (auto why = cluster_limits(g, d); !why.empty()) return why;
  const auto threads = g.block_threads();
  if (threads > d.max_threads_per_block)
    return "block of " + std::to_string(threads) + " threads exceeds the device's " +
           std::to_string(d.max_threads_per_block);
  if (g.block[2] > 64 || g.grid[1] > 65535 || g.grid[2] > 65535 || g.grid[0] > 2147483647LL)
    return "grid or block dimension beyond the device's limits: " + g.str();
  if (r.smem_static + g.smem > d.smem_per_block_optin)
    return "shared memory " + std::to_string(r.smem_static + g.smem) + " B exceeds the per-block limit " +
           std::to_string(d.smem_per_block_optin) + " B";
  if (static_cast<int64_t>(r.registers) * threads > d.regs_per_block)
    return std::to_string(r.registers) + " registers x " + std::to_string(threads) +
           " threads exceed the per-block register file";
  if (occupancy_blocks_per_sm(r, g, d) < 1) return "no block fits on an SM (occupancy calculator)";
  // Spilled registers are not a limit: they cost local-memory traffic, which a spilling kernel's
  // time (or the model's prediction) includes, and a few spilled bytes may still be the fastest.
  // ptxas undid a Hopper kernel's design: still correct, but measuring it would only time the
  // compiler's fallback.
  std::string why;
  for (const auto& n : r.notes) {
    if (!why.empty()) why += "; ";
    const bool wgmma = n.kind == PtxasNote::Kind::wgmma_serialized;
    why += wgmma ? "wgmma serialised by the compiler" : "setmaxnreg ignored";
    why += " (ptxas \"" + n.line + "\"";
    if (n.count > 1) why += " and " + std::to_string(n.count - 1) + " more such notes";
    why += wgmma ? "): each wgmma waits for the one before it, so the tensor cores idle between them"
                 : "): the warp-specialised kernel's warps keep the register count they started with";
  }
  if (!why.empty()) return why + "; not worth a GPU run";
  return "";
}

int occupancy_blocks_per_sm(const Resources& r, const Geometry& g, const DeviceInfo& d) {
  cudaDeviceProp props{};
  write_props(props, d);
  props.reservedSharedMemPerBlock = 1024;  // the driver's reserve on sm_80 and later
  const cudaOccDeviceProp p(props);
  cudaOccFuncAttributes a;
  a.maxThreadsPerBlock = d.max_threads_per_block;
  a.numRegs = r.registers;
  a.sharedSizeBytes = static_cast<size_t>(r.smem_static);
  a.maxDynamicSharedSizeBytes = static_cast<size_t>(d.smem_per_block_optin);
  // Kernels get the opt-in limit (the runner sets cudaFuncAttributeMaxDynamicSharedMemorySize): the
  // default config would cap a block at 48 KiB and call larger ones impossible.
  a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  a.numBlockBarriers = 1;
  cudaOccDeviceState s;
  cudaOccResult out;
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&out, &p, &a, &s, static_cast<int>(g.block_threads()),
                                              static_cast<size_t>(g.smem)) != CUDA_OCC_SUCCESS)
    return 0;
  return out.activeBlocksPerMultiprocessor;
}

}  // namespace soltune
