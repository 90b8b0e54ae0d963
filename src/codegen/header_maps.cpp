#include "codegen/header_maps.hpp"

#include <algorithm>

#include "codegen/header_parts.hpp"
#include "core/tensor_map.hpp"

namespace soltune {
namespace {

std::string data_type(DType t) {
  switch (t) {
    case DType::f16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case DType::bf16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case DType::f32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    case DType::f64: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
    case DType::i32: return "CU_TENSOR_MAP_DATA_TYPE_INT32";
    case DType::i64: return "CU_TENSOR_MAP_DATA_TYPE_INT64";
    // TMA moves bytes: the signed, bool and 8-bit float types travel as the unsigned ones of their width
    case DType::i8: case DType::u8: case DType::boolean: case DType::e4m3: case DType::e5m2:
      return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
    case DType::i16: case DType::u16: return "CU_TENSOR_MAP_DATA_TYPE_UINT16";
    case DType::u32: return "CU_TENSOR_MAP_DATA_TYPE_UINT32";
    case DType::u64: return "CU_TENSOR_MAP_DATA_TYPE_UINT64";
  }
  return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
}

// The driver's enumerators spell a size as the YAML does (swizzle_name): CU_TENSOR_MAP_SWIZZLE_32B.
std::string swizzle(TensorMapSpec::Swizzle s) {
  if (s == TensorMapSpec::Swizzle::none) return "CU_TENSOR_MAP_SWIZZLE_NONE";
  return "CU_TENSOR_MAP_SWIZZLE_" + std::string(swizzle_name(s));
}

std::string l2_promotion(TensorMapSpec::L2 l) {
  if (l == TensorMapSpec::L2::none) return "CU_TENSOR_MAP_L2_PROMOTION_NONE";
  return "CU_TENSOR_MAP_L2_PROMOTION_L2_" + std::string(l2_promotion_name(l));
}

// "{(k), (m)}": expressions over doubles, as the plan evaluates everything.
std::string doubles(const std::vector<Expr>& es) {
  std::string s = "{";
  for (size_t i = 0; i < es.size(); ++i) s += (i ? ", (" : "(") + es[i].text() + ")";
  return s + "}";
}

DType resolve(const std::string& dtype, DType task) { return dtype == "T" ? task : parse_dtype(dtype); }

}  // namespace

std::string tensor_map_helpers() {
  return "namespace detail {\n"
         "// cuTensorMapEncodeTiled's arguments for one call, less the address.\n"
         "struct TensorMapShape {\n"
         "  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;\n"
         "  cuuint32_t rank = 0;\n"
         "  cuuint64_t dims[5] = {}, strides[4] = {};  // strides in bytes\n"
         "  cuuint32_t box[5] = {};\n"
         "  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;\n"
         "  CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;\n"
         "  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;\n"
         "};\n"
         "// Fills m for one call and checks what soltune checked while tuning: cuTensorMapEncodeTiled's rules\n"
         "// (dims 1 to 2^32, strides multiples of 16 bytes below 2^40, box 1 to 256 with a multiple of 16 bytes\n"
         "// innermost, within the swizzle's span) and that the map lies inside its buffer. strides: in elements\n"
         "// (null: row-major over dims); swizzle_span: bytes, 0 without a swizzle.\n"
         "inline bool tensor_map_shape(TensorMapShape& m, CUtensorMapDataType dtype, double elem_bytes, int rank,\n"
         "                             const double* dims, const double* strides, const double* box, double swizzle_span,\n"
         "                             CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob,\n"
         "                             double buffer_bytes) {\n"
         "  m.dtype = dtype;\n  m.rank = static_cast<cuuint32_t>(rank);\n  m.swizzle = swizzle;\n  m.l2 = l2;\n  m.oob = oob;\n"
         "  double row = elem_bytes, end = 0;\n"
         "  for (int i = 0; i < rank; ++i) {\n"
         "    if (!(dims[i] >= 1 && dims[i] <= 4294967296.0 && dims[i] == std::floor(dims[i]))) return false;\n"
         "    if (!(box[i] >= 1 && box[i] <= 256 && box[i] == std::floor(box[i]))) return false;\n"
         "    m.dims[i] = static_cast<cuuint64_t>(dims[i]);\n"
         "    m.box[i] = static_cast<cuuint32_t>(box[i]);\n"
         "    if (i == 0) {\n      end = dims[0] * elem_bytes;\n      continue;\n    }\n"
         "    row *= dims[i - 1];\n"
         "    const double s = strides ? strides[i - 1] * elem_bytes : row;\n"
         "    if (!(s > 0 && s < 1099511627776.0 && s == std::floor(s) && std::fmod(s, 16.0) == 0)) return false;\n"
         "    m.strides[i - 1] = static_cast<cuuint64_t>(s);\n"
         "    end += (dims[i] - 1) * s;\n"
         "  }\n"
         "  const double inner = box[0] * elem_bytes;\n"
         "  return std::fmod(inner, 16.0) == 0 && (swizzle_span == 0 || inner <= swizzle_span) && end <= buffer_bytes;\n"
         "}\n"
         "// cuTensorMapEncodeTiled from the driver, as the runtime hands it out (no -lcuda): null where the\n"
         "// driver has none. Looked up once per process.\n"
         "inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {\n"
         "  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {\n"
         "    void* f = nullptr;\n"
         "    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;\n"
         "#if CUDART_VERSION >= 12050\n"
         "    const cudaError_t e = cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", &f, 12000, cudaEnableDefault, &q);\n"
         "#else\n"
         "    const cudaError_t e = cudaGetDriverEntryPoint(\"cuTensorMapEncodeTiled\", &f, cudaEnableDefault, &q);\n"
         "#endif\n"
         "    if (e != cudaSuccess) (void)cudaGetLastError();  // not the caller's next launch's error\n"
         "    return e == cudaSuccess && q == cudaDriverEntryPointSuccess ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f)\n"
         "                                                                : nullptr;\n"
         "  }();\n"
         "  return fn;\n"
         "}\n"
         "// An encoded map as a kernel argument. The kernels declare their own 128-byte type for it (cuda.h does\n"
         "// not compile under NVRTC); this converts to any such type. Its own alignment is a plain 8 bytes: a\n"
         "// launch copies the bytes of its arguments, and only the driver's copy needs 64.\n"
         "struct TensorMapArg {\n"
         "  unsigned long long bytes[16];\n"
         "  template <typename T>\n"
         "  operator T() const {\n"
         "    static_assert(sizeof(T) == sizeof(bytes), \"a tensor map kernel parameter is 128 bytes\");\n"
         "    T t;\n    std::memcpy(static_cast<void*>(&t), bytes, sizeof bytes);\n    return t;\n"
         "  }\n"
         "};\n"
         "inline bool encode_tensor_map(TensorMapArg& out, const TensorMapShape& m, const void* address) {\n"
         "  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();\n"
         "  if (!encode) return false;\n"
         "  const cuuint32_t ones[5] = {1, 1, 1, 1, 1};  // element strides\n"
         "  CUtensorMap map;\n"
         "  if (encode(&map, m.dtype, m.rank, const_cast<void*>(address), m.dims, m.strides, m.box, ones,\n"
         "             CU_TENSOR_MAP_INTERLEAVE_NONE, m.swizzle, m.l2, m.oob) != CUDA_SUCCESS)\n"
         "    return false;\n"
         "  static_assert(sizeof map == sizeof out.bytes, \"CUtensorMap is 128 bytes\");\n"
         "  std::memcpy(out.bytes, &map, sizeof map);\n"
         "  return true;\n"
         "}\n"
         "}  // namespace detail\n";
}

