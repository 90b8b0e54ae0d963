#include "cli/export_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>
#include <variant>

#include "core/tensor_map.hpp"
#include "kb/result_columns.hpp"

namespace soltune::cli {
namespace {

// The columns of a kernel's result that its specialization carries, under the columns' names.
constexpr std::string_view kResultColumns[] = {"config_key", "time_us",       "time_kind",    "t_ref_us",
                                               "t_sol_us",   "sol_score",     "sol_execbench", "source_hash"};

// RFC 4648 base64: JSON has no bytes, and a framework loads the cubin with its own CUDA bindings.
std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

nlohmann::json texts(const std::vector<Expr>& es) {
  auto a = nlohmann::json::array();
  for (const auto& e : es) a.push_back(e.text());
  return a;
}

// A map's strides in elements, for dims 1 and up: the declared ones, else row-major over its dims.
nlohmann::json strides(const TensorMapSpec& m) {
  if (!m.strides.empty()) return texts(m.strides);
  auto a = nlohmann::json::array();
  std::string row;
  for (size_t i = 1; i < m.dims.size(); ++i) {
    row += (row.empty() ? "(" : " * (") + m.dims[i - 1].text() + ")";
    a.push_back(row);
  }
  return a;
}

}  // namespace

std::string export_json(const ProblemSpec& p, const std::vector<Specialization>& specs,
                        const std::vector<ResultRecord>& records, const std::string& gpu) {
  nlohmann::json j;
  j["format"] = "soltune-export";
  j["version"] = 1;
  j["problem"] = p.name;
  j["gpu"] = gpu;
  j["soltune_version"] = SOLTUNE_VERSION;
  j["sizes"] = p.sizes;
  j["dispatch"] = "the specialization tuned for the sizes, else the nearest in log2 distance over the sizes whose "
                  "constraints hold, else none";
  j["expression_functions"] = "cdiv(a,b)=ceil(a/b), fdiv(a,b)=floor(a/b), mod(a,b)=a-b*floor(a/b), min, max, pow, "
                              "is_pow2; evaluated over doubles";
  for (const auto& a : p.args) {
    nlohmann::json arg{{"name", a.name}, {"kind", a.is_buffer ? "buffer" : "scalar"}, {"dtype", a.dtype}};
    if (a.is_buffer) {
      arg["shape"] = texts(a.shape);
      arg["role"] = std::string(role_name(a.role));
    } else {
      arg["value"] = a.value.text();
    }
    j["args"].push_back(arg);
  }
  std::set<const VariantSpec*> variants;
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& s = specs[i];
    const auto& r = records[i];
    const auto& v = *s.variant;
    variants.insert(&v);
    nlohmann::json knobs, shape;
    for (size_t k = 0; k < v.knobs.size(); ++k) knobs[v.knobs[k].name] = s.config.values[k];
    const auto b = specialization_bindings(v, s.config.values, s.shape.dims);
    for (const auto& [name, value] : s.shape.dims) shape[name] = value;
    j["specializations"].push_back({{"dtype", std::string(dtype_name(s.dtype))},
                                    {"variant", v.name},
                                    {"shape", shape},
                                    {"fallback", s.fallback},
                                    {"knobs", knobs},
                                    {"name_expression", name_expression(v.launch, s.dtype, b)},
                                    {"plan_name_expressions", plan_name_expressions(v, s.dtype, b)},
                                    {"measured_at", r.created_at},
                                    {"notes", notes_for(v, s.dtype, s.config.values, s.shape.dims)}});
    for (const auto& c : kb::result_columns())
      if (std::ranges::find(kResultColumns, c.name) != std::end(kResultColumns))
        std::visit([&](const auto& value) { j["specializations"].back()[c.name] = value; }, c.value(r));
    if (!v.defines.empty()) {  // the macros its kernels are compiled with, in order
      nlohmann::json defs = nlohmann::json::array();
      for (const auto& [name, value] : define_values(v, s.dtype, b)) defs.push_back({{"name", name}, {"value", value}});
      j["specializations"].back()["defines"] = defs;
    }
    if (!s.binary.empty())  // the code soltune timed, for a GPU of this compute capability
      j["specializations"].back()["cubin"] = {{"compute_capability", s.binary_cc},
                                              {"kernel", s.lowered.at(name_expression(v.launch, s.dtype, b))},
                                              {"kernels", s.lowered},
                                              {"base64", base64(s.binary)}};
  }
  for (const auto* v : variants)
    j["variants"][v->name] = {{"source", v->source},
                              {"kernel", v->launch.kernel},
                              {"template_args", v->launch.template_args},
                              {"args", v->launch.args},
                              {"grid", texts(v->launch.grid)},
                              {"block", texts(v->launch.block)},
                              {"smem", v->launch.smem.text()},
                              {"constraints", texts(v->constraints)}};
  // A plan of several launches: those around the main kernel, in order, and the scratch they share
  // (contents undefined on entry; each buffer at a 256-byte boundary of one allocation).
  for (const auto* v : variants) {
    for (const auto* key : {"before", "after"})
      for (const auto& l : std::string(key) == "before" ? v->before : v->after)
        j["variants"][v->name][key].push_back({{"kernel", l.kernel},
                                               {"template_args", l.template_args},
                                               {"args", l.args},
                                               {"grid", texts(l.grid)},
                                               {"block", texts(l.block)},
                                               {"smem", l.smem.text()},
                                               {"when", l.when.empty() ? "1" : l.when.text()}});
    for (const auto& a : v->scratch)
      j["variants"][v->name]["scratch"].push_back({{"name", a.name}, {"dtype", a.dtype}, {"shape", texts(a.shape)}});
  }
  // A framework launching these kernels encodes the maps itself (cuTensorMapEncodeTiled) from its
  // pointers: what each argument of that name is built from.
  for (const auto* v : variants)
    for (const auto& m : v->tensor_maps)
      j["variants"][v->name]["tensor_maps"][m.name] = {{"buffer", m.buffer},
                                                        {"elem", m.elem},
                                                        {"dims", texts(m.dims)},
                                                        {"box", texts(m.box)},
                                                        {"strides", strides(m)},
                                                        {"swizzle", std::string(swizzle_name(m.swizzle))},
                                                        {"l2_promotion", std::string(l2_promotion_name(m.l2))},
                                                        {"oob", std::string(oob_name(m.oob))}};
  return j.dump(2) + "\n";
}

}  // namespace soltune::cli
