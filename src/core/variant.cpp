// Reading <variant>.yaml (parse_variant, with its definitions and launches), and what a variant's
// configuration makes of it: name expressions, -D definitions, specialization bindings, notes.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <regex>
#include <sstream>

#include "core/problem_parse.hpp"
#include "core/tensor_map.hpp"

namespace soltune {
namespace parse {

// `defines:` as a mapping (macro: expression, or T for the element type) or as a list of knob and
// size names, each defined as itself. A macro the source never names would leave every value of
// its knob compiling to the same kernel, as would one the compiler defines: both are refused.
std::vector<DefineSpec> parse_defines(const yaml::Node& dn, const Names& names, const std::string& source,
                                      const std::string& source_name) {
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
    if (!mentions_identifier(source, name))
      vn.fail("define '" + name + "' is never named in " + source_name +
              ": every value would compile to the same kernel");
    out.push_back(std::move(d));
  }
  if (out.empty()) dn.fail("`defines` is empty (leave it out where the kernel reads no macros)");
  return out;
}

// `let:` names derived quantities over the knobs, sizes and device symbols (and the lets before
// them), e.g. a kernel's shared memory, that constraints and the launch both need: every expression
// of the variant may name them, and reads them spelled out.
std::shared_ptr<const yaml::Lets> parse_lets(const yaml::Node& ln, const Names& all) {
  auto lets = std::make_shared<yaml::Lets>();
  static const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_]*)");
  for (auto& [name, en] : ln.map_items()) {
    if (!std::regex_match(name, identifier)) en.fail("let '" + name + "' is not a name (letters, digits and _)");
    if (all.count(name)) en.fail("let '" + name + "' shadows a knob, size or device symbol");
    en.lets = lets;  // the lets before this one
    const Expr e = en.expr();
    e.check_names(all, "let '" + name + "'");
    lets->emplace_back(name, e.text());  // a name given twice: load_file refused the duplicate key
  }
  return lets;
}

// The text of a note several variants show (`note: NAME`), from common/notes.yaml beside the
// problems' folders: one text, however many variants show it.
std::string shared_note(const std::filesystem::path& yaml_path, const yaml::Node& name) {
  const auto file = yaml_path.parent_path().parent_path() / "common" / "notes.yaml";
  if (!std::filesystem::exists(file)) name.fail("note '" + name.str() + "': no " + file.string() + " to take it from");
  const auto notes = yaml::load_file(file);
  std::string known;
  for (const auto& [key, text] : notes.map_items()) {
    if (key == name.str()) return text.str();
    known += (known.empty() ? "" : ", ") + key;
  }
  name.fail("unknown note '" + name.str() + "' (" + file.string() + " has: " + known + ")");
}

VariantSpec parse_variant(const std::filesystem::path& yaml_path, const ProblemSpec& p) {
  auto n = yaml::load_file(yaml_path);
  n.only_keys({"description", "source", "kernel", "template_args", "args", "knobs", "let", "constraints", "launch", "model",
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
  if (n.has("let")) n.lets = parse_lets(n.at("let"), all);
  // A constraint is an expression, or {expr, why}: the reason, said where it excludes a shape.
  if (n.has("constraints"))
    for (const auto& c : n.at("constraints").seq()) {
      const bool stated = c.node.IsMap();
      if (stated) c.only_keys({"expr", "why"});
      v.constraints.push_back(stated ? c.at("expr").expr() : c.expr());
      v.constraints.back().check_names(all, "constraint");
      v.constraint_why.push_back(stated ? c.at("why").str() : "");
    }

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
  if (n.has("scratch"))
    for (const auto& sn : n.at("scratch").seq()) {
      v.scratch.push_back(parse_arg(sn, all, true));
      const auto& name = v.scratch.back().name;
      if (p.find_arg(name) ||
          std::count_if(v.scratch.begin(), v.scratch.end(), [&](const ArgSpec& a) { return a.name == name; }) > 1)
        sn.at("name").fail("scratch buffer '" + name + "' shadows an argument or another scratch buffer");
    }
  if (n.has("tensor_maps")) {
    Names map_names = targs;  // knobs and sizes
    map_names.insert("dtype_bytes");
    for (const auto& [name, mn] : n.at("tensor_maps").map_items()) {
      if (v.find_scratch(name)) mn.fail("tensor map '" + name + "' has the name of a scratch buffer: a kernel argument's name must say which it is");
      v.tensor_maps.push_back(parse_tensor_map(name, mn, p, v.scratch, v.dtypes.empty() ? p.dtypes : v.dtypes, map_names));
      // A map the kernel never receives is a typo or a leftover, and would be encoded for nothing.
      if (std::find(v.launch.args.begin(), v.launch.args.end(), name) == v.launch.args.end())
        mn.fail("tensor map '" + name + "' is not among the variant's args (list it where the kernel takes it)");
    }
  }
  if (n.has("defines")) {
    Names define_names = targs;  // knobs and sizes, as the template arguments
    define_names.insert("dtype_bytes");
    v.defines = parse_defines(n.at("defines"), define_names, v.source, v.source_path.filename().string());
  }
  // The launches around the main one: a baseline launch's keys plus `when`, template arguments
  // over knobs and sizes like the main kernel's.
  for (const auto* key : {"before", "after"}) {
    if (!n.has(key)) continue;
    auto& list = std::string(key) == "before" ? v.before : v.after;
    for (const auto& l : n.at(key).seq()) {
      l.only_keys({"kernel", "template_args", "args", "grid", "block", "smem", "when", "programmatic"});
      list.push_back(parse_launch(l, all, true));
      parse_template_args(list.back(), targs, l.has("template_args") ? l.at("template_args").loc() : l.loc());
      if (l.has("when")) {
        list.back().when = l.at("when").expr();
        list.back().when.check_names(all, "when");
      }
      if (l.has("programmatic")) {
        // The plan's first launch waits for whatever ran before it on the stream, always.
        if (std::string(key) == "before")
          throw Error(l.at("programmatic").loc(), "'programmatic' is for the launches after the main kernel (a launch that "
                                                  "overlaps the one before it in the plan)");
        list.back().programmatic = l.at("programmatic").boolean();
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
      nn.only_keys({"when", "text", "note"});
      if (nn.has("text") == nn.has("note")) nn.fail("a note takes its words from `text:` or names one of common/notes.yaml with `note:`, one of the two");
      VariantNote note{nn.at("when").expr(),
                       nn.has("text") ? nn.at("text").str() : shared_note(yaml_path, nn.at("note"))};
      note.when.check_names(when_names, "note's when");
      if (note.text.empty()) nn.fail("a note's text is empty");
      v.notes.push_back(std::move(note));
    }
  }
  return v;
}

}  // namespace parse

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
  return define_values(v.defines, t, given);
}

std::vector<std::pair<std::string, std::string>> define_values(const std::vector<DefineSpec>& defines, DType t,
                                                               const Bindings& given) {
  std::vector<std::pair<std::string, std::string>> out;
  if (defines.empty()) return out;
  Bindings b = given;  // a specialization's bindings hold knobs and sizes only
  b.emplace("dtype_bytes", static_cast<double>(dtype_bytes(t)));
  for (const auto& d : defines) {
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
  return define_options(v.defines, t, b);
}

std::vector<std::string> define_options(const std::vector<DefineSpec>& defines, DType t, const Bindings& b) {
  std::vector<std::string> out;
  for (const auto& [name, value] : define_values(defines, t, b)) out.push_back("-D" + name + "=" + value);
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
