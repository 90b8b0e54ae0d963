#include "run/export_plan.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <set>

#include "codegen/compiler.hpp"
#include "codegen/content_hash.hpp"
#include "core/fallback.hpp"
#include "run/export_earlier.hpp"
#include "run/fallback_pick.hpp"

namespace soltune {

std::vector<ToolAudit> audits_of(const KnowledgeBase& kb, const ProblemSpec& spec, const ResultRecord& r) {
  std::vector<std::string> hashes{r.source_hash};
  for (const auto& v : spec.variants)
    if (v.name == r.variant) hashes.push_back(content_hash(v.source));
  return kb.audits(r, hashes);
}

std::string audit_summary(const std::vector<ToolAudit>& audits) {
  std::string s;
  for (const auto& tool : sanitizer_tools()) {
    const auto a = std::find_if(audits.begin(), audits.end(), [&](const ToolAudit& x) { return x.tool == tool; });
    s += (s.empty() ? "" : ", ") + tool + " ";
    if (a == audits.end()) {
      s += "never run";
    } else {
      s += std::string(audit_verdict_name(a->verdict));
      if (a->errors) s += " (" + std::to_string(a->errors) + " error" + (a->errors == 1 ? ")" : "s)");
    }
  }
  return s;
}

namespace {

using Warnings = std::vector<std::string>;

std::string strf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string strf(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  std::string out(static_cast<size_t>(std::vsnprintf(nullptr, 0, format, args)), '\0');
  va_end(args);
  std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

// A message for the user, without the line end a list inside it ends with.
void warn(Warnings& w, std::string message) {
  if (!message.empty() && message.back() == '\n') message.pop_back();
  w.push_back(std::move(message));
}

// What the header says of a kernel whose time is a prediction.
const std::string kUnchecked =
    "correctness NOT checked: the model backend compiles and predicts, it runs nothing; tune on a GPU before relying on "
    "this kernel";

// Rebuilds each specialization's cubin as the tuning run built it (same source, name expression,
// NVRTC options; the disk cache usually has it) for the GPU's compute capability, so the header can
// launch the code that was timed. A register count that differs from the tuned build's says this
// NVRTC is not the tuning run's: the binary is kept (it is still NVRTC's) and the header says so.
void attach_binaries(std::vector<Specialization>& specs, const std::vector<ResultRecord>& records, const DeviceInfo& gpu,
                     Warnings& w) {
  const std::string arch = "sm_" + std::to_string(gpu.cc_major) + std::to_string(gpu.cc_minor);
  const auto archs = Compiler::supported_archs();
  if (std::find(archs.begin(), archs.end(), arch) == archs.end()) {
    warn(w, strf("this NVRTC cannot build for %s: the header compiles its kernels from source", arch.c_str()));
    return;
  }
  std::vector<CompileRequest> requests;
  for (const auto& s : specs) {
    const auto b = specialization_bindings(*s.variant, s.config.values, s.shape.dims);
    // A variant built for an architecture-specific target (sm_90a) keeps it: the plan's cc test
    // (binary_cc) is the same, and only such a cubin holds its wgmma code.
    requests.push_back(CompileRequest{s.variant->source, s.variant->source_path.filename().string(),
                                      plan_name_expressions(*s.variant, s.dtype, b), variant_arch(*s.variant, arch),
                                      define_options(*s.variant, s.dtype, b)});
  }
  const Compiler compiler(default_compiler_options());
  const auto built = compiler.compile_all(requests);
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& c = built[i];
    if (!c.ok || c.kernels.empty())
      throw Error("export: NVRTC no longer compiles " + requests[i].name_expressions.front() + " for " + arch + ":\n" + c.log);
    auto& s = specs[i];
    s.binary.assign(c.cubin.begin(), c.cubin.end());
    for (const auto& k : c.kernels) s.lowered[k.name_expression] = k.lowered_name;
    s.binary_cc = gpu.cc_major * 10 + gpu.cc_minor;
    const int now = c.kernels.front().res.registers, then = records[i].res.registers;
    char line[200];
    std::snprintf(line, sizeof line, "binary: %s cubin by NVRTC %d.%d, %d registers (the timed build: %s)",
                  requests[i].arch.c_str(),
                  Compiler::nvrtc_version() / 1000, Compiler::nvrtc_version() % 1000 / 10, now,
                  then > 0 ? std::to_string(then).c_str() : "not recorded");
    s.comment.push_back(line);
    if (then > 0 && now != then)
      warn(w, strf("warning: %s at %s: NVRTC here gives %d registers, the timed build had %d; this toolkit "
                   "does not rebuild the timed binary exactly (re-tune with it to be sure)",
                   records[i].config_key.c_str(), records[i].shape_key.c_str(), now, then));
  }
}

// The first n lines of a tool's log, continued lines indented under it.
std::string first_lines(const std::string& log, int n) {
  std::string out;
  size_t at = 0;
  for (int i = 0; i < n && at < log.size(); ++i) {
    const auto end = std::min(log.find('\n', at), log.size());
    out += (i ? "\n      " : "") + log.substr(at, end - at);
    at = end + 1;
  }
  return out;
}

// compute-sanitizer's verdicts on what is about to ship: a failed kernel stops the export unless
// allowed (then warned about); kernels never audited are named, so that nobody takes the header
// for audited. Each specialization's comment says its verdict.
void check_audits(const KnowledgeBase& kb, const ProblemSpec& spec, const std::vector<ResultRecord>& records,
                  std::vector<Specialization>& specs, bool allow_failed, const std::string& kb_path,
                  const std::string& problem, Warnings& w) {
  std::string failed, unaudited;
  int n_failed = 0, n_unaudited = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    const auto audits = audits_of(kb, spec, r);
    const auto verdict = kernel_verdict(audits);
    const std::string what = "  " + r.dtype + " at " + r.shape_key + " (" + r.variant + " " + r.config_key + ")";
    specs[i].comment.push_back("compute-sanitizer audit: " + std::string(audit_verdict_name(verdict)) +
                               (audits.empty() ? "" : " (" + audit_summary(audits) + ")"));
    if (verdict == AuditVerdict::failed) {
      ++n_failed;
      failed += what + ": " + audit_summary(audits) + "\n";
      for (const auto& a : audits)
        if (a.verdict == AuditVerdict::failed) failed += "    " + a.tool + ": " + first_lines(a.log, 3) + "\n";
    } else if (verdict == AuditVerdict::not_audited) {
      ++n_unaudited;
      std::string why = audits.empty() ? "never audited" : audit_summary(audits);
      for (const auto& a : audits)
        if (a.verdict == AuditVerdict::not_audited && !a.log.empty()) {
          why += "; " + a.tool + ": " + first_lines(a.log, 1);
          break;
        }
      unaudited += what + ": " + why + "\n";
    }
  }
  if (n_failed && !allow_failed)
    throw Error("export: " + std::to_string(n_failed) + " kernel(s) failed their compute-sanitizer audit; nothing was "
                "written (--allow-failed-audit exports them anyway):\n" + failed.substr(0, failed.size() - 1));
  if (n_failed)
    warn(w, strf("warning: exporting %d kernel(s) that failed their compute-sanitizer audit "
                 "(--allow-failed-audit):\n%s", n_failed, failed.c_str()));
  if (n_unaudited)
    warn(w, strf("%d kernel(s) not audited under compute-sanitizer (run `soltune audit --kb %s "
                 "--problem %s` on the GPU machine):\n%s", n_unaudited, kb_path.c_str(), problem.c_str(),
                 unaudited.c_str()));
}

// Per exported dtype, the problem's fallback as the knowledge base measured it (today's text, any
// shape: its configuration is the same at every shape), so that sizes no tuned kernel serves still
// launch. Without a measurement the header has none, and says so.
void add_fallbacks(const KnowledgeBase& kb, const ProblemSpec& spec, const std::string& gpu, bool allow_predicted,
                   std::vector<Specialization>& specs, std::vector<ResultRecord>& records, Warnings& w) {
  const VariantSpec* v = spec.fallback_variant();
  std::set<DType> dtypes;
  for (const auto& s : specs) dtypes.insert(s.dtype);
  for (const DType dt : dtypes) {
    const std::string name(dtype_name(dt));
    const auto cfg = v ? fallback_config(*v, dt) : std::nullopt;
    if (!cfg) {
      warn(w, strf("%s has no fallback for %s: sizes no tuned kernel serves get cudaErrorInvalidValue",
                   spec.name.c_str(), name.c_str()));
      continue;
    }
    const auto found = fallback_picks(kb, spec, dt, gpu, allow_predicted);
    if (found.empty()) {
      warn(w, strf("no measurement of the fallback for %s (%s %s): sizes no tuned kernel serves get "
                   "cudaErrorInvalidValue; `soltune tune` on any config of %s measures it",
                   name.c_str(), v->name.c_str(), Space(*v, Bindings{}).key(*cfg).c_str(), spec.name.c_str()));
      continue;
    }
    // One per class of shapes its compiled-in sizes make; a class never measured has none, and says so.
    const auto classes = fallback_shapes(spec, dt, parse_shape(spec, found.front().shape_key));
    if (classes.size() > found.size())
      warn(w, strf("the fallback for %s was measured in %zu of the %zu layouts its kernel compiles in: "
                   "sizes of the others that no tuned kernel serves get cudaErrorInvalidValue; `soltune tune` measures them",
                   name.c_str(), found.size(), classes.size()));
    for (const auto& r : found) {
      Specialization s{v, dt, *cfg, parse_shape(spec, r.shape_key), {}};
      s.fallback = true;
      s.smem_static = r.res.registers > 0 ? r.res.smem_static : -1;
      char line[256];
      std::snprintf(line, sizeof line, "%s: the fallback, legal at every shape%s: %s %.1f us at %s on %s (%s)", name.c_str(),
                    classes.size() > 1 ? " its compiled-in sizes match" : "",
                    r.time_kind.c_str(), r.time_us, r.shape_key.c_str(), r.gpu_name.c_str(), r.created_at.c_str());
      s.comment.push_back(line);
      s.comment.push_back("knobs: " + r.config_key + "; variant " + r.variant);
      if (r.time_kind == "predicted") s.comment.push_back(kUnchecked);
      for (const auto& note : notes_for(*v, dt, s.config.values, s.shape.dims)) s.comment.push_back("note: " + note);
      specs.push_back(std::move(s));
      records.push_back(r);
    }
  }
}

ExportPlan choose(const KnowledgeBase& kb, const std::string& problem, const ExportOptions& o, Warnings& w) {
  const auto& kb_path = o.kb_path;
  const auto& gpu = o.gpu;
  ExportPlan c;
  c.spec = load_problem(o.templates, problem);
  const auto& spec = c.spec;
  auto& specs = c.specs;
  auto& records = c.records;
  // Results of the templates as they are now; of earlier texts only where they compile to the same
  // machine code as today's (an edit of comments or layout), since a result of other code says
  // nothing about today's kernel.
  std::vector<std::string> hashes;
  for (const auto& v : spec.variants) hashes.push_back(content_hash(v.source));
  auto best = kb.best(problem, gpu, hashes);
  const auto any_version = kb.best(problem, gpu);  // what earlier versions of the templates did
  std::vector<ResultRecord> earlier;  // measured with another text, faster than today's or alone
  {
    const auto today = fastest_per_shape(best, false);
    for (const auto& r : any_version) {
      const auto it = today.find({r.dtype, r.shape_key});
      if (r.time_kind == "measured" && std::find(hashes.begin(), hashes.end(), r.source_hash) == hashes.end() &&
          (it == today.end() || r.time_us < it->second.time_us))
        earlier.push_back(r);
    }
  }
  // A kernel today's text has measured is judged by today's measurement, taken beside today's others.
  auto [unmeasured, superseded] = split_measured_today(kb, spec, std::move(earlier));
  earlier = std::move(unmeasured);
  std::set<int64_t> superseded_ids;
  for (const auto& r : superseded) superseded_ids.insert(r.id);
  if (!superseded.empty())
    warn(w, strf("%zu faster result(s) of earlier template texts are of configurations today's texts "
                 "measured too; today's measurements of those are used", superseded.size()));
  const auto carried = earlier_results_with_same_code(kb, spec, earlier);
  if (!carried.note.empty() && !earlier.empty())
    warn(w, strf("results of earlier template texts not checked: %s", carried.note.c_str()));
  std::set<int64_t> carried_ids;
  for (const auto& r : carried.same_code) {
    carried_ids.insert(r.id);
    best.push_back(r);
  }
  if (best.empty()) {
    if (!any_version.empty())
      throw Error("every result for '" + problem + "' in " + kb_path + " was tuned with other versions of its templates "
                  "(the sources changed since, and " +
                  (carried.checked ? "none of the " + std::to_string(carried.checked) + " checked compiles to today's machine code"
                                   : std::string("none could be checked against today's machine code")) +
                  "): re-tune, or export with --templates of that run");
    throw Error("no valid result for problem '" + problem + "' in " + kb_path + (gpu.empty() ? "" : " for GPU '" + gpu + "'"));
  }
  std::set<std::string> gpus;
  for (const auto& r : best) gpus.insert(r.gpu_name);
  if (gpus.size() > 1) {
    std::string names;
    for (const auto& g : gpus) names += (names.empty() ? "" : ", ") + g;
    throw ExportRefused("the knowledge base holds results for several GPUs (" + names + "): choose one with --gpu", w, true);
  }
  // Every tuned (dtype, shape): the fastest result over the variants.
  const auto pick = fastest_per_shape(best, o.allow_predicted);
  if (pick.empty()) throw Error("only model predictions for '" + problem + "' in " + kb_path + ": pass --allow-predicted to export them");
  size_t from_earlier = 0;
  for (const auto& [group, r] : pick) from_earlier += carried_ids.count(r.id);
  if (from_earlier)
    warn(w, strf("%zu tuned shape(s) exported from results of an earlier text of their template, which "
                 "compiles to the same machine code as today's", from_earlier));
  std::set<std::pair<std::string, std::string>> older_faster;  // beaten only by earlier template versions
  for (const auto& r : any_version)
    if (auto it = pick.find({r.dtype, r.shape_key}); it != pick.end() && r.time_kind == "measured" &&
        r.time_us < it->second.time_us && !superseded_ids.count(r.id))
      older_faster.insert(it->first);
  if (!older_faster.empty())
    warn(w, strf("%zu tuned shape(s) had faster results with earlier versions of the templates, which "
                 "are not exported: their code differs from today's (re-tune to measure today's)", older_faster.size()));
  for (const auto& [group, r] : pick) {
    const auto& dt = group.first;
    const auto& v = spec.variant(r.variant);
    const Space space(v, Bindings{});
    Specialization s{&v, parse_dtype(dt), space.parse_key(r.config_key), parse_shape(spec, r.shape_key), {}};
    s.smem_static = r.res.registers > 0 ? r.res.smem_static : -1;  // 0 registers: no ptxas report recorded
    char line[256];
    std::snprintf(line, sizeof line, "%s: %s %.1f us at %s on %s (%s), T_ref %.1f us, T_SOL %.1f us", dt.c_str(),
                  r.time_kind.c_str(), r.time_us, r.shape_key.c_str(), r.gpu_name.c_str(), r.created_at.c_str(),
                  r.t_ref_us, r.t_sol_us);
    s.comment.push_back(line);
    std::snprintf(line, sizeof line, "SOL score %.3f (log form), %.3f (SOL-ExecBench form); soltune %s", r.sol_score,
                  r.sol_execbench, SOLTUNE_VERSION);
    s.comment.push_back(line);
    s.comment.push_back("knobs: " + r.config_key + "; variant " + r.variant);
    if (r.time_kind == "predicted") s.comment.push_back(kUnchecked);
    for (const auto& note : notes_for(v, s.dtype, s.config.values, s.shape.dims)) s.comment.push_back("note: " + note);
    if (carried_ids.count(r.id))
      s.comment.push_back("measured with an earlier text of the template (source " + r.source_hash.substr(0, 12) +
                          "), which compiles to the same machine code as today's (checked at export)");
    specs.push_back(std::move(s));
    records.push_back(r);
  }
  add_fallbacks(kb, spec, *gpus.begin(), o.allow_predicted, specs, records, w);
  // A prediction's kernel never ran: nothing checked that it computes the right result.
  const auto unchecked = std::count_if(records.begin(), records.end(), [](const ResultRecord& r) { return r.time_kind == "predicted"; });
  if (unchecked > 0)
    warn(w, strf("warning: %td of the %zu kernel(s) exported have predicted times only: their correctness "
                 "was never checked (the model backend runs nothing); each says so in the header. Tune on a GPU "
                 "(--backend cuda) before relying on them", unchecked, records.size()));
  check_audits(kb, spec, records, specs, o.allow_failed_audit, kb_path, problem, w);
  const auto gpu_rows = kb.gpus();
  const auto g = std::find_if(gpu_rows.begin(), gpu_rows.end(),
                              [&](const GpuRecord& x) { return x.device.name == *gpus.begin(); });
  if (g == gpu_rows.end()) throw Error("knowledge base " + kb_path + " has results for GPU '" + *gpus.begin() + "' but no record of it");
  if (!o.source_only) attach_binaries(specs, records, g->device, w);
  c.device = g->device;
  c.gpu = *gpus.begin();
  return c;
}

}  // namespace

ExportPlan plan_export(const KnowledgeBase& kb, const std::string& problem, const ExportOptions& o) {
  Warnings w;
  try {
    auto plan = choose(kb, problem, o, w);
    plan.warnings = std::move(w);
    return plan;
  } catch (const ExportRefused&) {
    throw;
  } catch (const Error& e) {
    throw ExportRefused(e.what(), std::move(w), false);
  }
}

}  // namespace soltune
