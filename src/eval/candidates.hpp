#pragma once
// The part of evaluation both backends share: from configurations to compile requests, with
// legality decided before NVRTC is ever called (CUTLASS's can_implement, in spirit), and the
// device limits a compiled kernel must respect before it may launch.
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"
#include "core/task.hpp"

namespace soltune {

// One launch of a candidate's plan, the candidate's bindings applied.
struct PlannedLaunch {
  const LaunchSpec* spec = nullptr;
  std::string name_expr;  // "gelu_tanh<float, 256, ...>"
  Geometry geo;
  Resources res;          // from the compile result (take_compile_result)
  bool programmatic = false;  // launched as a programmatic dependent of the launch before (its spec's, on cc 9.0+)
};

struct Candidate {
  EvalResult result;      // status illegal already set when the space rejects it; geo and res: the main launch's
  Bindings bindings;      // task + knobs
  std::string name_expr;  // the main launch's
  // Every launch that runs, in order: the variant's before (where their `when` holds), its main
  // launch, its after. One entry for a variant of one kernel.
  std::vector<PlannedLaunch> plan;
  int request = -1;       // index into the compile batch, -1 when not compiled
};

// A candidate's plan for its bindings (result.geo and name_expr set from the main launch). Throws
// Error when an expression cannot be evaluated.
void plan_launches(const Task& t, Candidate& c);

struct CandidateBatch {
  std::vector<Candidate> candidates;
  std::vector<CompileRequest> requests;
};

// Checks legality and geometry, and builds one compile request per legal candidate.
CandidateBatch prepare_candidates(const Task& t, const DeviceInfo& d, const std::string& arch,
                                  const std::vector<Config>& configs);

// Copies a compile result into the candidate: compile_error with the log, or the kernel's resources.
// Returns false when the candidate failed to compile.
bool take_compile_result(Candidate& c, const CompileResult& r);

// The name expression of the reference source's kernel that computes picked rows (check routine
// reference_picked): the reference's template arguments on that kernel.
std::string picked_reference_name(const Task& t, const Bindings& b);

// The task's reference and baseline as compile requests (both backends compile them: a problem
// whose reference or baseline does not compile is bad input, reported before any tuning).
std::vector<CompileRequest> support_requests(const Task& t, const Bindings& b, const std::string& arch);
// Throws Error with the NVRTC log when a support source did not compile.
void require_compiled(const CompileResult& r, const std::string& what);

// The most blocks a thread-block cluster may have (sm_90 with the non-portable opt-in).
inline constexpr int64_t kMaxClusterBlocks = 16;
// A cluster given at launch: the device must have clusters, the grid must be whole clusters, and
// the cluster at most kMaxClusterBlocks. "" when it is legal (or there is none), else the reason.
std::string cluster_limits(const Geometry& g, const DeviceInfo& d);

// Device limits for a compiled kernel (clusters included), and ptxas's notes that it undid a Hopper
// kernel's design (serialised wgmma, ignored setmaxnreg): "" when it is worth a launch, else the
// reason (status illegal).
std::string launch_limits(const Resources& r, const Geometry& g, const DeviceInfo& d);
// launch_limits over every launch of a candidate's plan, the kernel named where there are several.
std::string plan_limits(const Candidate& c, const DeviceInfo& d);

// Active blocks per SM from the CUDA occupancy calculator (cuda_occupancy.h), 0 if none fit.
int occupancy_blocks_per_sm(const Resources& r, const Geometry& g, const DeviceInfo& d);

}  // namespace soltune
