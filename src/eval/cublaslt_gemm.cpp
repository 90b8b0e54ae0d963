#include "eval/cublaslt_gemm.hpp"

#include <cublasLt.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace soltune {
namespace {

// The entry points soltune calls, resolved once per process from the toolkit's libcublasLt.
struct Lt {
  void* lib = nullptr;
  std::string why;  // why the library could not be loaded ("" when it was)
#define SOLTUNE_LT_FN(name) decltype(&::name) name = nullptr;
  SOLTUNE_LT_FN(cublasLtCreate)
  SOLTUNE_LT_FN(cublasLtDestroy)
  SOLTUNE_LT_FN(cublasLtGetVersion)
  SOLTUNE_LT_FN(cublasLtGetStatusString)
  SOLTUNE_LT_FN(cublasLtMatmulDescCreate)
  SOLTUNE_LT_FN(cublasLtMatmulDescDestroy)
  SOLTUNE_LT_FN(cublasLtMatmulDescSetAttribute)
  SOLTUNE_LT_FN(cublasLtMatrixLayoutCreate)
  SOLTUNE_LT_FN(cublasLtMatrixLayoutDestroy)
  SOLTUNE_LT_FN(cublasLtMatrixLayoutSetAttribute)
  SOLTUNE_LT_FN(cublasLtMatmulPreferenceCreate)
  SOLTUNE_LT_FN(cublasLtMatmulPreferenceDestroy)
  SOLTUNE_LT_FN(cublasLtMatmulPreferenceSetAttribute)
  SOLTUNE_LT_FN(cublasLtMatmulAlgoGetHeuristic)
  SOLTUNE_LT_FN(cublasLtMatmulAlgoConfigGetAttribute)
  SOLTUNE_LT_FN(cublasLtMatmul)
#undef SOLTUNE_LT_FN
};

// The toolkit's soname first (the loader's path, then the toolkit's lib64 folders), as NVRTC is found.
void* open_library(std::string& tried) {
  const std::string so = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::vector<std::string> paths{so};
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(env); home && *home) paths.push_back(std::string(home) + "/lib64/" + so);
  paths.push_back("/usr/local/cuda/lib64/" + so);
  for (const auto& p : paths) {
    if (void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    tried += (tried.empty() ? "" : ", ") + p;
  }
  return nullptr;
}

const Lt& lt() {
  static const Lt loaded = [] {
    Lt l;
    std::string tried;
    l.lib = open_library(tried);
    if (!l.lib) {
      l.why = "cuBLASLt not found (tried " + tried + ")";
      return l;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(l.lib, name));
      if (!fn && l.why.empty()) l.why = std::string("cuBLASLt lacks ") + name;
    };
#define SOLTUNE_LT_SYM(name) sym(l.name, #name);
    SOLTUNE_LT_SYM(cublasLtCreate)
    SOLTUNE_LT_SYM(cublasLtDestroy)
    SOLTUNE_LT_SYM(cublasLtGetVersion)
    SOLTUNE_LT_SYM(cublasLtGetStatusString)
    SOLTUNE_LT_SYM(cublasLtMatmulDescCreate)
    SOLTUNE_LT_SYM(cublasLtMatmulDescDestroy)
    SOLTUNE_LT_SYM(cublasLtMatmulDescSetAttribute)
    SOLTUNE_LT_SYM(cublasLtMatrixLayoutCreate)
    SOLTUNE_LT_SYM(cublasLtMatrixLayoutDestroy)
    SOLTUNE_LT_SYM(cublasLtMatrixLayoutSetAttribute)
    SOLTUNE_LT_SYM(cublasLtMatmulPreferenceCreate)
    SOLTUNE_LT_SYM(cublasLtMatmulPreferenceDestroy)
    SOLTUNE_LT_SYM(cublasLtMatmulPreferenceSetAttribute)
    SOLTUNE_LT_SYM(cublasLtMatmulAlgoGetHeuristic)
    SOLTUNE_LT_SYM(cublasLtMatmulAlgoConfigGetAttribute)
    SOLTUNE_LT_SYM(cublasLtMatmul)
#undef SOLTUNE_LT_SYM
    return l;
  }();
  return loaded;
}

std::string status_text(cublasStatus_t s) {
  const char* t = lt().cublasLtGetStatusString ? lt().cublasLtGetStatusString(s) : nullptr;
  return t ? t : "status " + std::to_string(static_cast<int>(s));
}

