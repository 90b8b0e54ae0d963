#include "core/problem.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <regex>
#include <set>
#include <sstream>

#include "core/tensor_map.hpp"
#include "core/yaml_util.hpp"

namespace soltune {
namespace {

using Names = std::set<std::string, std::less<>>;

// Whether `name` occurs in the source as a whole identifier (comments and strings count: a cheap
// test that catches a misspelt macro, not a parser).
bool mentions_identifier(const std::string& src, const std::string& name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = src.find(name); at != std::string::npos; at = src.find(name, at + 1))
    if ((at == 0 || !word(src[at - 1])) && (at + name.size() >= src.size() || !word(src[at + name.size()]))) return true;
  return false;
}

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
    n.only_keys({"name", "kind", "dtype", "shape", "role", "init", "edge_inits", "value", "magnitude", "vec", "file"});
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
        n.fail("a constant takes name, kind, dtype, shape and init, edge_inits or file");
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
      else if (role == "workspace") a.role = Role::workspace;
      else n.at("role").fail("expected role 'in', 'out' or 'workspace', got '" + role + "'");
      if (a.role == Role::in) a.init = n.has("init") ? parse_init(n.at("init")) : InitSpec{};
      if (a.role == Role::workspace && n.has("init")) n.at("init").fail("a workspace starts zeroed: it takes no init");
      if (n.has("magnitude")) {
        if (a.role != Role::out) n.at("magnitude").fail("magnitude applies to outputs only");
        a.magnitude = n.at("magnitude").boolean();
      }
      if (n.has("edge_inits")) {
        if (a.role != Role::in) n.at("edge_inits").fail("edge_inits applies to inputs only");
        for (const auto& e : n.at("edge_inits").seq()) a.edge_inits.push_back(parse_init(e));
      }
    }
    // A workspace is often sized per block of a grid sized to the device (e.g. [sms * 64 + 1]).
    Names allowed = size_names;
    if (a.role == Role::workspace) {
      allowed.insert("dtype_bytes");
      allowed.insert(kDeviceSymbols.begin(), kDeviceSymbols.end());
    }
    a.shape = exprs(n.at("shape"), allowed, "shape");
    if (n.has("file")) {
      if (a.role != Role::in && a.role != Role::constant) n.at("file").fail("file gives the data of an input or a constant");
      if (n.has("init") || n.has("edge_inits")) n.at("file").fail("an argument read from a file takes no init or edge_inits");
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
    if (n.has("shape") || n.has("role") || n.has("init") || n.has("edge_inits") || n.has("magnitude") || n.has("vec") ||
        n.has("file"))
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
void parse_template_args(LaunchSpec& l, const Names& allowed, const SourceLoc& loc, const char* what = "knobs and sizes") {
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

// The reference's arguments: the problem's, plus `<out>.magnitude` exactly once for each output
// that declares a magnitude (and for no other).
void check_reference_args(const ProblemSpec& p, const SourceLoc& loc) {
  std::vector<std::string> plain;
  for (const auto& a : p.reference.args) {
    const auto dot = a.rfind(".magnitude");
    if (dot == std::string::npos || dot + 10 != a.size()) {
      plain.push_back(a);
      continue;
    }
    const ArgSpec* out = p.find_arg(a.substr(0, dot));
    if (!out || !out->magnitude)
      throw Error(loc, "reference argument '" + a + "': no output '" + a.substr(0, dot) + "' declares 'magnitude: true'");
  }
  check_args(plain, p, false, loc);
  for (const auto& a : p.args)
    if (a.magnitude && std::count(p.reference.args.begin(), p.reference.args.end(), a.name + ".magnitude") != 1)
      throw Error(loc, "output '" + a.name + "' declares a magnitude: the reference's args must name '" + a.name +
                           ".magnitude' once (a double per element of " + a.name + ")");
}

// `defines:` as a mapping (macro: expression, or T for the element type) or as a list of knob and
// size names, each defined as itself. A macro the source never names would leave every value of
// its knob compiling to the same kernel, as would one the compiler defines: both are refused.
std::vector<DefineSpec> parse_defines(const yaml::Node& dn, const Names& names, const VariantSpec& v) {
  static const std::regex ident(R"([A-Za-z_][A-Za-z0-9_]*)");
  std::vector<std::pair<std::string, yaml::Node>> items;
  if (dn.node.IsMap())
    items = dn.map_items();
  else
    for (const auto& e : dn.seq()) items.emplace_back(e.str(), e);
  std::vector<DefineSpec> out;
  for (const auto& [name, vn] : items) {
    DefineSpec d{name, {}, false, vn.loc()};
    if (!std::regex_match(name, ident)) vn.fail("define '" + name + "': expected a C identifier as the macro's name");
    if (name.rfind("__", 0) == 0 || name.rfind("CUDA", 0) == 0 || name.rfind("NVRTC", 0) == 0)
      vn.fail("define '" + name + "': names starting __, CUDA or NVRTC belong to the compiler and toolkit");
    if (std::any_of(out.begin(), out.end(), [&](const DefineSpec& o) { return o.name == name; }))
      vn.fail("define '" + name + "' given twice");
    const std::string text = dn.node.IsMap() ? vn.str() : name;
    if (text == "T") {
      d.type = true;
    } else {
      if (!dn.node.IsMap() && !names.count(name))
        vn.fail("define '" + name + "': a list names knobs and sizes, and this is neither (map a macro to an "
                "expression: `NAME: expression`)");
      d.value = dn.node.IsMap() ? vn.expr() : Expr(name, vn.loc());
      d.value.check_names(names, "define '" + name + "'");
    }
    if (!mentions_identifier(v.source, name))
      vn.fail("define '" + name + "' is never named in " + v.source_path.filename().string() +
              ": every value would compile to the same kernel");
    out.push_back(std::move(d));
  }
  if (out.empty()) dn.fail("`defines` is empty (leave it out where the kernel reads no macros)");
  return out;
}

VariantSpec parse_variant(const std::filesystem::path& yaml_path, const ProblemSpec& p) {
  auto n = yaml::load_file(yaml_path);
  n.only_keys({"description", "source", "kernel", "template_args", "args", "knobs", "constraints", "launch", "model",
               "presets", "notes", "dtypes", "arch", "tensor_maps", "scratch", "before", "after", "defines"});
  VariantSpec v;
  v.yaml_path = yaml_path;
  v.name = yaml_path.stem().string();
  v.description = n.str_or("description", "");
  v.source_path = yaml_path.parent_path() / n.str_or("source", v.name + ".cu");
  v.source = read_text(v.source_path, n.loc());
  if (n.has("arch")) {
    static const std::regex specific(R"(sm_[1-9][0-9]+a)");
    v.arch = n.at("arch").str();
    if (!std::regex_match(v.arch, specific))
      n.at("arch").fail("expected an architecture-specific target such as sm_90a, got '" + v.arch +
                        "' (a minimum compute capability is a constraint: cc >= 80)");
  }
  if (n.has("dtypes")) {
    for (const auto& d : n.at("dtypes").seq()) {
      try {
        const DType t = parse_dtype(d.str());
        if (std::find(p.dtypes.begin(), p.dtypes.end(), t) == p.dtypes.end())
          throw Error("dtype " + d.str() + " is not among problem " + p.name + "'s dtypes");
        v.dtypes.push_back(t);
      } catch (const Error& e) {
        d.fail(e.what());
      }
    }
    if (v.dtypes.empty()) n.at("dtypes").fail("a variant's dtypes list is empty (leave it out to serve every dtype)");
  }

  Names base{"dtype_bytes"};
  for (const auto& s : p.sizes) base.insert(s);
  for (const auto& s : kDeviceSymbols) base.insert(s);
  Names knob_names;
  for (const auto& [name, kn] : n.at("knobs").map_items()) {
    KnobSpec k;
    k.name = name;
    // yaml-cpp's Node::operator= writes into the tree, so never reassign a node: pick by value.
    if (kn.node.IsMap()) {
      kn.only_keys({"values", "doc"});
      k.doc = kn.str_or("doc", "");
    }
    const auto vals = kn.node.IsMap() ? kn.at("values") : kn;
    for (const auto& e : vals.seq()) k.values.push_back(e.integer());
    if (k.values.empty()) kn.fail("knob '" + name + "' has no values");
    if (base.count(name)) kn.fail("knob '" + name + "' shadows a size or device symbol");
    if (!knob_names.insert(name).second) kn.fail("knob '" + name + "' declared twice");
    v.knobs.push_back(std::move(k));
  }
  Names all = base;
  all.insert(knob_names.begin(), knob_names.end());
  if (n.has("constraints")) v.constraints = exprs(n.at("constraints"), all, "constraint");

  auto ln = n.at("launch");
  ln.only_keys({"grid", "block", "smem", "cluster"});
  v.launch.loc = n.loc();
  v.launch.kernel = n.at("kernel").str();
  v.launch.template_args = strings(n.get("template_args"));
  v.launch.args = strings(n.get("args"));
  // A constant reaches the kernels through its __constant__ symbol, not as an argument.
  if (v.launch.args.empty())
    for (const auto& a : p.args)
      if (a.role != Role::constant) v.launch.args.push_back(a.name);
  for (const auto& a : p.args) {
    if (a.role != Role::constant) continue;
    if (!mentions_identifier(v.source, a.name))
      n.fail("constant '" + a.name + "' is never named in " + v.source_path.filename().string() +
             " (declare `__constant__ " + a.dtype + " " + a.name + "[...]` at file scope)");
  }
  v.launch.grid = geometry(ln.at("grid"), all, "grid");
  v.launch.block = geometry(ln.at("block"), all, "block");
  v.launch.smem = ln.has("smem") ? ln.at("smem").expr() : Expr("0", ln.loc());
  v.launch.smem.check_names(all, "smem");
  if (ln.has("cluster")) v.launch.cluster = geometry(ln.at("cluster"), all, "cluster");
  // Errors point at the list that holds the bad name (the file's start when the list is implicit).
  Names targs = knob_names;
  targs.insert(p.sizes.begin(), p.sizes.end());
  parse_template_args(v.launch, targs, n.has("template_args") ? n.at("template_args").loc() : n.loc());
  if (n.has("tensor_maps")) {
    Names map_names = targs;  // knobs and sizes
    map_names.insert("dtype_bytes");
    for (const auto& [name, mn] : n.at("tensor_maps").map_items()) {
      v.tensor_maps.push_back(parse_tensor_map(name, mn, p, v.dtypes.empty() ? p.dtypes : v.dtypes, map_names));
      // A map the kernel never receives is a typo or a leftover, and would be encoded for nothing.
      if (std::find(v.launch.args.begin(), v.launch.args.end(), name) == v.launch.args.end())
        mn.fail("tensor map '" + name + "' is not among the variant's args (list it where the kernel takes it)");
    }
  }
  if (n.has("scratch"))
    for (const auto& sn : n.at("scratch").seq()) {
      v.scratch.push_back(parse_arg(sn, all, true));
      const auto& name = v.scratch.back().name;
      if (p.find_arg(name) || v.tensor_map(name) ||
          std::count_if(v.scratch.begin(), v.scratch.end(), [&](const ArgSpec& a) { return a.name == name; }) > 1)
        sn.at("name").fail("scratch buffer '" + name + "' shadows an argument, a tensor map or another scratch buffer");
    }
  if (n.has("defines")) {
    Names define_names = targs;  // knobs and sizes, as the template arguments
    define_names.insert("dtype_bytes");
    v.defines = parse_defines(n.at("defines"), define_names, v);
  }
  // The launches around the main one: a baseline launch's keys plus `when`, template arguments
  // over knobs and sizes like the main kernel's.
  for (const auto* key : {"before", "after"}) {
    if (!n.has(key)) continue;
    auto& list = std::string(key) == "before" ? v.before : v.after;
    for (const auto& l : n.at(key).seq()) {
      l.only_keys({"kernel", "template_args", "args", "grid", "block", "smem", "when"});
      list.push_back(parse_launch(l, all, true));
      parse_template_args(list.back(), targs, l.has("template_args") ? l.at("template_args").loc() : l.loc());
      if (l.has("when")) {
        list.back().when = l.at("when").expr();
        list.back().when.check_names(all, "when");
      }
    }
  }
  // The problem's arguments among each kernel's: all but the maps and the scratch buffers.
  auto check_launch_args = [&](const LaunchSpec& l, const SourceLoc& loc) {
    std::vector<std::string> plain_args;
    for (const auto& a : l.args) {
      if (const ArgSpec* c = p.find_arg(a); c && c->role == Role::constant)
        throw Error(loc, "'" + a + "' is a constant: kernel '" + l.kernel + "' reads it from its __constant__ symbol, not as an argument");
      if (!v.tensor_map(a) && !v.find_scratch(a)) plain_args.push_back(a);
    }
    check_args(plain_args, p, false, loc);
  };
  check_launch_args(v.launch, n.has("args") ? n.at("args").loc() : n.loc());
  const auto launches = v.all_launches();
  for (const auto* l : launches) {
    if (l == &v.launch) continue;
    check_launch_args(*l, l->loc);
    for (const auto& a : l->args)
      if (v.tensor_map(a))
        throw Error(l->loc, "tensor map '" + a + "' is passed to '" + l->kernel +
                                "': tensor maps go to the main kernel only (its `args`)");
  }
  for (const auto& sc : v.scratch)
    if (std::none_of(launches.begin(), launches.end(), [&](const LaunchSpec* l) {
          return std::find(l->args.begin(), l->args.end(), sc.name) != l->args.end();
        }))
      throw Error(sc.loc, "scratch buffer '" + sc.name + "' is passed to none of the variant's launches");
  // A knob that reaches nothing the kernel sees (a macro the source reads but soltune never
  // defines, say) would make every configuration compile to the same kernel: refuse it.
  {
    Names reached;
    auto add = [&](const Expr& e) {
      if (!e.empty()) reached.insert(e.variables().begin(), e.variables().end());
    };
    auto add_all = [&](const std::vector<Expr>& es) {
      for (const auto& e : es) add(e);
    };
    for (const auto* l : launches) {
      add_all(l->template_values);
      add_all(l->grid);
      add_all(l->block);
      add_all(l->cluster);
      add(l->smem);
      add(l->when);
    }
    add_all(v.constraints);
    for (const auto& a : v.scratch) add_all(a.shape);
    for (const auto& d : v.defines) add(d.value);
    for (const auto& m : v.tensor_maps) {
      add_all(m.dims);
      add_all(m.box);
      add_all(m.strides);
    }
    for (const auto& k : v.knobs)
      if (!reached.count(k.name))
        n.at("knobs").fail("knob '" + k.name +
                           "' reaches neither a template argument, a definition (defines:), the launch geometry, a "
                           "constraint, a scratch shape nor a tensor map: every value would compile to the same kernel");
  }
  if (n.has("model")) {
    auto m = n.at("model");
    m.only_keys({"bytes_in_flight_per_thread", "registers_per_thread", "compute"});
    if (m.has("compute")) {
      try {
        v.model_unit = parse_compute_unit(m.at("compute").str());
      } catch (const Error& e) {
        m.at("compute").fail(e.what());
      }
    }
    if (m.has("bytes_in_flight_per_thread")) {
      v.inflight_bytes = m.at("bytes_in_flight_per_thread").expr();
      v.inflight_bytes.check_names(all, "bytes_in_flight_per_thread");
    }
    if (m.has("registers_per_thread")) {
      v.registers = m.at("registers_per_thread").expr();
      v.registers.check_names(all, "registers_per_thread");
    }
  }
  if (n.has("presets"))
    for (const auto& [name, pn] : n.at("presets").map_items()) {
      Preset pr{name, {}};
      for (const auto& [key, kv] : pn.map_items())
        if (!knob_names.count(key)) kv.fail("preset '" + name + "': '" + key + "' is not a knob of this variant");
      for (const auto& k : v.knobs) {
        if (!pn.has(k.name)) pn.fail("preset '" + name + "' gives no value for knob '" + k.name + "'");
        pr.values.push_back(pn.at(k.name).expr());
        pr.values.back().check_names(base, "preset '" + name + "', knob '" + k.name + "'");
      }
      v.presets.push_back(std::move(pr));
    }
  if (n.has("notes")) {
    Names when_names = knob_names;  // what an exported kernel's configuration fixes: no device symbols
    when_names.insert(p.sizes.begin(), p.sizes.end());
    when_names.insert("dtype_bytes");
    for (const auto& nn : n.at("notes").seq()) {
      nn.only_keys({"when", "text"});
      VariantNote note{nn.at("when").expr(), nn.at("text").str()};
      note.when.check_names(when_names, "note's when");
      if (note.text.empty()) nn.fail("a note's text is empty");
      v.notes.push_back(std::move(note));
    }
  }
  return v;
}

}  // namespace

std::string_view role_name(Role r) {
  switch (r) {
    case Role::in: return "in";
    case Role::out: return "out";
    case Role::temp: return "temp";
    case Role::workspace: return "workspace";
    case Role::constant: return "constant";
  }
  return "?";
}

std::string InitSpec::str() const {
  std::ostringstream s;
  s << (kind == Kind::normal ? "normal(" : "uniform(") << a << ", " << b << ")";
  return s.str();
}

const VariantSpec& ProblemSpec::variant(const std::string& vname) const {
  std::string names;
  for (const auto& v : variants) {
    if (v.name == vname) return v;
    names += (names.empty() ? "" : ", ") + v.name;
  }
  throw Error("problem '" + name + "' has no variant '" + vname + "' (variants: " + names + ")");
}

const TensorMapSpec* VariantSpec::tensor_map(const std::string& mname) const {
  for (const auto& m : tensor_maps)
    if (m.name == mname) return &m;
  return nullptr;
}

const ArgSpec* VariantSpec::find_scratch(const std::string& sname) const {
  for (const auto& a : scratch)
    if (a.name == sname) return &a;
  return nullptr;
}

std::vector<const LaunchSpec*> VariantSpec::all_launches() const {
  std::vector<const LaunchSpec*> out;
  for (const auto& l : before) out.push_back(&l);
  out.push_back(&launch);
  for (const auto& l : after) out.push_back(&l);
  return out;
}

bool VariantSpec::serves(DType t) const { return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end(); }

ComputeUnit ProblemSpec::compute_unit(DType t) const {
  const auto it = compute.find(t);
  return it == compute.end() ? ComputeUnit::fp32 : it->second;
}

const ArgSpec* ProblemSpec::find_arg(const std::string& aname) const {
  for (const auto& a : args)
    if (a.name == aname) return &a;
  return nullptr;
}

std::vector<std::string> list_problems(const std::filesystem::path& templates_dir) {
  std::vector<std::string> out;
  if (!std::filesystem::is_directory(templates_dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(templates_dir))
    if (std::filesystem::exists(e.path() / "problem.yaml")) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

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
  n.only_keys({"name", "description", "sizes", "dtypes", "args", "flops", "bytes", "compute", "tolerance", "reference",
               "baseline"});
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
    sn.only_keys({"name", "values", "default", "doc"});
    p.sizes.push_back(sn.at("name").str());
    SizeOption o;
    o.doc = sn.str_or("doc", "");
    for (const auto& e : sn.at("values").seq()) o.values.push_back(e.integer());
    if (o.values.empty()) sn.at("values").fail("size '" + p.sizes.back() + "' lists no values");
    if (sn.has("default")) {
      o.def = sn.at("default").integer();
      if (std::find(o.values.begin(), o.values.end(), *o.def) == o.values.end())
        sn.at("default").fail("the default is not among size '" + p.sizes.back() + "''s values");
    }
    p.size_options[p.sizes.back()] = std::move(o);
  }
  Names sizes;
  for (const auto& s : p.sizes)
    if (!sizes.insert(s).second) n.at("sizes").fail("size '" + s + "' declared twice");
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
    if (!arg_names.insert(p.args.back().name).second) a.fail("argument '" + p.args.back().name + "' declared twice");
    auto& f = p.args.back().file;
    if (!f.empty()) {
      if (f.is_relative()) f = dir / f;
      if (!std::filesystem::is_regular_file(f))
        a.at("file").fail("no file '" + f.string() + "' (a relative path is from the problem's folder)");
    }
  }
  if (std::none_of(p.args.begin(), p.args.end(), [](const ArgSpec& a) { return a.role == Role::out && a.is_buffer; }))
    n.at("args").fail("a problem needs at least one buffer with role out");
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
  for (const auto& [dt, tn] : n.at("tolerance").map_items()) {
    tn.only_keys({"atol", "rtol", "rel_l2", "min_match", "mtol"});
    DType t;
    try {
      t = parse_dtype(dt);
    } catch (const Error& e) {
      tn.fail(e.what());
    }
    p.tolerance[t] = Tolerance{tn.at("atol").number(), tn.at("rtol").number(), tn.at("rel_l2").number(),
                               tn.number_or("min_match", 1.0)};
    if (!(p.tolerance[t].min_match > 0 && p.tolerance[t].min_match <= 1))
      tn.at("min_match").fail("min_match must lie in (0, 1]");
    if (tn.has("mtol")) {
      if (std::none_of(p.args.begin(), p.args.end(), [](const ArgSpec& a) { return a.magnitude; }))
        tn.at("mtol").fail("mtol scales the magnitude of an output, and no output declares 'magnitude: true'");
      p.tolerance[t].mtol = tn.at("mtol").expr();
      p.tolerance[t].mtol.check_names(size_dt, "mtol");
    }
  }
  for (auto t : p.dtypes)
    if (!p.tolerance.count(t)) n.at("tolerance").fail("no tolerance for dtype " + std::string(dtype_name(t)));
  for (const auto& a : p.args)
    for (auto t : p.dtypes)
      if (a.lanes > 1 && a.item_cpp(t).empty())
        throw Error(a.loc, "buffer '" + a.name + "': CUDA has no vector of " + std::to_string(a.lanes) + " " +
                               std::string(dtype_name(a.resolve_dtype(t))) + " elements (dtype " + std::string(dtype_name(t)) + ")");

  Names geo = size_dt;
  for (const auto& s : kDeviceSymbols) geo.insert(s);
  {
    auto r = n.at("reference");
    r.only_keys({"source", "kernel", "template_args", "args", "grid", "block", "smem"});
    p.reference_source = read_text(dir / r.at("source").str(), r.loc());
    p.reference = parse_launch(r, geo, false);
    p.reference.args = strings(r.get("args"));
    if (p.reference.args.empty())
      for (const auto& a : p.args) p.reference.args.push_back(a.name);
    parse_template_args(p.reference, sizes, r.has("template_args") ? r.at("template_args").loc() : r.loc(), "sizes");
    check_reference_args(p, r.has("args") ? r.at("args").loc() : r.loc());
  }
  {
    auto b = n.at("baseline");
    b.only_keys({"description", "source", "temps", "launches"});
    p.baseline_description = b.str_or("description", "");
    p.baseline_source = read_text(dir / b.at("source").str(), b.loc());
    if (b.has("temps"))
      for (const auto& t : b.at("temps").seq()) p.baseline_temps.push_back(parse_arg(t, sizes, true));
    for (const auto& l : b.at("launches").seq()) {
      l.only_keys({"kernel", "template_args", "args", "grid", "block", "smem"});
      p.baseline.push_back(parse_launch(l, geo, true));
      parse_template_args(p.baseline.back(), sizes, l.has("template_args") ? l.at("template_args").loc() : l.loc(), "sizes");
      check_args(p.baseline.back().args, p, true, l.loc());
    }
    if (p.baseline.empty()) b.at("launches").fail("the baseline needs at least one launch");
  }

  std::vector<std::filesystem::path> variant_files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".yaml" && e.path().filename() != "problem.yaml") variant_files.push_back(e.path());
  std::sort(variant_files.begin(), variant_files.end());
  for (const auto& f : variant_files) p.variants.push_back(parse_variant(f, p));
  if (p.variants.empty()) throw Error(SourceLoc{dir.string()}, "problem has no variant (<variant>.yaml + .cu)");
  return p;
}

