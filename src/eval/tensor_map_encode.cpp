#include "eval/tensor_map_encode.hpp"

// cuda.h for the types and enums only: its functions come from the driver at run time.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "eval/cuda_check.hpp"

namespace soltune {
namespace {

static_assert(sizeof(TensorMapBlob) == sizeof(CUtensorMap) && alignof(TensorMapBlob) >= alignof(CUtensorMap),
              "a TensorMapBlob must hold a CUtensorMap");

// The driver's `name` as the runtime hands it out (no libcuda linked), or null with the reason.
void* driver_function(const char* name, unsigned version, std::string& why) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &f, version, cudaEnableDefault, &q);
#else  // the by-version query is CUDA 12.5's; before it, the default version is the toolkit's
  (void)version;
  const cudaError_t e = cudaGetDriverEntryPoint(name, &f, cudaEnableDefault, &q);
#endif
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    why = std::string("the runtime could not look up ") + name + " in the driver: " + cuda_error_text(e);
    return nullptr;
  }
  if (q != cudaDriverEntryPointSuccess || f == nullptr) {
    why = std::string("the driver offers no ") + name + " (entry point query result " + std::to_string(static_cast<int>(q)) +
          "): it is older than CUDA 12.0";
    return nullptr;
  }
  return f;
}

struct Driver {
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  PFN_cuGetErrorName_v6000 error_name = nullptr;
  std::string why;  // when encode is null
};

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    r.encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(driver_function("cuTensorMapEncodeTiled", 12000, r.why));
    std::string unused;  // without names, results are reported by number alone
    r.error_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(driver_function("cuGetErrorName", 6000, unused));
    return r;
  }();
  return d;
}

CUtensorMapDataType data_type(DType t) {
  switch (t) {
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case DType::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DType::i64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    // TMA moves bytes: the signed, bool and 8-bit float types travel as the unsigned ones of their width
    case DType::i8: case DType::u8: case DType::boolean: case DType::e4m3: case DType::e5m2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case DType::i16: case DType::u16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case DType::u32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case DType::u64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
  }
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// The driver's values of the spec's swizzle and L2 promotion, in the order the enums declare them.
constexpr CUtensorMapSwizzle kSwizzle[] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
                                           CU_TENSOR_MAP_SWIZZLE_128B};
constexpr CUtensorMapL2promotion kL2Promotion[] = {CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
                                                   CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
CUtensorMapSwizzle swizzle(TensorMapSpec::Swizzle s) { return kSwizzle[static_cast<size_t>(s)]; }
CUtensorMapL2promotion l2_promotion(TensorMapSpec::L2 l) { return kL2Promotion[static_cast<size_t>(l)]; }

}  // namespace

const TensorMapBlob* TensorMapArgs::find(const std::string& name) const {
  for (size_t i = 0; i < names.size() && i < blobs.size(); ++i)
    if (names[i] == name) return &blobs[i];
  return nullptr;
}

std::string encode_tensor_map(const TensorMapParams& p, DType elem, void* address, TensorMapBlob& out) {
  const auto& d = driver();
  const std::string which = "tensor map '" + (p.spec ? p.spec->name : std::string("?")) + "'";
  if (!d.encode) return which + ": " + d.why;
  const auto rank = static_cast<cuuint32_t>(p.dims.size());
  cuuint64_t dims[kTensorMapMaxRank] = {}, strides[kTensorMapMaxRank] = {};
  cuuint32_t box[kTensorMapMaxRank] = {}, element_strides[kTensorMapMaxRank] = {1, 1, 1, 1, 1};
  for (size_t i = 0; i < p.dims.size() && i < kTensorMapMaxRank; ++i) {
    dims[i] = static_cast<cuuint64_t>(p.dims[i]);
    box[i] = static_cast<cuuint32_t>(p.box[i]);
    if (i + 1 < p.dims.size()) strides[i] = static_cast<cuuint64_t>(p.strides[i]);
  }
  const auto sw = p.spec ? p.spec->swizzle : TensorMapSpec::Swizzle::none;
  const auto l2 = p.spec ? p.spec->l2 : TensorMapSpec::L2::b256;
  const bool nan = p.spec && p.spec->oob == TensorMapSpec::Oob::nan;
  const CUresult r = d.encode(reinterpret_cast<CUtensorMap*>(out.bytes), data_type(elem), rank, address, dims, strides,
                              box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle(sw), l2_promotion(l2),
                              nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r == CUDA_SUCCESS) return "";
  const char* name = nullptr;
  if (!d.error_name || d.error_name(r, &name) != CUDA_SUCCESS) name = nullptr;
  char at[32];
  std::snprintf(at, sizeof at, "%p", address);
  return which + ": cuTensorMapEncodeTiled refused it with CUresult " + std::to_string(static_cast<int>(r)) +
         (name ? " (" + std::string(name) + ")" : std::string()) + ": " + std::string(dtype_name(elem)) + ", rank " +
         std::to_string(rank) + ", address " + at + ", " + p.str() + ", element strides 1, interleave none";
}

}  // namespace soltune
