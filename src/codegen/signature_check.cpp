#include "codegen/signature_check.hpp"

#include <algorithm>
#include <sstream>

namespace soltune {
namespace {

constexpr const char* kMarker = "soltune-signature: ";

// The parameter list of a kernel's pointer type, and its I-th parameter (void past the end, so
// that a wrong count is reported once, not as an error per parameter).
constexpr const char* kHelpers = R"SRC(
#include <cuda/std/type_traits>
namespace soltune_signature {
template <int I, typename... P> struct nth { using type = void; };
template <typename H, typename... T> struct nth<0, H, T...> { using type = H; };
template <int I, typename H, typename... T> struct nth<I, H, T...> { using type = typename nth<I - 1, T...>::type; };
template <typename F> struct sig;
template <typename... P> struct sig<void (*)(P...)> {
  static constexpr int count = sizeof...(P);
  template <int I> using at = typename nth<I, P...>::type;
};
}  // namespace soltune_signature
)SRC";

// What soltune passes for an argument of a launch ("" for a tensor map: a 128-byte value).
std::string passed_type(const ProblemSpec& p, const VariantSpec& v, DType t, const std::string& name) {
  if (v.tensor_map(name)) return "";
  if (const ArgSpec* s = v.find_scratch(name)) return std::string(dtype_cpp(s->resolve_dtype(t))) + "*";
  const ArgSpec* a = p.find_arg(name);
  if (!a) return "";
  if (!a->is_buffer) return std::string(dtype_cpp(a->resolve_dtype(t)));
  return a->item_cpp(t) + "*";
}

// How the message names what soltune passes: an input as a const pointer, which a kernel written
// for another tuner may also take as a plain one (soltune checks that it leaves the input as drawn).
std::string passed_name(const ProblemSpec& p, const std::string& name, const std::string& type) {
  const ArgSpec* a = p.find_arg(name);
  return a && a->is_buffer && a->role == Role::in ? "const " + type + " (or " + type + ")" : type;
}

// A string literal's contents: the name expressions hold only identifiers, digits, '<', '>', ',',
// ' ', '_' and ':', so only quotes and backslashes (never there) would need escaping.
std::string literal(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The line of the source where kernel `name` is defined (a `__global__` before its name and '('),
// 0 when it is not found.
int kernel_line(const std::string& src, const std::string& name) {
  for (size_t at = src.find(name + "("); at != std::string::npos; at = src.find(name + "(", at + 1)) {
    const size_t from = at > 400 ? at - 400 : 0;
    const size_t g = src.rfind("__global__", at);
    if (g == std::string::npos || g < from || src.find(';', g) < at) continue;
    return 1 + static_cast<int>(std::count(src.begin(), src.begin() + static_cast<long>(at), '\n'));
  }
  return 0;
}

// Each of the variant's defines that its source redefines (NVRTC's warning #47: the source's
// value wins over soltune's -D, so every configuration would compile the same), with the line.
std::string redefined_macros(const VariantSpec& v, const std::string& log) {
  constexpr std::string_view kWarning = "): warning #47-D: incompatible redefinition of macro \"";
  std::string found;
  for (size_t at = log.find(kWarning); at != std::string::npos; at = log.find(kWarning, at + 1)) {
    const size_t name_at = at + kWarning.size(), name_end = log.find('"', name_at);
    const std::string name = log.substr(name_at, name_end - name_at);
    const auto d = std::find_if(v.defines.begin(), v.defines.end(), [&](const DefineSpec& x) { return x.name == name; });
    if (d == v.defines.end()) continue;
    const size_t open = log.rfind('(', at);
    const std::string line = open == std::string::npos ? "" : log.substr(open + 1, at - open - 1);
    const std::string msg = v.source_path.string() + (line.empty() ? "" : ":" + line) + ": '#define " + name +
                            "' overrides the value soltune defines for it (`defines:` in " + v.yaml_path.filename().string() +
                            "), so every configuration would compile the same; guard it with #ifndef " + name +
                            " or remove it";
    if (found.find(msg) == std::string::npos) found += (found.empty() ? "" : "\n") + msg;
  }
  return found;
}

}  // namespace

std::string signature_check_source(const ProblemSpec& p, const VariantSpec& v, DType t,
                                   const std::vector<std::pair<const LaunchSpec*, std::string>>& launches) {
  std::ostringstream s;
  s << v.source << "\n" << kHelpers;
  for (size_t i = 0; i < launches.size(); ++i) {
    const auto& [l, expr] = launches[i];
    const std::string k = "soltune_signature_k" + std::to_string(i);
    std::string names;
    for (const auto& a : l->args) names += (names.empty() ? "" : ", ") + a;
    s << "using " << k << " = soltune_signature::sig<decltype(&" << expr << ")>;\n"
      << "static_assert(" << k << "::count == " << l->args.size() << ", \"" << kMarker << literal(expr)
      << " does not take " << l->args.size() << " parameters, as its args (" << names << ") pass\");\n";
    for (size_t j = 0; j < l->args.size(); ++j) {
      const std::string type = passed_type(p, v, t, l->args[j]);
      if (type.empty()) continue;
      // A pointer converts (T* to const T*: an input may be taken either way); a scalar's bytes are passed as they are, so a float
      // parameter needs a float, and an integer one an integer (the low bytes of an i64 are an int).
      const std::string param = k + "::at<" + std::to_string(j) + ">";
      const std::string takes =
          type.back() == '*' ? "cuda::std::is_convertible<" + type + ", " + param + ">::value"
                             : "(cuda::std::is_same<" + type + ", " + param + ">::value || (cuda::std::is_integral<" +
                                   type + ">::value && cuda::std::is_integral<" + param + ">::value))";
      s << "static_assert(" << k << "::count != " << l->args.size() << " || " << takes << ", \"" << kMarker
        << literal(expr) << ": parameter " << j + 1 << " cannot take '" << l->args[j] << "', which soltune passes as "
        << passed_name(p, l->args[j], type) << "\");\n";
    }
  }
  return s.str();
}

std::string check_signatures(const Compiler& c, const ProblemSpec& p, const VariantSpec& v, DType t, const Bindings& b,
                             const std::string& arch, std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::vector<std::pair<const LaunchSpec*, std::string>> launches;
  for (const auto* l : v.all_launches()) launches.emplace_back(l, name_expression(*l, t, b));
  const CompileRequest r{signature_check_source(p, v, t, launches),
                         v.source_path.filename().string() + " (signature check)", {name_expression(v.launch, t, b)},
                         arch, define_options(v, t, b), deadline};
  const auto out = c.compile(r);
  if (out.abandoned) return "";  // the run's budget ended first: nothing is tuned to fail at export
  std::string found = redefined_macros(v, out.log);
  if (out.ok) return found;
  for (size_t at = out.log.find(kMarker); at != std::string::npos; at = out.log.find(kMarker, at + 1)) {
    const size_t start = at + std::string(kMarker).size();
    const size_t end = out.log.find('"', start);
    std::string line = out.log.substr(start, end == std::string::npos ? std::string::npos : end - start);
    // Where the kernel is: the file and line of its definition.
    for (const auto& [l, expr] : launches)
      if (line.rfind(expr, 0) == 0) {
        const int at_line = kernel_line(v.source, l->kernel);
        line = v.source_path.string() + (at_line ? ":" + std::to_string(at_line) : "") + ": " + line;
        break;
      }
    if (found.find(line) == std::string::npos) found += (found.empty() ? "" : "\n") + line;
  }
  return found;
}

}  // namespace soltune