size_t max_tensor_maps(const std::vector<const Specialization*>& specs) {
  size_t n = 0;
  for (const auto* s : specs) n = std::max(n, s->variant->tensor_maps.size());
  return n;
}

std::string tensor_map_plan(DType dt, const VariantSpec& v) {
  if (v.tensor_maps.empty()) return "";
  std::string h = "  p.ok = p.ok && cc >= 90;  // tensor maps exist from compute capability 9.0\n";
  for (size_t i = 0; i < v.tensor_maps.size(); ++i) {
    const auto& m = v.tensor_maps[i];
    std::string buffer_bytes = std::to_string(dtype_bytes(resolve(m.buffer_dtype, dt)));
    for (const auto& e : m.buffer_shape) buffer_bytes += " * static_cast<double>(" + e.text() + ")";
    const auto elem = m.elem_dtype(dt);
    h += "  {  // tensor map '" + m.name + "' over " + m.buffer + "\n"
         "    const double map_dims_[] = " + doubles(m.dims) + ", map_box_[] = " + doubles(m.box) +
         (m.strides.empty() ? "" : ", map_strides_[] = " + doubles(m.strides)) + ";\n"
         "    p.ok = p.ok && detail::tensor_map_shape(p.maps[" + std::to_string(i) + "], " + data_type(elem) + ", " +
         std::to_string(dtype_bytes(elem)) + ", " + std::to_string(m.dims.size()) + ", map_dims_, " +
         (m.strides.empty() ? "nullptr" : "map_strides_") + ", map_box_, " + std::to_string(swizzle_span(m.swizzle)) +
         ", " + swizzle(m.swizzle) + ",\n        " + l2_promotion(m.l2) + ", " +
         (m.oob == TensorMapSpec::Oob::nan ? "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"
                                           : "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE") +
         ", " + buffer_bytes + ");\n" +
         (m.written ? "    // a TMA store writes whole 16-byte units of the innermost dimension: none past the end\n"
                      "    p.ok = p.ok && std::fmod(map_dims_[0] * " + std::to_string(dtype_bytes(elem)) + ", 16.0) == 0;\n"
                    : std::string()) +
         "  }\n";
  }
  return h;
}

std::string tensor_map_local(const std::string& name) { return "tensor_map_" + export_ident(name) + "_"; }

std::string tensor_map_encodes(const VariantSpec& v) {
  if (v.tensor_maps.empty()) return "";
  std::string decl, encode;
  for (size_t i = 0; i < v.tensor_maps.size(); ++i) {
    const auto& m = v.tensor_maps[i];
    decl += (i ? ", " : "") + tensor_map_local(m.name);
    encode += std::string(i ? " ||\n      " : "") + "!detail::encode_tensor_map(" + tensor_map_local(m.name) + ", p.maps[" +
              std::to_string(i) + "], " + m.buffer + ")";
  }
  return "  // The maps hold the caller's addresses: encoded at each call.\n  detail::TensorMapArg " + decl +
         ";\n  if (" + encode + ")\n    return cudaErrorInvalidValue;\n";
}

}  // namespace soltune