std::string version_text(size_t v) {  // major * 10000 + minor * 100 + patch
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace

struct LtGemm::Impl {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};
  ~Impl() {
    const auto& l = lt();
    if (la) l.cublasLtMatrixLayoutDestroy(la);
    if (lb) l.cublasLtMatrixLayoutDestroy(lb);
    if (lc) l.cublasLtMatrixLayoutDestroy(lc);
    if (op) l.cublasLtMatmulDescDestroy(op);
    if (handle) l.cublasLtDestroy(handle);
  }
};

LtGemm::~LtGemm() = default;

namespace {

// What the library is asked for: cuBLASLt's operands are column-major, so row-major C = A B is
// C^T = B^T A^T: its first operand is B, its second A, its C n x m.
struct LtCase {
  cudaDataType_t ab, c;
  cublasOperation_t op_first;           // op of the first operand (B)
  uint64_t first_rows, first_cols;      // B as stored, column-major
  // Scale modes of the first (B) and second (A) operand; scaled only.
  cublasLtMatmulMatrixScale_t first_scale = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                              second_scale = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
};

// The case for a shape, or "" and why not.
std::string lt_case(const GemmShape& s, LtCase& lc) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return "cuBLASLt takes no empty matrix";
  if (s.batch > 1 && s.scale) return "the scaled matmul is planned here for one product, not a batch";
  if (s.batch > INT32_MAX) return "cuBLASLt counts a batch in 32 bits, not " + std::to_string(s.batch);
  if (!s.scale) {
    switch (s.dtype) {
      case DType::f32: lc.ab = CUDA_R_32F; break;  // CUBLAS_COMPUTE_32F: no TF32, as torch.matmul by default
      case DType::bf16: lc.ab = CUDA_R_16BF; break;
      case DType::f16: lc.ab = CUDA_R_16F; break;
      default: return "cuBLASLt's matmul is called here for f32, bf16 and f16, not " + std::string(dtype_name(s.dtype));
    }
    // NN: B stored n x k column-major; NT: k x n, transposed.
    lc.c = lc.ab;
    lc.op_first = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    lc.first_rows = s.trans_b ? s.k : s.n;
    lc.first_cols = s.trans_b ? s.n : s.k;
    return "";
  }
  switch (s.dtype) {
    case DType::e4m3: lc.ab = CUDA_R_8F_E4M3; break;
    case DType::e5m2: lc.ab = CUDA_R_8F_E5M2; break;
    default: return "cuBLASLt's scaled matmul is called here for e4m3 and e5m2, not " + std::string(dtype_name(s.dtype));
  }
  // 8-bit operands are read k-major only ("TN"): B n x k row-major is k x n column-major, transposed.
  lc.c = CUDA_R_16BF;
  lc.op_first = CUBLAS_OP_T;
  lc.first_rows = s.k;
  lc.first_cols = s.n;
  switch (*s.scale) {
    case 0: break;
    case 1: lc.first_scale = lc.second_scale = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F; break;
    case 2:
      // A's 1 x 128 blocks with the rows innermost, and B's 128 x 128 ones row-major, as torch._scaled_mm
      // hands them over; it pads B's rows of scales to 4 blocks and A's to 4 rows (16 bytes), and
      // these layouts are not padded: other sizes are left to the kernels.
      if ((s.k + 127) / 128 % 4 != 0 || s.m % 4 != 0)
        return "cuBLASLt's block scales come in rows of 16 bytes, and cdiv(k, 128) = " + std::to_string((s.k + 127) / 128) +
               ", m = " + std::to_string(s.m) + " are not both multiples of 4";
      lc.first_scale = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
      lc.second_scale = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
      break;
    default: return "unknown scale mode " + std::to_string(*s.scale);
  }
  return "";
}

}  // namespace

