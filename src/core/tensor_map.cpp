#include "core/tensor_map.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <regex>
#include <string_view>

#include "core/problem_parse.hpp"

namespace soltune {
namespace {

using Names = std::set<std::string, std::less<>>;

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// a * b, held at the int64 limit where it would overflow: past every limit a rule checks, so the
// rule reports it rather than a wrapped value passing.
int64_t times(int64_t a, int64_t b) {
  if (a > 0 && b > 0 && a > std::numeric_limits<int64_t>::max() / b) return std::numeric_limits<int64_t>::max();
  return a * b;
}

int64_t bytes_of(const std::string& dtype, const Bindings& b, const SourceLoc& loc) {
  if (dtype != "T") return dtype_bytes(parse_dtype(dtype));
  const auto it = b.find("dtype_bytes");
  if (it == b.end()) throw Error(loc, "tensor map: no value for dtype_bytes");
  return static_cast<int64_t>(it->second);
}

// Sets `out` to the one of `values` whose name (by `name`, "32B") `key` gives, where n has `key`;
// any other word fails there, listing the names ("expected swizzle none, 32B, 64B or 128B").
template <typename E>
void parse_choice(const yaml::Node& n, const char* key, std::initializer_list<E> values, std::string_view (*name)(E),
                  const std::string& what, E& out) {
  if (!n.has(key)) return;
  const auto s = n.at(key).str();
  std::string expected;
  size_t i = 0;
  for (const E v : values) {
    if (name(v) == s) {
      out = v;
      return;
    }
    expected += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + std::string(name(v));
    ++i;
  }
  n.at(key).fail(what + ": expected " + key + " " + expected + ", got '" + s + "'");
}

}  // namespace

std::string_view swizzle_name(TensorMapSpec::Swizzle s) {
  switch (s) {
    case TensorMapSpec::Swizzle::none: return "none";
    case TensorMapSpec::Swizzle::b32: return "32B";
    case TensorMapSpec::Swizzle::b64: return "64B";
    case TensorMapSpec::Swizzle::b128: return "128B";
  }
  return "?";
}

int swizzle_span(TensorMapSpec::Swizzle s) {
  switch (s) {
    case TensorMapSpec::Swizzle::none: return 0;
    case TensorMapSpec::Swizzle::b32: return 32;
    case TensorMapSpec::Swizzle::b64: return 64;
    case TensorMapSpec::Swizzle::b128: return 128;
  }
  return 0;
}

std::string_view l2_promotion_name(TensorMapSpec::L2 l) {
  switch (l) {
    case TensorMapSpec::L2::none: return "none";
    case TensorMapSpec::L2::b64: return "64B";
    case TensorMapSpec::L2::b128: return "128B";
    case TensorMapSpec::L2::b256: return "256B";
  }
  return "?";
}

std::string_view oob_name(TensorMapSpec::Oob o) { return o == TensorMapSpec::Oob::nan ? "nan" : "zero"; }

std::string TensorMapParams::str() const {
  std::string s = std::to_string(elem_bytes) + "-byte elements, dims " + list(dims) + ", strides " + list(strides) +
                  " B, box " + list(box);
  if (spec)
    s += ", swizzle " + std::string(swizzle_name(spec->swizzle)) + ", L2 promotion " +
         std::string(l2_promotion_name(spec->l2)) + ", oob " + std::string(oob_name(spec->oob));
  return s;
}

TensorMapSpec parse_tensor_map(const std::string& name, const yaml::Node& n, const ProblemSpec& p,
                               const std::vector<ArgSpec>& scratch, const std::vector<DType>& dtypes, const Names& names) {
  n.only_keys({"buffer", "dims", "box", "strides", "elem", "swizzle", "l2_promotion", "oob", "interleave"});
  TensorMapSpec m;
  m.name = name;
  m.loc = n.loc();
  const std::string what = "tensor map '" + name + "'";
  static const std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
  if (!std::regex_match(name, ident)) n.fail(what + ": a map's name must be an identifier (it names a kernel argument)");
  if (p.find_arg(name))
    n.fail(what + " has the name of an argument of problem " + p.name + ": a kernel argument's name must say which it is");

  m.buffer = n.at("buffer").str();
  const ArgSpec* arg = p.find_arg(m.buffer);
  const ArgSpec* buf = arg;
  for (const auto& s : scratch)
    if (!buf && s.name == m.buffer) buf = &s;
  if (!buf || !buf->is_buffer) {
    std::string buffers;
    for (const auto& a : p.args)
      if (a.is_buffer) buffers += (buffers.empty() ? "" : ", ") + a.name;
    for (const auto& s : scratch) buffers += (buffers.empty() ? "" : ", ") + s.name + " (scratch)";
    n.at("buffer").fail(what + ": '" + m.buffer + "' is not a buffer of problem " + p.name + " or a scratch buffer (the buffers: " +
                        buffers + ")");
  }
  m.buffer_dtype = buf->dtype;
  m.buffer_shape = buf->shape;
  // A scratch buffer's map is read by the main kernel (a launch before it wrote the buffer); only
  // the problem's outputs are stores' targets.
  m.written = arg && arg->role != Role::in;

  m.dims = parse::exprs(n.at("dims"), names, what + " dims");
  const auto rank = m.dims.size();
  if (rank < 1 || rank > static_cast<size_t>(kTensorMapMaxRank))
    n.at("dims").fail(what + " has " + std::to_string(rank) + " dims; TMA takes 1 to 5");
  m.box = parse::exprs(n.at("box"), names, what + " box");
  if (m.box.size() != rank)
    n.at("box").fail(what + ": box has " + std::to_string(m.box.size()) + " entries for " + std::to_string(rank) +
                     " dims (one per dimension, innermost first)");
  if (n.has("strides")) {
    m.strides = parse::exprs(n.at("strides"), names, what + " strides");
    if (m.strides.size() != rank - 1)
      n.at("strides").fail(what + ": strides has " + std::to_string(m.strides.size()) + " entries; a map of " +
                           std::to_string(rank) + " dims takes " + std::to_string(rank - 1) +
                           " (in elements, for dims 1 and up: the innermost is contiguous)");
  }

  m.elem = m.buffer_dtype;
  if (n.has("elem")) {
    m.elem = n.at("elem").str();
    if (m.elem != "T") {
      try {
        parse_dtype(m.elem);
      } catch (const Error& e) {
        n.at("elem").fail(what + ": elem: " + e.what() + ", or T for the task's dtype");
      }
    }
  }
  using Swizzle = TensorMapSpec::Swizzle;
  using L2 = TensorMapSpec::L2;
  using Oob = TensorMapSpec::Oob;
  parse_choice(n, "swizzle", {Swizzle::none, Swizzle::b32, Swizzle::b64, Swizzle::b128}, swizzle_name, what, m.swizzle);
  parse_choice(n, "l2_promotion", {L2::none, L2::b64, L2::b128, L2::b256}, l2_promotion_name, what, m.l2);
  parse_choice(n, "oob", {Oob::zero, Oob::nan}, oob_name, what, m.oob);
  // The driver fills NaN only for floating-point element types.
  if (m.oob == Oob::nan)
    for (const DType t : dtypes)
      if (!dtype_is_float(m.elem_dtype(t)))
        n.at("oob").fail(what + ": oob nan needs a floating-point element type, and its elements are " +
                         std::string(dtype_name(m.elem_dtype(t))) + " for dtype " + std::string(dtype_name(t)));
  if (n.has("interleave") && n.at("interleave").str() != "none")
    n.at("interleave").fail(what + ": only interleave none is supported, got '" + n.at("interleave").str() +
                            "' (the interleaved layouts are for NC/8HWC8-style tensors of rank 3 and up)");
  return m;
}

TensorMapParams tensor_map_params(const TensorMapSpec& m, const Bindings& b) {
  TensorMapParams r;
  r.spec = &m;
  r.elem_bytes = static_cast<int>(bytes_of(m.elem, b, m.loc));
  for (const auto& e : m.dims) r.dims.push_back(e.eval_int(b));
  for (const auto& e : m.box) r.box.push_back(e.eval_int(b));
  int64_t row = r.elem_bytes;  // row-major by default: each stride the extent of the dims inside it
  for (size_t i = 1; i < r.dims.size(); ++i) {
    row = times(row, r.dims[i - 1]);
    r.strides.push_back(m.strides.empty() ? row : times(m.strides[i - 1].eval_int(b), r.elem_bytes));
  }
  r.buffer_bytes = bytes_of(m.buffer_dtype, b, m.loc);
  for (const auto& e : m.buffer_shape) r.buffer_bytes = times(r.buffer_bytes, e.eval_int(b));
  return r;
}

std::string tensor_map_rule_broken(const TensorMapParams& p) {
  const int64_t e = p.elem_bytes;
  for (size_t i = 0; i < p.dims.size(); ++i)
    if (p.dims[i] < 1 || p.dims[i] > kTensorMapMaxDim)
      return "dimension " + std::to_string(i) + " is " + std::to_string(p.dims[i]) + " elements; TMA takes 1 to 2^32";
  for (size_t i = 0; i < p.strides.size(); ++i) {
    const std::string which = "the stride of dimension " + std::to_string(i + 1) + " is " + std::to_string(p.strides[i]) + " bytes";
    if (p.strides[i] <= 0) return which + "; strides must be positive";
    if (p.strides[i] % 16 != 0) return which + ", not a multiple of 16: TMA needs every row to start 16-byte aligned";
    if (p.strides[i] >= kTensorMapStrideLimit) return which + "; TMA takes strides below 2^40 bytes";
  }
  for (size_t i = 0; i < p.box.size(); ++i)
    if (p.box[i] < 1 || p.box[i] > kTensorMapMaxBox)
      return "box dimension " + std::to_string(i) + " is " + std::to_string(p.box[i]) + " elements; TMA takes 1 to 256";
  // TMA moves whole 16-byte chunks along the innermost dimension, within one swizzle span.
  const int64_t inner = p.box[0] * e;
  const std::string inner_is = "the inner box dimension is " + std::to_string(inner) + " bytes (" +
                               std::to_string(p.box[0]) + " elements of " + std::to_string(e) + ")";
  if (inner % 16 != 0) return inner_is + ", not a multiple of 16";
  if (const int span = p.spec ? swizzle_span(p.spec->swizzle) : 0; span > 0 && inner > span)
    return inner_is + ", wider than the " + std::to_string(span) + "-byte span of swizzle " +
           std::string(swizzle_name(p.spec->swizzle));
  // Every element the map describes must lie in the buffer: past it are other data or guard zones.
  int64_t end = times(p.dims[0], e);
  for (size_t i = 1; i < p.dims.size(); ++i) {
    const int64_t step = times(p.dims[i] - 1, p.strides[i - 1]);
    end = end > std::numeric_limits<int64_t>::max() - step ? std::numeric_limits<int64_t>::max() : end + step;
  }
  if (end > p.buffer_bytes)
    return "it reaches " + std::to_string(end) + " bytes into buffer '" + (p.spec ? p.spec->buffer : std::string("?")) +
           "', which holds " + std::to_string(p.buffer_bytes);
  // A TMA store writes whole 16-byte units of the innermost dimension, its bound notwithstanding: on
  // the H200 a store through a 1-D map of 1000003 bf16 elements wrote the 10 bytes past the end.
  if (p.spec && p.spec->written && times(p.dims[0], e) % 16 != 0)
    return "its innermost dimension is " + std::to_string(times(p.dims[0], e)) + " bytes, not a multiple of 16: a TMA "
           "store through it writes whole 16-byte units, past the end of '" + p.spec->buffer + "'";
  return "";
}

std::string why_tensor_maps_illegal(const VariantSpec& v, const Bindings& b) {
  if (v.tensor_maps.empty()) return "";
  // Tensor map objects exist on compute capability 9.0 and later only (cuda.h).
  if (const auto cc = b.find("cc"); cc != b.end() && cc->second < 90)
    return "tensor maps need compute capability 9.0 or newer, and this device's is " +
           std::to_string(static_cast<int>(cc->second) / 10) + "." + std::to_string(static_cast<int>(cc->second) % 10);
  for (const auto& m : v.tensor_maps) {
    const std::string which = "tensor map '" + m.name + "' over '" + m.buffer + "': ";
    try {
      const auto params = tensor_map_params(m, b);
      if (auto why = tensor_map_rule_broken(params); !why.empty()) return which + why + " (" + params.str() + ")";
    } catch (const Error& e) {
      return which + e.what();
    }
  }
  return "";
}

}  // namespace soltune
