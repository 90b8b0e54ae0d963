#pragma once
// Variants whose kernels take tensor maps (TMA descriptors), added to copies of shipped problems by
// the tests of parsing, pruning, export and the GPU evaluator:
// - gelu `tma`: x read and y written one tile per block by TMA (1-D maps over an input and an output);
//   BOX 512 breaks the 256-element box limit.
// - matmul `tma_a`: the A tile by TMA (a 2-D map, [k, m] innermost first), B by plain loads, f32
//   accumulation. A's rows are k elements: k = 1793 breaks the 16-byte stride rule in every dtype,
//   k = 1796 in the 16-bit ones only.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "files.hpp"
#include "gelu_device.hpp"
#include "core/tensor_map.hpp"

namespace soltune::test {

// Device code declares its own CUtensorMap: cuda.h does not compile under NVRTC.
inline const char* kTmaMapStruct = "struct alignas(64) TmaMap {\n  unsigned long long opaque[16];\n};\n";

inline void add_tma_gelu(const std::filesystem::path& gelu_dir) {
  write_file(gelu_dir / "tma.cu", std::string(R"SRC(// GELU through tensor maps: a block loads BOX elements of x into
// shared memory with one TMA copy (completing on an mbarrier), computes in place and stores the tile
// to y with one TMA copy. The maps' bounds make the tail: elements past n read as zero and are not
// written.
#include <cuda/ptx>
#include <cuda/std/cstdint>
#include <cuda_bf16.h>

)SRC") + kTmaMapStruct + kGeluDevice + R"SRC(
template <typename T, int BOX>
__global__ void __launch_bounds__(BOX) gelu_tma(const __grid_constant__ TmaMap tx, const __grid_constant__ TmaMap ty,
                                                long long n) {
  namespace ptx = cuda::ptx;
  __shared__ alignas(128) T tile[BOX];  // TMA's shared-memory side is 128-byte aligned
  __shared__ cuda::std::uint64_t bar;
  const int at[1] = {static_cast<int>(blockIdx.x) * BOX};
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // visible to the copy engine
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    // The whole box arrives, out-of-bounds elements as zeros: its bytes complete the barrier.
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, BOX * sizeof(T));
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, tile, &tx, at, &bar);
  }
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  put(tile[threadIdx.x], gelu(to_f(tile[threadIdx.x])));
  ptx::fence_proxy_async(ptx::space_shared);  // the TMA store reads shared memory through the async proxy
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &ty, at, tile);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});  // the tile must outlive the store's read
  }
  (void)n;
}
)SRC");
  write_file(gelu_dir / "tma.yaml", R"SRC(description: GELU with x and y moved by TMA, one tile per block
kernel: gelu_tma
template_args: [T, BOX]
tensor_maps:
  tx: {buffer: x, dims: [n], box: [BOX]}
  ty: {buffer: y, dims: [n], box: [BOX]}
args: [tx, ty, n]
knobs:
  BOX: {values: [128, 256, 512], doc: elements per block and tile (512 is past TMA's box limit)}
launch:
  grid: cdiv(n, BOX)
  block: BOX
)SRC");
}

inline void add_tma_matmul(const std::filesystem::path& matmul_dir) {
  write_file(matmul_dir / "tma_a.cu", std::string(R"SRC(// C = A B with the A tile loaded by TMA: a block of
// 16 x BM threads computes a BM x 16 tile of C, one element per thread, over k in steps of BK. A's
// BM x BK tile arrives by one TMA copy (k and m tails zero-filled by the map's bounds), B's BK x 16
// tile by plain loads; f32 accumulation.
#include <cuda/ptx>
#include <cuda/std/cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

)SRC") + kTmaMapStruct + R"SRC(
__device__ inline float f(float v) { return v; }
__device__ inline float f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float f(__half v) { return __half2float(v); }
__device__ inline void put(float* p, float v) { *p = v; }
__device__ inline void put(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ inline void put(__half* p, float v) { *p = __float2half_rn(v); }

template <typename T, int BM, int BK>
__global__ void __launch_bounds__(16 * BM) gemm_tma_a(const __grid_constant__ TmaMap ta, const T* b, T* c, long long m,
                                                      long long n, long long k) {
  namespace ptx = cuda::ptx;
  __shared__ alignas(128) T as[BM][BK];  // (BM, BK): rows of A, k innermost
  __shared__ T bs[BK][16];                // (BK, 16)
  __shared__ cuda::std::uint64_t bar;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long row = static_cast<long long>(blockIdx.y) * BM + ty, col = static_cast<long long>(blockIdx.x) * 16 + tx;
  if (tx == 0 && ty == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  float acc = 0;
  unsigned phase = 0;
  for (long long k0 = 0; k0 < k; k0 += BK) {
    if (tx == 0 && ty == 0) {
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, BM * BK * sizeof(T));
      const int at[2] = {static_cast<int>(k0), static_cast<int>(blockIdx.y) * BM};
      ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, &as[0][0], &ta, at, &bar);
    }
    for (int i = ty; i < BK; i += BM)
      bs[i][tx] = k0 + i < k && col < n ? b[(k0 + i) * n + col] : T(0.0f);
    while (!ptx::mbarrier_try_wait_parity(&bar, phase)) {
    }
    phase ^= 1;
    __syncthreads();  // bs written by every thread
#pragma unroll 8
    for (int q = 0; q < BK; ++q) acc = fmaf(f(as[ty][q]), f(bs[q][tx]), acc);
    __syncthreads();  // both tiles are rewritten next
  }
  if (row < m && col < n) put(c + row * n + col, acc);
}
)SRC");
  write_file(matmul_dir / "tma_a.yaml", R"SRC(description: GEMM with the A tile loaded by TMA, B by plain loads
kernel: gemm_tma_a
template_args: [T, BM, BK]
tensor_maps:
  ta: {buffer: a, dims: [k, m], box: [BK, BM]}
args: [ta, b, c, m, n, k]
knobs:
  BM: {values: [16, 32], doc: rows of C per block}
  BK: {values: [32], doc: k values per tile}
launch:
  grid: ["cdiv(n, 16)", "cdiv(m, BM)"]
  block: [16, BM]
)SRC");
}

// Copies of the shipped gelu and matmul (and common) into dir, with the variants above added.
inline void copy_tma_problems(const std::filesystem::path& dir) {
  for (const char* p : {"gelu", "matmul", "common"})
    std::filesystem::copy(std::filesystem::path(SOLTUNE_SOURCE_DIR) / "templates" / p, dir / p,
                          std::filesystem::copy_options::recursive);
  add_tma_gelu(dir / "gelu");
  add_tma_matmul(dir / "matmul");
}

// A test's fresh folder dir_ holding copy_tma_problems(): the fixture of the tests of those variants.
class TmaProblemCopies : public ::testing::Test {
 protected:
  void SetUp() override { copy_tma_problems(dir_.path()); }
  TempDir dir_{"tma-problems"};
};

// A legal map of `spec` (matmul tma_a's A) over a bf16 matrix of 1792 x 1792 with tiles of `box`,
// in a buffer of `buffer_bytes`: the start from which the rule tests change one parameter.
inline TensorMapParams legal_1792_map(const TensorMapSpec& spec, std::vector<int64_t> box, int64_t buffer_bytes) {
  TensorMapParams m;
  m.spec = &spec;
  m.elem_bytes = 2;
  m.dims = {1792, 1792};
  m.strides = {3584};
  m.box = std::move(box);
  m.buffer_bytes = buffer_bytes;
  return m;
}

}  // namespace soltune::test