std::string name_expression(const LaunchSpec& l, DType t, const Bindings& b) {
  std::string s = l.kernel;
  if (l.template_args.empty()) return s;
  if (l.template_values.size() != l.template_args.size())
    throw Error(l.loc, "kernel '" + l.kernel + "': its template arguments were never parsed");
  s += "<";
  for (size_t i = 0; i < l.template_args.size(); ++i) {
    if (i) s += ", ";
    s += l.template_args[i] == "T" ? std::string(dtype_cpp(t)) : std::to_string(l.template_values[i].eval_int(b));
  }
  return s + ">";
}

std::vector<std::pair<std::string, std::string>> define_values(const VariantSpec& v, DType t, const Bindings& given) {
  std::vector<std::pair<std::string, std::string>> out;
  if (v.defines.empty()) return out;
  Bindings b = given;  // a specialization's bindings hold knobs and sizes only
  b.emplace("dtype_bytes", static_cast<double>(dtype_bytes(t)));
  for (const auto& d : v.defines) {
    if (d.type) {
      out.emplace_back(d.name, std::string(dtype_cpp(t)));
      continue;
    }
    const double x = d.value.eval(b);
    if (!std::isfinite(x)) throw Error(d.loc, "define '" + d.name + "' is " + std::to_string(x) + " here");
    std::ostringstream s;
    if (x == std::trunc(x) && std::fabs(x) < 9.2e18)
      s << static_cast<long long>(x);
    else
      s << std::setprecision(17) << x;
    out.emplace_back(d.name, s.str());
  }
  return out;
}

