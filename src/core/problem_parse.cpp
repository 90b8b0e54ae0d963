// Reading templates/<name>/problem.yaml (load_problem) and the helpers its variants' YAML shares
// (problem_parse.hpp); the variants themselves are read in variant.cpp.
#include "core/problem_parse.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>


namespace soltune::parse {
namespace {

std::string read_file(const std::filesystem::path& p, const SourceLoc& from) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(from, "cannot read source file '" + p.string() + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A source with its quoted includes (`#include "../common/x.cuh"`, a file named from the including
// file's folder) written in place, each file once: NVRTC, the source hash and an exported header then
// see one self-contained text, and the text hashes as if the lines had been written there. A file
// already written (a cycle included) is skipped. The toolkit's headers go in <...> and are left to NVRTC.
std::string expand_includes(const std::filesystem::path& p, const std::string& text, std::set<std::filesystem::path>& seen) {
  static const std::regex include(R"re(^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[ \t]*\r?$)re");
  std::string out;
  int line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    ++line_no;
    std::smatch m;
    if (line.find('#') != std::string::npos && std::regex_match(line, m, include)) {
      const SourceLoc loc{p.string(), line_no};
      const auto file = std::filesystem::weakly_canonical(p.parent_path() / m[1].str());
      if (!std::filesystem::is_regular_file(file))
        throw Error(loc, "#include \"" + m[1].str() + "\": no file " + file.string() +
                             " (a quoted include names a file from this file's folder; the toolkit's headers go in <...>)");
      if (seen.insert(file).second) {
        std::string inc = expand_includes(file, read_file(file, loc), seen);
        if (!inc.empty() && inc.back() != '\n') inc += '\n';  // the file's end ends a line, as in C
        out += inc;
      }
    } else {
      out.append(text, at, std::min(end + 1, text.size()) - at);
    }
    at = end + 1;
  }
  return out;
}

}  // namespace

// Whether `name` occurs in the source as a whole identifier (comments and strings count: a cheap
// test that catches a misspelt macro, not a parser).
bool mentions_identifier(const std::string& src, const std::string& name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = src.find(name); at != std::string::npos; at = src.find(name, at + 1))
    if ((at == 0 || !word(src[at - 1])) && (at + name.size() >= src.size() || !word(src[at + name.size()]))) return true;
  return false;
}

std::string read_text(const std::filesystem::path& p, const SourceLoc& from) {
  std::set<std::filesystem::path> seen{std::filesystem::weakly_canonical(p)};
  return expand_includes(p, read_file(p, from), seen);
}

InitSpec parse_init(const yaml::Node& n) {
  static const std::regex re(R"(\s*(normal|uniform)\s*\(\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*\)\s*)");
  std::smatch m;
  const auto s = n.str();
  if (!std::regex_match(s, m, re)) n.fail("expected normal(mean, std) or uniform(lo, hi), got '" + s + "'");
  InitSpec i;
  i.kind = m[1] == "normal" ? InitSpec::Kind::normal : InitSpec::Kind::uniform;
  i.a = std::stod(m[2]);
  i.b = std::stod(m[3]);
  if (i.kind == InitSpec::Kind::normal && i.b <= 0) n.fail("normal() needs a positive standard deviation");
  if (i.kind == InitSpec::Kind::uniform && i.b <= i.a) n.fail("uniform(lo, hi) needs lo < hi");
  return i;
}

// range: {min: X, max: Y, sign: both|positive|negative, why: "..."}: the full-range round's
// magnitudes for one input. A bound left out is the dtype's; the reason is required.
MagnitudeRange parse_range(const yaml::Node& n, const Names& size_names) {
  n.require_map();
  n.only_keys({"min", "max", "sign", "why"});
  MagnitudeRange r;
  Names allowed = size_names;
  allowed.insert("dtype_max");
  for (const char* key : {"min", "max"}) {
    if (!n.has(key)) continue;
    Expr e = n.at(key).expr();
    e.check_names(allowed, std::string("range's ") + key);
    // A bound over no names is checked now; the others where a task's shape is known.
    if (e.variables().empty() && !(e.eval({}) > 0)) n.at(key).fail(std::string("range's ") + key + " is a magnitude: a positive number");
    (key[1] == 'i' ? r.min : r.max) = std::move(e);
  }
  if (!r.min.empty() && !r.max.empty() && r.min.variables().empty() && r.max.variables().empty() &&
      r.max.eval({}) < r.min.eval({}))
    n.at("max").fail("range's max must be at least its min");
  if (n.has("sign")) {
    const auto s = n.at("sign").str();
    if (s == "both") r.sign = MagnitudeRange::Sign::both;
    else if (s == "positive") r.sign = MagnitudeRange::Sign::positive;
    else if (s == "negative") r.sign = MagnitudeRange::Sign::negative;
    else n.at("sign").fail("expected sign 'both', 'positive' or 'negative', got '" + s + "'");
  }
  if (!r.narrowed()) n.fail("range narrows the full-range round: give min, max, or a sign other than both");
  r.why = n.has("why") ? n.at("why").str() : "";
  if (r.why.empty()) n.fail("range needs `why`: the reason this input's magnitudes are narrower than its dtype's");
  return r;
}

std::vector<Expr> exprs(const yaml::Node& n, const Names& allowed, const std::string& what) {
  std::vector<Expr> out;
  for (const auto& e : n.seq()) {
    out.push_back(e.expr());
    out.back().check_names(allowed, what);
  }
  return out;
}

std::vector<std::string> strings(const yaml::Node& n) {
  std::vector<std::string> out;
  if (!n.defined()) return out;
  for (const auto& e : n.seq()) out.push_back(e.str());
  return out;
}

ArgSpec parse_arg(const yaml::Node& n, const Names& size_names, bool temp) {
  if (temp)
    n.only_keys({"name", "dtype", "shape"});
  else
    n.only_keys({"name", "kind", "dtype", "shape", "role", "init", "edge_inits", "range", "value", "magnitude", "vec",
                 "file"});
  ArgSpec a;
  a.loc = n.loc();
  a.name = n.at("name").str();
  a.dtype = n.at("dtype").str();
  if (a.dtype != "T") {
    try {
      parse_dtype(a.dtype);
    } catch (const Error& e) {
      n.at("dtype").fail(e.what());
    }
  }
  const auto kind = temp ? std::string("buffer") : n.at("kind").str();
  if (kind != "buffer" && kind != "scalar" && kind != "constant")
    n.at("kind").fail("expected 'buffer', 'scalar' or 'constant', got '" + kind + "'");
  a.is_buffer = kind != "scalar";
  if (a.is_buffer) {
    if (kind == "constant") {
      if (n.has("role") || n.has("magnitude") || n.has("vec"))
        n.fail("a constant takes name, kind, dtype, shape and init, edge_inits, range or file");
      a.role = Role::constant;
      a.init = n.has("init") ? parse_init(n.at("init")) : InitSpec{};
      if (n.has("edge_inits"))
        for (const auto& e : n.at("edge_inits").seq()) a.edge_inits.push_back(parse_init(e));
    } else if (temp) {
      a.role = Role::temp;
    } else {
      const auto role = n.at("role").str();
      if (role == "in") a.role = Role::in;
      else if (role == "out") a.role = Role::out;
      else if (role == "inout") a.role = Role::inout;
      else if (role == "workspace") a.role = Role::workspace;
      else n.at("role").fail("expected role 'in', 'out', 'inout' or 'workspace', got '" + role + "'");
      if (role_is_drawn(a.role)) a.init = n.has("init") ? parse_init(n.at("init")) : InitSpec{};
      else if (n.has("init"))
        n.at("init").fail(a.role == Role::workspace ? "a workspace starts zeroed: it takes no init"
                                                    : "an output is written by the kernel: it takes no init (role inout "
                                                      "for a buffer read and written in place)");
      if (n.has("magnitude")) {
        if (!role_is_checked(a.role)) n.at("magnitude").fail("magnitude applies to outputs (roles out and inout) only");
        a.magnitude = n.at("magnitude").boolean();
      }
      if (n.has("edge_inits")) {
        if (!role_is_drawn(a.role)) n.at("edge_inits").fail("edge_inits applies to inputs (roles in and inout) only");
        for (const auto& e : n.at("edge_inits").seq()) a.edge_inits.push_back(parse_init(e));
      }
      if (n.has("range") && !role_is_drawn(a.role))
        n.at("range").fail("range applies to inputs (roles in and inout) and constants only");
    }
    if (n.has("range")) a.range = parse_range(n.at("range"), size_names);
    // A workspace is often sized per block of a grid sized to the device (e.g. [sms * 64 + 1]).
    Names allowed = size_names;
    if (a.role == Role::workspace) {
      allowed.insert("dtype_bytes");
      allowed.insert(kDeviceSymbols.begin(), kDeviceSymbols.end());
    }
    a.shape = exprs(n.at("shape"), allowed, "shape");
    if (n.has("file")) {
      if (!role_is_drawn(a.role) && a.role != Role::constant)
        n.at("file").fail("file gives the data of an input (roles in and inout) or a constant");
      if (n.has("init") || n.has("edge_inits") || n.has("range"))
        n.at("file").fail("an argument read from a file takes no init, edge_inits or range");
      a.file = n.at("file").str();
      a.file_raw = a.file.extension() != ".npy";
      if (a.file_raw && a.dtype == "T")
        n.at("file").fail("a raw file's elements have one dtype: give the argument a dtype, not T (or use .npy)");
    }
    if (n.has("vec")) {
      a.lanes = static_cast<int>(n.at("vec").integer(1, 4));
      if (a.dtype != "T" && dtype_vector_cpp(parse_dtype(a.dtype), a.lanes).empty() && a.lanes > 1)
        n.at("vec").fail("CUDA has no vector of " + std::to_string(a.lanes) + " " + a.dtype + " elements");
      if (a.lanes > 1) a.shape.push_back(Expr(std::to_string(a.lanes), n.at("vec").loc()));
    }
  } else {
    if (n.has("shape") || n.has("role") || n.has("init") || n.has("edge_inits") || n.has("range") || n.has("magnitude") ||
        n.has("vec") || n.has("file"))
      n.fail("a scalar takes only name, kind, dtype and value");
    a.value = n.at("value").expr();
    a.value.check_names(size_names, "scalar value");
  }
  return a;
}

std::vector<Expr> geometry(const yaml::Node& n, const Names& allowed, const std::string& what) {
  auto v = exprs(n, allowed, what);
  if (v.empty() || v.size() > 3) n.fail(what + ": expected 1 to 3 expressions");
  return v;
}

LaunchSpec parse_launch(const yaml::Node& n, const Names& allowed, bool with_args) {
  LaunchSpec l;
  l.loc = n.loc();
  l.kernel = n.at("kernel").str();
  l.template_args = strings(n.get("template_args"));
  if (with_args) l.args = strings(n.at("args"));
  l.grid = geometry(n.at("grid"), allowed, "grid");
  l.block = geometry(n.at("block"), allowed, "block");
  l.smem = n.has("smem") ? n.at("smem").expr() : Expr("0", n.loc());
  l.smem.check_names(allowed, "smem");
  return l;
}

// Parses the template arguments: "T", or an integer expression over `allowed` (a variant's knobs
// and sizes; the sizes alone for the reference and the baseline).
void parse_template_args(LaunchSpec& l, const Names& allowed, const SourceLoc& loc, const char* what) {
  l.template_values.clear();
  for (const auto& t : l.template_args) {
    if (t == "T") {
      l.template_values.emplace_back();
      continue;
    }
    Expr e(t, loc);  // a syntax error names the file, the line and the column
    for (const auto& n : e.variables())
      if (!allowed.count(n)) {
        std::string known;
        for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
        throw Error(loc, "template argument '" + t + "' is neither T nor an integer expression over the " + what +
                             " (" + known + "; unknown name '" + n + "')");
      }
    l.template_values.push_back(std::move(e));
  }
}

void check_args(const std::vector<std::string>& args, const ProblemSpec& p, bool temps_ok, const SourceLoc& loc) {
  for (const auto& a : args) {
    if (p.find_arg(a)) continue;
    bool is_temp = std::any_of(p.baseline_temps.begin(), p.baseline_temps.end(),
                               [&](const ArgSpec& t) { return t.name == a; });
    if (temps_ok && is_temp) continue;
    throw Error(loc, "kernel argument '" + a + "' is not declared in problem.yaml" +
                         (temps_ok ? " (args or baseline temps)" : " args"));
  }
}

namespace {

// The reference's arguments: the problem's, plus `<out>.magnitude` exactly once for each output
// that declares a magnitude, and `<buffer>.out` exactly once for each inout buffer (and for no
// other).
void check_reference_args(const ProblemSpec& p, const SourceLoc& loc) {
  std::vector<std::string> plain;
  for (const auto& a : p.reference.args) {
    const auto extra = reference_array(a);
    if (!extra) {
      plain.push_back(a);
      continue;
    }
    const ArgSpec* buf = p.find_arg(extra->buffer);
    if (extra->kind == ReferenceArray::Kind::magnitude && (!buf || !buf->magnitude))
      throw Error(loc, "reference argument '" + a + "': no output '" + extra->buffer + "' declares 'magnitude: true'");
    if (extra->kind == ReferenceArray::Kind::out && (!buf || buf->role != Role::inout))
      throw Error(loc, "reference argument '" + a + "': no buffer '" + extra->buffer + "' has role inout");
  }
  check_args(plain, p, false, loc);
  auto once = [&](const std::string& name) {
    return std::count(p.reference.args.begin(), p.reference.args.end(), name) == 1;
  };
  for (const auto& a : p.args) {
    if (a.magnitude && !once(a.name + ".magnitude"))
      throw Error(loc, "output '" + a.name + "' declares a magnitude: the reference's args must name '" + a.name +
                           ".magnitude' once (a double per element of " + a.name + ")");
    if (a.role == Role::inout && (!once(a.name) || !once(a.name + ".out")))
      throw Error(loc, "buffer '" + a.name + "' has role inout: the reference's args must name '" + a.name +
                           "' once (the values drawn into it) and '" + a.name + ".out' once (a double per element: what "
                           "the kernel must leave in " + a.name + ")");
  }
}

// reference_rows recomputes the outputs' rows from inputs cut to them: `rows` must name a size that
// is every output's first dimension, and no buffer may be both read and written.
void check_rows_routine(const yaml::Node& n, const ProblemSpec& p) {
  const Expr& e = p.timed_check->sizes.at("rows");
  const std::string& rows = e.text();
  if (std::find(p.sizes.begin(), p.sizes.end(), rows) == p.sizes.end())
    n.at("rows").fail("reference_rows takes the name of one of the problem's sizes as `rows` (the outputs' first "
                      "dimension), not '" + rows + "'");
  for (const auto& a : p.args) {
    if (!a.is_buffer) continue;
    if (a.role == Role::inout)
      n.fail("reference_rows cannot check '" + a.name + "': an inout buffer's rows are not recomputed from its inputs");
    if (a.role == Role::constant && !a.shape.empty() && a.shape[0].text() == rows)
      n.fail("reference_rows cannot cut constant '" + a.name + "' to the sampled rows: make it an input");
    if (a.role == Role::out && (a.shape.empty() || a.shape[0].text() != rows))
      n.at("rows").fail("output '" + a.name + "' does not have " + rows + " as its first dimension: reference_rows " +
                        "compares the outputs' rows");
  }
}

// baseline.library: {routine, label, <operand>: <buffer>..., <size>: <expression over the sizes>...};
// check: the same without a label. `what` names the kind of routine in errors. With temps_ok (a step
// of a library plan), an operand may also be one of the baseline's temps, which its steps pass on.
RoutineCall parse_routine(const yaml::Node& n, const ProblemSpec& p, const Names& sizes,
                          const std::vector<LibraryRoutine>& all, const std::string& what, bool labelled,
                          bool temps_ok = false) {
  n.require_map();
  RoutineCall lib;
  lib.loc = n.loc();
  lib.routine = n.at("routine").str();
  const auto r = std::find_if(all.begin(), all.end(), [&](const LibraryRoutine& x) { return x.name == lib.routine; });
  if (r == all.end()) {
    std::string known;
    for (const auto& x : all) known += (known.empty() ? "" : ", ") + x.name;
    n.at("routine").fail("unknown " + what + " '" + lib.routine + "' (known: " + known + ")");
  }
  if (labelled) lib.label = n.at("label").str();
  else if (n.has("label")) n.at("label").fail("a check has no label: only a baseline's routine names T_ref");
  for (const auto& [key, v] : n.map_items()) {
    if (key == "routine" || key == "label") continue;
    if (key == "kernel" && lib.routine == "reference_picked") {
      lib.kernel = v.str();
      continue;
    }
    const bool in = std::count(r->inputs.begin(), r->inputs.end(), key) > 0;
    const bool out = std::count(r->outputs.begin(), r->outputs.end(), key) > 0;
    if (in || out) {
      const auto name = v.str();
      const ArgSpec* a = p.find_arg(name);
      const ArgSpec* temp = nullptr;
      if (!a && temps_ok)
        for (const auto& t : p.baseline_temps)
          if (t.name == name) a = temp = &t;
      const auto own = r->operand_dtypes.find(key);
      const std::string dtype = own == r->operand_dtypes.end() ? "T" : own->second;
      if (!a || !a->is_buffer || a->dtype != dtype || a->lanes != 1)
        v.fail("'" + name + "' is not a buffer of " + (dtype == "T" ? std::string("the task's dtype") : dtype) +
               " among the problem's args" + (temps_ok ? " or the baseline's temps" : "") + " (" + key + " of " +
               lib.routine + ")");
      if (!temp && (in ? a->role != Role::in : a->role != Role::out))
        v.fail("'" + name + "' must be an " + (in ? "input" : "output") + " for " + lib.routine + "'s " + key);
      lib.operands[key] = name;
    } else if (std::count(r->sizes.begin(), r->sizes.end(), key) || std::count(r->optional_sizes.begin(), r->optional_sizes.end(), key)) {
      auto e = v.expr();
      e.check_names(sizes, lib.routine + "'s " + key);
      lib.sizes.emplace(key, std::move(e));
    } else {
      v.fail("'" + key + "' is no operand or size of " + lib.routine + " (" + r->doc + ")");
    }
  }
  for (const auto* names : {&r->inputs, &r->outputs})
    for (const auto& o : *names)
      if (!lib.operands.count(o)) n.fail(lib.routine + " needs its operand '" + o + "' (a buffer of the problem)");
  for (const auto& z : r->sizes)
    if (!lib.sizes.count(z)) n.fail(lib.routine + " needs its size '" + z + "' (an expression over the problem's sizes)");
  return lib;
}

// baseline.library: one routine call with its label, or {label, steps}: routine calls (no label) and
// {launch: <kernel>}, the baseline's launch of that kernel, in the order they run.
LibraryBaseline parse_library(const yaml::Node& n, const ProblemSpec& p, const Names& sizes) {
  n.require_map();
  LibraryBaseline lib;
  lib.loc = n.loc();
  if (!n.has("steps")) {
    auto call = parse_routine(n, p, sizes, library_routines(), "library routine", true);
    lib.label = call.label;
    lib.steps.push_back({std::move(call), -1});
    return lib;
  }
  n.only_keys({"label", "steps"});
  lib.label = n.at("label").str();
  bool any_call = false;
  for (const auto& step : n.at("steps").seq()) {
    step.require_map();
    if (!step.has("launch")) {
      lib.steps.push_back({parse_routine(step, p, sizes, library_routines(), "library routine", false, true), -1});
      any_call = true;
      continue;
    }
    step.only_keys({"launch"});
    const auto kernel = step.at("launch").str();
    int found = -1;
    for (size_t i = 0; i < p.baseline.size(); ++i)
      if (p.baseline[i].kernel == kernel) {
        if (found >= 0) step.at("launch").fail("the baseline launches '" + kernel + "' more than once: which one is the step?");
        found = static_cast<int>(i);
      }
    if (found < 0) step.at("launch").fail("no launch of '" + kernel + "' among the baseline's launches (a step runs one of them)");
    lib.steps.push_back({std::nullopt, found});
  }
  if (!any_call) n.at("steps").fail("a library's steps call at least one of its routines");
  return lib;
}

}  // namespace
}  // namespace soltune::parse

