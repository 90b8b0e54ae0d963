#include "core/landscape.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/output_file.hpp"
#include "core/space.hpp"

namespace soltune {

namespace {

using json = nlohmann::json;
constexpr const char* kFormat = "soltune-landscape/1";

EvalResult result_from(const json& j, const std::string& key) {
  EvalResult r;
  r.key = key;
  r.status = parse_status(j.at("status").get<std::string>());
  r.time.median_us = j.value("us", 0.0);
  r.time.q1_us = j.value("q1_us", r.time.median_us);
  r.time.q3_us = j.value("q3_us", r.time.median_us);
  r.time.reps = j.value("reps", 0);
  r.res.registers = j.value("registers", 0);
  r.res.spill_stores = j.value("spills", 0);
  r.res.parsed = j.contains("registers");
  r.compile_ms = j.value("compile_ms", 0.0);
  r.wall_ms = j.value("wall_ms", 0.0);
  r.log = j.value("log", "");
  // An ok result in a landscape passed every check when it was measured: the record says how many.
  r.acc.rounds = j.value("check_rounds", 0);
  r.acc.pass = r.status == Status::ok;
  r.kind = TimeKind::measured;
  r.acc.checked = r.acc.pass ? 1 : 0;
  return r;
}

json result_to(const EvalResult& r) {
  json j{{"status", std::string(status_name(r.status))}};
  if (r.time.reps > 0 || r.time.median_us > 0) {
    j["us"] = r.time.median_us;
    j["q1_us"] = r.time.q1_us;
    j["q3_us"] = r.time.q3_us;
    j["reps"] = r.time.reps;
  }
  if (r.res.parsed) {
    j["registers"] = r.res.registers;
    j["spills"] = r.res.spill_stores;
  }
  if (r.acc.rounds) j["check_rounds"] = r.acc.rounds;
  j["compile_ms"] = r.compile_ms;
  j["wall_ms"] = r.wall_ms;
  if (r.status != Status::ok && !r.log.empty()) j["log"] = r.log.substr(0, 300);  // a hint, not the whole log
  return j;
}

}  // namespace

bool Landscape::has_geometry() const { return variant().launch.has_geometry(); }

namespace {

// The launch geometry and model hints of the template that recorded the landscape, kept in the
// file so that the model's prior replays without the template (which may have gained knobs since).
json model_json(const ProblemSpec& p, const VariantSpec& v) {
  if (!v.launch.has_geometry()) return nullptr;
  auto texts = [](const std::vector<Expr>& es) {
    json a = json::array();
    for (const auto& e : es) a.push_back(e.text());
    return a;
  };
  auto text = [](const Expr& e) { return e.empty() ? json(nullptr) : json(e.text()); };
  return {{"grid", texts(v.launch.grid)}, {"block", texts(v.launch.block)}, {"smem", text(v.launch.smem)},
          {"inflight_bytes", text(v.inflight_bytes)}, {"registers", text(v.registers)}, {"flops", text(p.flops)},
          {"bytes", text(p.bytes)}};
}

void read_model(const json& m, const std::filesystem::path& file, ProblemSpec& p, VariantSpec& v) {
  if (m.is_null()) return;
  const SourceLoc loc{file.string() + " (model)", 0, 0};
  auto expr = [&](const char* key) { return m.contains(key) && !m.at(key).is_null() ? Expr(m.at(key).get<std::string>(), loc) : Expr(); };
  for (const auto& g : m.at("grid")) v.launch.grid.emplace_back(g.get<std::string>(), loc);
  for (const auto& b : m.at("block")) v.launch.block.emplace_back(b.get<std::string>(), loc);
  v.launch.smem = expr("smem");
  v.inflight_bytes = expr("inflight_bytes");
  v.registers = expr("registers");
  p.flops = expr("flops");
  p.bytes = expr("bytes");
}

}  // namespace

double Landscape::best_us() const {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [k, r] : results)
    if (r.status == Status::ok) best = std::min(best, r.time.median_us);
  return best;
}

