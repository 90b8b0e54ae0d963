#include "core/problem.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "core/error.hpp"

// The in-memory problem's own functions; reading problem.yaml is problem_parse.cpp's, a variant's
// YAML and its launches variant.cpp's.
namespace soltune {

std::string_view role_name(Role r) {
  switch (r) {
    case Role::in: return "in";
    case Role::out: return "out";
    case Role::inout: return "inout";
    case Role::temp: return "temp";
    case Role::workspace: return "workspace";
    case Role::constant: return "constant";
  }
  return "?";
}

std::optional<ReferenceArray> reference_array(const std::string& arg) {
  for (const auto& [tail, kind] : {std::pair<std::string_view, ReferenceArray::Kind>{".magnitude", ReferenceArray::Kind::magnitude},
                                   {".out", ReferenceArray::Kind::out}})
    if (arg.size() > tail.size() && arg.compare(arg.size() - tail.size(), tail.size(), tail) == 0)
      return ReferenceArray{kind, arg.substr(0, arg.size() - tail.size())};
  return std::nullopt;
}

std::string InitSpec::str() const {
  std::ostringstream s;
  s << (kind == Kind::normal ? "normal(" : "uniform(") << a << ", " << b << ")";
  return s.str();
}

const VariantSpec* ProblemSpec::fallback_variant() const {
  for (const auto& v : variants)
    if (v.has_fallback) return &v;
  return nullptr;
}

std::string SizeOption::listing() const {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (out.empty() ? "" : ", ") + std::to_string(values[i]) + (names.empty() ? "" : " (" + names[i] + ")");
  return out;
}

std::optional<int64_t> SizeOption::parse(const std::string& text) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return values[i];
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  if (std::find(values.begin(), values.end(), v) == values.end()) return std::nullopt;
  return v;
}

std::string ProblemSpec::broken_rule(const Bindings& b) const {
  for (const auto& r : shape_rules)
    if (r.expr.eval(b) == 0) return r.why + " (" + r.expr.text() + ")";
  return "";
}

const VariantSpec& ProblemSpec::variant(const std::string& vname) const {
  std::string names;
  for (const auto& v : variants) {
    if (v.name == vname) return v;
    names += (names.empty() ? "" : ", ") + v.name;
  }
  throw Error("problem '" + name + "' has no variant '" + vname + "' (variants: " + names + ")");
}

ComputeUnit ProblemSpec::compute_unit(DType t) const {
  const auto it = compute.find(t);
  return it == compute.end() ? ComputeUnit::fp32 : it->second;
}

const std::vector<LibraryRoutine>& library_routines() {
  static const std::vector<LibraryRoutine> r = {
      {"cublaslt_gemm", {"a", "b"}, {"c"}, {"m", "n", "k"}, {"trans_b", "batch", "alpha"},
       "C = alpha A B with f32 accumulation: A m x k and C m x n row-major, B k x n row-major or, with trans_b 1, "
       "n x k row-major; batch (1 where not given) such products, each matrix right after the one before; alpha 1 "
       "where not given; cuBLASLt's heuristic's first algorithm with a 32 MiB workspace, as torch.matmul",
       {}},
      {"cublaslt_scaled_gemm", {"a", "b", "sa", "sb"}, {"c"}, {"m", "n", "k"}, {"scale"},
       "C = (sa A)(sb B)^T with 8-bit float A (m x k) and B (n x k) row-major, f32 scales, bf16 C m x n row-major, "
       "f32 accumulation: scale 0 one scale per tensor, 1 one per row of A and of B, 2 one per 1 x 128 block of A "
       "(sa[(kk / 128) * m + i]) and per 128 x 128 block of B (sb[(j / 128) * cdiv(k, 128) + kk / 128]); "
       "cuBLASLt's heuristic's first algorithm with a 32 MiB workspace, as torch._scaled_mm",
       {{"sa", "f32"}, {"sb", "f32"}, {"c", "bf16"}}},
  };
  return r;
}

const std::vector<LibraryRoutine>& check_routines() {
  static const std::vector<LibraryRoutine> r = {
      {"gemm_projection", {"a", "b"}, {"c"}, {"m", "n", "k"}, {"trans_b"},
       "C = A B checked by a random projection (C x against A (B x), x of random signs) and by exactly computed "
       "rows drawn at random, in double precision: A m x k and C m x n row-major, B k x n row-major or, with "
       "trans_b 1, n x k row-major (docs/MEASUREMENT.md)",
       {}},
      {"scaled_gemm_projection", {"a", "b", "sa", "sb"}, {"c"}, {"m", "n", "k"}, {"scale"},
       "C = (sa A)(sb B)^T checked as gemm_projection checks C = A B, each element of A and B times its scale "
       "(exact in double) where the check reads it: A m x k and B n x k row-major, scales in cublaslt_scaled_gemm's "
       "modes, bf16 C m x n row-major (docs/MEASUREMENT.md)",
       {{"sa", "f32"}, {"sb", "f32"}, {"c", "bf16"}}},
      {"reference_rows", {}, {}, {"rows"}, {},
       "the reference run on rows drawn at random: `rows` names the size that is every output's first dimension; "
       "inputs whose first dimension it is are cut to the drawn rows, the others read whole. For problems whose "
       "rows are independent, each output row made from the same rows of those inputs (docs/MEASUREMENT.md)",
       {}},
      {"reference_picked", {}, {}, {"rows", "group", "tile"}, {},
       "the reference on rows drawn at random, computed by a kernel of the reference's source (`kernel`: the "
       "reference's arguments, then the picked first rows and the tile): every output is `rows` rows, drawn in "
       "runs of `tile` consecutive rows inside groups of `group` (docs/MEASUREMENT.md)",
       {}},
  };
  return r;
}

const ArgSpec* ProblemSpec::find_arg(const std::string& aname) const {
  for (const auto& a : args)
    if (a.name == aname) return &a;
  return nullptr;
}

}  // namespace soltune