namespace soltune {

using namespace parse;

std::vector<std::string> list_problems(const std::filesystem::path& templates_dir) {
  std::vector<std::string> out;
  if (!std::filesystem::is_directory(templates_dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(templates_dir))
    if (std::filesystem::exists(e.path() / "problem.yaml")) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// `fallback: {variant: NAME, knobs: {KNOB: value, ...}}`: one configuration meant to be legal at every
// shape (core/fallback.hpp checks it over probe shapes), so its values may name dtype_bytes only. It
// becomes the variant's first preset, so that every search of the variant measures it.
void parse_fallback(const yaml::Node& fn, ProblemSpec& p) {
  fn.only_keys({"variant", "knobs"});
  const auto vn = fn.at("variant");
  const std::string name = vn.str();
  auto it = std::find_if(p.variants.begin(), p.variants.end(), [&](const VariantSpec& v) { return v.name == name; });
  if (it == p.variants.end()) {
    std::string names;
    for (const auto& v : p.variants) names += (names.empty() ? "" : ", ") + v.name;
    vn.fail("fallback: no variant '" + name + "' (variants: " + names + ")");
  }
  VariantSpec& v = *it;
  const auto kn = fn.at("knobs");
  Preset pr{"fallback", {}};
  for (const auto& [key, kv] : kn.map_items())
    if (std::none_of(v.knobs.begin(), v.knobs.end(), [&](const KnobSpec& k) { return k.name == key; }))
      kv.fail("fallback: '" + key + "' is not a knob of variant '" + v.name + "'");
  for (const auto& k : v.knobs) {
    if (!kn.has(k.name)) kn.fail("fallback gives no value for knob '" + k.name + "' of variant '" + v.name + "'");
    pr.values.push_back(kn.at(k.name).expr());
    pr.values.back().check_names(parse::Names{"dtype_bytes"},
                                 "fallback, knob '" + k.name + "' (a value for every shape and device: dtype_bytes only)");
  }
  v.presets.insert(v.presets.begin(), std::move(pr));
  v.has_fallback = true;
}

}  // namespace

ProblemSpec load_problem(const std::filesystem::path& templates_dir, const std::string& name) {
  const auto dir = templates_dir / name;
  const auto file = dir / "problem.yaml";
  if (!std::filesystem::exists(file)) {
    std::string known;
    for (const auto& p : list_problems(templates_dir)) known += (known.empty() ? "" : ", ") + p;
    throw Error("unknown problem '" + name + "': no " + file.string() + " (problems in " +
                templates_dir.string() + ": " + (known.empty() ? "none" : known) + ")");
  }
  auto n = yaml::load_file(file);
  n.only_keys({"name", "description", "sizes", "dtypes", "args", "flops", "bytes", "compute", "tolerance", "reference", "fallback",
               "baseline", "check", "requires"});
  ProblemSpec p;
  p.dir = dir;
  p.name = n.at("name").str();
  if (p.name != name) n.at("name").fail("problem name '" + p.name + "' does not match its folder '" + name + "'");
  p.description = n.str_or("description", "");
  for (const auto& sn : n.at("sizes").seq()) {
    if (!sn.node.IsMap()) {
      p.sizes.push_back(sn.str());
      continue;
    }
    // {name, values, default, doc}: a size of a few values, e.g. a layout flag.
    sn.only_keys({"name", "values", "names", "default", "doc"});
    p.sizes.push_back(sn.at("name").str());
    SizeOption o;
    o.doc = sn.str_or("doc", "");
    for (const auto& e : sn.at("values").seq()) o.values.push_back(e.integer());
    if (o.values.empty()) sn.at("values").fail("size '" + p.sizes.back() + "' lists no values");
    // names: what a config may write instead of each value (an activation's name).
    if (sn.has("names")) {
      for (const auto& e : sn.at("names").seq()) {
        const std::string name_text = e.str();
        if (name_text.empty() || std::isdigit(static_cast<unsigned char>(name_text[0])) ||
            std::find(o.names.begin(), o.names.end(), name_text) != o.names.end())
          e.fail("a value's name must be distinct and not start with a digit, got '" + name_text + "'");
        o.names.push_back(name_text);
      }
      if (o.names.size() != o.values.size())
        sn.at("names").fail("size '" + p.sizes.back() + "' names " + std::to_string(o.names.size()) + " values of " +
                            std::to_string(o.values.size()));
    }
    if (sn.has("default")) {
      o.def = o.parse(sn.at("default").str());
      if (!o.def) sn.at("default").fail("the default is not among size '" + p.sizes.back() + "''s values (" + o.listing() + ")");
    }
    p.size_options[p.sizes.back()] = std::move(o);
  }
  // The exported header's launch functions take the sizes and arguments by these names beside their
  // own locals.
  static const Names kHeaderNames = {"p", "e", "stream", "scratch", "scratch_bytes", "kernel", "dev", "sms", "ccM", "ccm",
                                     "optin", "l2", "out", "detail"};
  Names sizes;
  for (const auto& s : p.sizes) {
    if (!sizes.insert(s).second) n.at("sizes").fail("size '" + s + "' declared twice");
    if (kHeaderNames.count(s)) n.at("sizes").fail("size '" + s + "': the exported header uses this name for its own; rename the size");
  }
  if (n.has("requires"))
    for (const auto& rn : n.at("requires").seq()) {
      rn.only_keys({"expr", "why"});
      ShapeRule r{rn.at("expr").expr(), rn.at("why").str()};
      r.expr.check_names(sizes, "requires");
      p.shape_rules.push_back(std::move(r));
    }
  for (const auto& d : n.at("dtypes").seq()) {
    try {
      p.dtypes.push_back(parse_dtype(d.str()));
    } catch (const Error& e) {
      d.fail(e.what());
    }
  }
  Names arg_names;
  for (const auto& a : n.at("args").seq()) {
    p.args.push_back(parse_arg(a, sizes, false));
    const auto& arg = p.args.back().name;
    if (!arg_names.insert(arg).second) a.fail("argument '" + arg + "' declared twice");
    if (kHeaderNames.count(arg))
      a.at("name").fail("argument '" + arg + "': the exported header uses this name for its own; rename the argument");
    auto& f = p.args.back().file;
    if (!f.empty()) {
      if (f.is_relative()) f = dir / f;
      if (!std::filesystem::is_regular_file(f))
        a.at("file").fail("no file '" + f.string() + "' (a relative path is from the problem's folder)");
    }
  }
  if (std::none_of(p.args.begin(), p.args.end(), [](const ArgSpec& a) { return role_is_checked(a.role) && a.is_buffer; }))
    n.at("args").fail("a problem needs at least one buffer with role out or inout");
  Names size_dt = sizes;
  size_dt.insert("dtype_bytes");
  p.flops = n.at("flops").expr();
  p.flops.check_names(size_dt, "flops");
  p.bytes = n.at("bytes").expr();
  p.bytes.check_names(size_dt, "bytes");
  if (n.has("compute"))
    for (const auto& [dt, un] : n.at("compute").map_items()) {
      DType t;
      try {
        t = parse_dtype(dt);
        if (std::find(p.dtypes.begin(), p.dtypes.end(), t) == p.dtypes.end())
          throw Error("dtype " + dt + " is not among the problem's dtypes");
        p.compute[t] = parse_compute_unit(un.str());
      } catch (const Error& e) {
        un.fail(e.what());
      }
    }
  // Optional where every checked output is an integer or bool (compared exactly unless it has one).
  if (n.has("tolerance"))
  for (const auto& [dt, tn] : n.at("tolerance").map_items()) {
    tn.only_keys({"atol", "rtol", "rel_l2", "min_match", "mtol"});
    DType t;
    try {
      t = parse_dtype(dt);
    } catch (const Error& e) {
      tn.fail(e.what());
    }
    p.tolerance[t] = Tolerance{tn.at("atol").number(), tn.at("rtol").number(), tn.at("rel_l2").number(),
                               tn.number_or("min_match", 1.0), {}};
    if (!(p.tolerance[t].min_match > 0 && p.tolerance[t].min_match <= 1))
      tn.at("min_match").fail("min_match must lie in (0, 1]");
    if (tn.has("mtol")) {
      if (std::none_of(p.args.begin(), p.args.end(), [](const ArgSpec& a) { return a.magnitude; }))
        tn.at("mtol").fail("mtol scales the magnitude of an output, and no output declares 'magnitude: true'");
      p.tolerance[t].mtol = tn.at("mtol").expr();
      p.tolerance[t].mtol.check_names(size_dt, "mtol");
    }
  }
  // A float output takes its own dtype's tolerance, else the task dtype's: one of them must be given.
  for (auto t : p.dtypes)
    for (const auto& a : p.args) {
      const DType d = a.resolve_dtype(t);
      if (!a.is_buffer || !role_is_checked(a.role) || !dtype_is_float(d) || p.tolerance.count(d) || p.tolerance.count(t))
        continue;
      const std::string why = "no tolerance for dtype " + std::string(dtype_name(t)) + ": output '" + a.name + "' is " +
                              std::string(dtype_name(d)) + " (integer and bool outputs compare exactly without one)";
      if (n.has("tolerance")) n.at("tolerance").fail(why);
      throw Error(n.loc(), why);
    }
  for (const auto& a : p.args)
    for (auto t : p.dtypes)
      if (a.lanes > 1 && a.item_cpp(t).empty())
        throw Error(a.loc, "buffer '" + a.name + "': CUDA has no vector of " + std::to_string(a.lanes) + " " +
                               std::string(dtype_name(a.resolve_dtype(t))) + " elements (dtype " + std::string(dtype_name(t)) + ")");

  Names geo = size_dt;
  for (const auto& s : kDeviceSymbols) geo.insert(s);
  {
    auto r = n.at("reference");
    r.only_keys({"source", "kernel", "template_args", "args", "grid", "block", "smem", "defines"});
    p.reference_source = read_text(dir / r.at("source").str(), r.loc());
    if (r.has("defines")) p.reference_defines = parse_defines(r.at("defines"), size_dt, p.reference_source, r.at("source").str());
    p.reference = parse_launch(r, geo, false);
    p.reference.args = strings(r.get("args"));
    if (p.reference.args.empty())
      for (const auto& a : p.args) {
        p.reference.args.push_back(a.name);
        if (a.role == Role::inout) p.reference.args.push_back(a.name + ".out");
      }
    parse_template_args(p.reference, sizes, r.has("template_args") ? r.at("template_args").loc() : r.loc(), "sizes");
    check_reference_args(p, r.has("args") ? r.at("args").loc() : r.loc());
  }
  {
    auto b = n.at("baseline");
    b.only_keys({"description", "label", "library", "source", "temps", "launches", "defines"});
    p.baseline_description = b.str_or("description", "");
    p.baseline_label = b.str_or("label", "baseline");
    p.baseline_source = read_text(dir / b.at("source").str(), b.loc());
    if (b.has("defines")) p.baseline_defines = parse_defines(b.at("defines"), size_dt, p.baseline_source, b.at("source").str());
    if (b.has("temps"))
      for (const auto& t : b.at("temps").seq()) p.baseline_temps.push_back(parse_arg(t, sizes, true));
    for (const auto& l : b.at("launches").seq()) {
      l.only_keys({"kernel", "template_args", "args", "grid", "block", "smem", "when"});
      p.baseline.push_back(parse_launch(l, geo, true));
      parse_template_args(p.baseline.back(), sizes, l.has("template_args") ? l.at("template_args").loc() : l.loc(), "sizes");
      check_args(p.baseline.back().args, p, true, l.loc());
      if (l.has("when")) {  // a launch eager PyTorch makes only at some shapes (a mask's, where there is one)
        p.baseline.back().when = l.at("when").expr();
        p.baseline.back().when.check_names(sizes, "when");
      }
    }
    if (p.baseline.empty()) b.at("launches").fail("the baseline needs at least one launch");
    if (b.has("library")) p.baseline_library = parse_library(b.at("library"), p, sizes);
  }

  std::vector<std::filesystem::path> variant_files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".yaml" && e.path().filename() != "problem.yaml") variant_files.push_back(e.path());
  std::sort(variant_files.begin(), variant_files.end());
  for (const auto& f : variant_files) p.variants.push_back(parse_variant(f, p));
  if (p.variants.empty()) throw Error(SourceLoc{dir.string()}, "problem has no variant (<variant>.yaml + .cu)");
  if (n.has("fallback")) parse_fallback(n.at("fallback"), p);
  if (n.has("check")) {
    p.timed_check = parse_routine(n.at("check"), p, sizes, check_routines(), "check routine", false);
    if (p.timed_check->routine == "reference_rows") check_rows_routine(n.at("check"), p);
    if (p.timed_check->routine == "reference_picked" && p.timed_check->kernel.empty())
      n.at("check").fail("reference_picked needs `kernel`: the reference source's kernel that computes the picked rows");
    // The projection's kernels read 8-bit A and B with their scales, and wider ones without.
    if (const auto& r = p.timed_check->routine; r == "gemm_projection" || r == "scaled_gemm_projection")
      for (const DType t : p.dtypes)
        if ((dtype_is_float(t) && dtype_bytes(t) == 1) != (r == "scaled_gemm_projection"))
          n.at("check").at("routine").fail(r == "gemm_projection"
                                                ? "gemm_projection reads no scales: 8-bit " + std::string(dtype_name(t)) +
                                                      " needs scaled_gemm_projection"
                                                : "scaled_gemm_projection reads 8-bit A and B: dtype " +
                                                      std::string(dtype_name(t)) + " is not");
  }
  return p;
}

}  // namespace soltune