Landscape load_landscape(const std::filesystem::path& file, bool allow_partial) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw Error(file.string() + ": is a folder; a landscape is a JSON file (`soltune landscape CONFIG -o FILE` records one)");
  std::ifstream in(file);
  if (!in) throw Error("cannot read landscape " + file.string() + ": " + std::strerror(errno));
  Landscape l;
  l.file = file;
  const auto where = file.string() + ": ";
  try {
    const json j = json::parse(in);
    if (j.value("format", "") != kFormat)
      throw Error(where + "not a soltune landscape (expected \"format\": \"" + kFormat + "\")");
    l.task_id = j.at("task").get<std::string>();
    l.gpu = j.at("gpu").get<std::string>();
    l.recorded = j.value("recorded", "");
    l.command = j.value("command", "");
    l.toolchain = j.value("toolchain", "");
    l.timing = j.value("timing", "");
    l.dtype = parse_dtype(j.at("dtype").get<std::string>());
    l.kind = j.value("kind", "measured") == "predicted" ? TimeKind::predicted : TimeKind::measured;
    l.problem.name = j.at("problem").get<std::string>();
    l.problem.dtypes = {l.dtype};
    for (const auto& d : j.at("shape")) {
      const auto name = d.at(0).get<std::string>();
      l.shape.dims.emplace_back(name, d.at(1).get<int64_t>());
      l.problem.sizes.push_back(name);
    }
    const auto& b = j.at("baseline");
    l.baseline.t_ref_us = b.at("t_ref_us").get<double>();
    l.baseline.t_sol_us = b.at("t_sol_us").get<double>();
    l.baseline.flops = b.value("flops", 0.0);
    l.baseline.bytes = b.value("bytes", 0.0);
    l.baseline.note = "replayed from " + file.filename().string();
    VariantSpec v;
    v.name = j.at("variant").get<std::string>();
    v.yaml_path = file;
    const auto& sp = j.at("space");
    for (const auto& k : sp.at("knobs")) v.knobs.push_back(KnobSpec{k.at("name"), k.at("values"), ""});
    for (const auto& c : sp.at("constraints")) v.constraints.emplace_back(c.get<std::string>(), SourceLoc{file.string(), 0, 0});
    for (const auto& [name, value] : sp.at("fixed").items()) l.fixed[name] = value.get<double>();
    if (j.contains("model")) read_model(j.at("model"), file, l.problem, v);
    l.problem.variants.push_back(std::move(v));
    for (const auto& [key, r] : j.at("results").items()) l.results.emplace(key, result_from(r, key));
    if (j.contains("legal")) {
      l.legal = j.at("legal").get<size_t>();
    } else {
      // Files from before partial recordings say nothing of it: the space they hold tells how many
      // configurations a whole recording has, so that a file cut short is not taken as whole.
      const Space space(l.problem.variants.front(), l.fixed);
      l.legal = space.enumerate_legal(l.results.size() + 1).size();
    }
  } catch (const json::exception& e) {
    throw Error(where + "malformed landscape: " + e.what());
  }
  if (!allow_partial && !l.complete())
    throw Error(where + "a partial landscape (" + std::to_string(l.results.size()) + " of " + std::to_string(l.legal) +
                " legal configurations measured); finish it with `soltune landscape CONFIG -o FILE --resume`");
  if (allow_partial) return l;
  if (l.results.empty()) throw Error(where + "the landscape holds no results");
  if (!(l.best_us() < std::numeric_limits<double>::infinity()))
    throw Error(where + "the landscape holds no correct configuration");
  return l;
}

void save_landscape(const Landscape& l, const std::filesystem::path& file) {
  json shape = json::array();
  for (const auto& [name, v] : l.shape.dims) shape.push_back({name, v});
  json knobs = json::array(), constraints = json::array(), fixed = json::object(), results = json::object();
  for (const auto& k : l.variant().knobs) knobs.push_back({{"name", k.name}, {"values", k.values}});
  for (const auto& c : l.variant().constraints) constraints.push_back(c.text());
  for (const auto& [name, v] : l.fixed) fixed[name] = v;
  for (const auto& [key, r] : l.results) results[key] = result_to(r);
  const json j{{"format", kFormat}, {"task", l.task_id}, {"problem", l.problem.name}, {"variant", l.variant().name},
               {"dtype", std::string(dtype_name(l.dtype))}, {"shape", shape}, {"gpu", l.gpu},
               {"kind", std::string(time_kind_name(l.kind))},
               {"recorded", l.recorded}, {"command", l.command}, {"toolchain", l.toolchain},
               {"timing", l.timing},
               {"baseline", {{"t_ref_us", l.baseline.t_ref_us}, {"t_sol_us", l.baseline.t_sol_us},
                             {"flops", l.baseline.flops}, {"bytes", l.baseline.bytes}}},
               {"space", {{"knobs", knobs}, {"constraints", constraints}, {"fixed", fixed}}},
               {"model", model_json(l.problem, l.variant())},
               {"legal", std::max(l.legal, l.results.size())}, {"results", results}};
  write_output_file(file, j.dump(1) + "\n");
}

}  // namespace soltune