std::unique_ptr<LtGemm> LtGemm::plan(const GemmShape& s, std::string& why, const void* sa, const void* sb) {
  const auto& l = lt();
  if (!l.why.empty()) {
    why = l.why;
    return nullptr;
  }
  LtCase lc{};
  if (why = lt_case(s, lc); !why.empty()) return nullptr;
  std::unique_ptr<LtGemm> g(new LtGemm);
  g->impl_ = std::make_unique<Impl>();
  g->scaled_ = s.scale.has_value();
  g->alpha_ = static_cast<float>(s.alpha);
  auto& im = *g->impl_;
  std::string failed;
  auto ok = [&](cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS && failed.empty()) failed = std::string(what) + ": " + status_text(st);
    return failed.empty();
  };
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const auto& v, const char* what) {
    return ok(l.cublasLtMatmulDescSetAttribute(im.op, attr, &v, sizeof v), what);
  };
  const cublasOperation_t op_second = CUBLAS_OP_N;
  // A batch: each layout's matrices one after another, as many as the batch (their strides their sizes).
  auto batched = [&](cublasLtMatrixLayout_t layout, uint64_t rows, uint64_t cols, const char* what) {
    if (s.batch == 1) return true;
    const auto count = static_cast<int32_t>(s.batch);
    const auto stride = static_cast<int64_t>(rows * cols);
    return ok(l.cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), what) &&
           ok(l.cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
              what);
  };
  const size_t ws = kWorkspaceBytes;
  cublasLtMatmulPreference_t pref = nullptr;
  int found = 0;
  if (ok(l.cublasLtCreate(&im.handle), "cublasLtCreate") &&
      ok(l.cublasLtMatmulDescCreate(&im.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate") &&
      set(CUBLASLT_MATMUL_DESC_TRANSA, lc.op_first, "TRANSA") && set(CUBLASLT_MATMUL_DESC_TRANSB, op_second, "TRANSB") &&
      (!g->scaled_ ||
       // The scales as the heuristic plans with them (run() points at each input set's); A's are the
       // library's second operand's, B's its first's.
       (set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, static_cast<int32_t>(lc.first_scale), "A_SCALE_MODE") &&
        set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, static_cast<int32_t>(lc.second_scale), "B_SCALE_MODE") &&
        set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, sb, "A_SCALE_POINTER") &&
        set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, sa, "B_SCALE_POINTER"))) &&
      ok(l.cublasLtMatrixLayoutCreate(&im.la, lc.ab, lc.first_rows, lc.first_cols, static_cast<int64_t>(lc.first_rows)),
         "layout of B") &&
      ok(l.cublasLtMatrixLayoutCreate(&im.lb, lc.ab, s.k, s.m, s.k), "layout of A") &&
      ok(l.cublasLtMatrixLayoutCreate(&im.lc, lc.c, s.n, s.m, s.n), "layout of C") &&
      batched(im.la, lc.first_rows, lc.first_cols, "batch of B") && batched(im.lb, s.k, s.m, "batch of A") &&
      batched(im.lc, s.n, s.m, "batch of C") &&
      ok(l.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate") &&
      ok(l.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
         "workspace preference"))
    ok(l.cublasLtMatmulAlgoGetHeuristic(im.handle, im.op, im.la, im.lb, im.lc, im.lc, pref, 1, &im.algo, &found),
       "cublasLtMatmulAlgoGetHeuristic");
  if (pref) l.cublasLtMatmulPreferenceDestroy(pref);
  if (failed.empty() && (found < 1 || im.algo.state != CUBLAS_STATUS_SUCCESS))
    failed = "cuBLASLt has no algorithm for this case";
  if (!failed.empty()) {
    why = failed;
    return nullptr;
  }
  int id = -1, tile = -1, splits = 1;
  size_t got = 0;
  l.cublasLtMatmulAlgoConfigGetAttribute(&im.algo.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &got);
  l.cublasLtMatmulAlgoConfigGetAttribute(&im.algo.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &got);
  l.cublasLtMatmulAlgoConfigGetAttribute(&im.algo.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits, sizeof splits, &got);
  g->description_ = "cuBLASLt " + version_text(l.cublasLtGetVersion()) + (s.batch > 1 ? ", batched" : "") +
                    ", the heuristic's first algorithm (id " +
                    std::to_string(id) + ", tile id " + std::to_string(tile) + ", split-k " +
                    std::to_string(std::max(splits, 1)) + ")";
  return g;
}

cudaError_t LtGemm::run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream, const float* sa,
                        const float* sb) {
  const float zero = 0.0f;
  auto& im = *impl_;
  if (scaled_) {
    const auto& l = lt();
    for (auto [attr, p] : {std::pair{CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, sb}, std::pair{CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, sa}})
      if (const auto st = l.cublasLtMatmulDescSetAttribute(im.op, attr, &p, sizeof p); st != CUBLAS_STATUS_SUCCESS) {
        last_error_ = "cublasLtMatmulDescSetAttribute (scale pointers): " + status_text(st);
        return cudaErrorUnknown;
      }
  }
  const auto st = lt().cublasLtMatmul(im.handle, im.op, &alpha_, b, im.la, a, im.lb, &zero, c, im.lc, c, im.lc,
                                      &im.algo.algo, workspace, kWorkspaceBytes, stream);
  if (st == CUBLAS_STATUS_SUCCESS) return cudaGetLastError();
  last_error_ = "cublasLtMatmul: " + status_text(st);
  return cudaErrorUnknown;
}

}  // namespace soltune