std::vector<std::string> define_options(const VariantSpec& v, DType t, const Bindings& b) {
  std::vector<std::string> out;
  for (const auto& [name, value] : define_values(v, t, b)) out.push_back("-D" + name + "=" + value);
  return out;
}

std::vector<std::string> plan_name_expressions(const VariantSpec& v, DType t, const Bindings& b) {
  std::vector<std::string> out{name_expression(v.launch, t, b)};
  for (const auto* l : v.all_launches())
    if (auto n = name_expression(*l, t, b); std::find(out.begin(), out.end(), n) == out.end()) out.push_back(std::move(n));
  return out;
}

Bindings specialization_bindings(const VariantSpec& v, const std::vector<int64_t>& knob_values,
                                 const std::vector<std::pair<std::string, int64_t>>& sizes) {
  Bindings b;
  for (const auto& [name, value] : sizes) b[name] = static_cast<double>(value);
  for (size_t k = 0; k < v.knobs.size() && k < knob_values.size(); ++k) b[v.knobs[k].name] = static_cast<double>(knob_values[k]);
  return b;
}

std::vector<std::string> notes_for(const VariantSpec& v, DType dtype, const std::vector<int64_t>& knob_values,
                                   const std::vector<std::pair<std::string, int64_t>>& sizes) {
  auto b = specialization_bindings(v, knob_values, sizes);
  b["dtype_bytes"] = dtype_bytes(dtype);
  std::vector<std::string> out;
  for (const auto& n : v.notes)
    if (n.when.eval_bool(b)) out.push_back(n.text);
  return out;
}

std::vector<Expr> size_template_args(const VariantSpec& v, const ProblemSpec& p) {
  std::vector<Expr> out;
  for (const auto* l : v.all_launches())
    for (const auto& e : l->template_values)
      if (std::any_of(e.variables().begin(), e.variables().end(),
                      [&](const std::string& n) { return std::find(p.sizes.begin(), p.sizes.end(), n) != p.sizes.end(); }))
        out.push_back(e);
  for (const auto& d : v.defines)
    if (std::any_of(d.value.variables().begin(), d.value.variables().end(),
                    [&](const std::string& n) { return std::find(p.sizes.begin(), p.sizes.end(), n) != p.sizes.end(); }))
      out.push_back(d.value);
  return out;
}

}  // namespace soltune
