// Bench (not a test): what bandwidth does softmax's access pattern itself allow? Copies a
// rows x cols matrix (bf16 or f32) four ways and times each as soltune times a kernel (L2 flushed by
// a 256 MiB read before every run, CUDA events, median and p10-p90 of REPS runs):
//   grid    soltune's copy probe: grid-stride, four 16-byte words per thread per step;
//   flat    soltune's other copy probe: one 16-byte word per thread;
//   regs    a block per row, each thread's 16-byte words all loaded to registers, then stored;
//   async   a block per row, the row to shared memory by cp.async, then stored (softmax `cached`
//           STAGE 2 and `chunked` without their arithmetic);
//   async2  as async, the row in two cp.async groups stored as each lands;
//   async1  as async, one block per SM (shared memory requested to 120 KiB): half the rows in flight.
// If the row-wise copies fall short of `grid` by what softmax does, the pattern is the limit.
//   row_copy_probe ROWS COLS DTYPE_BYTES [REPS] [BLOCK]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_check.cuh"

namespace {

__global__ void fill(unsigned* p, long long n) {  // nonzero words from a hash of the index
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u;
    h ^= h >> 15;
    p[i] = h | 1u;
  }
}

__global__ void flush_read(const float4* p, long long n, float* sink) {
  float acc = 0.0f;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) acc += p[i].x;
  if (acc == 1.2345f) *sink = acc;  // never true; keeps the reads
}

__global__ void copy_grid(const uint4* __restrict__ src, uint4* __restrict__ dst, long long n) {
  const long long chunk = 4LL * blockDim.x;
  for (long long base = blockIdx.x * chunk; base < n; base += (long long)gridDim.x * chunk) {
    if (base + chunk <= n) {
      uint4 v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = __ldcs(src + base + k * blockDim.x + threadIdx.x);
#pragma unroll
      for (int k = 0; k < 4; ++k) __stcs(dst + base + k * blockDim.x + threadIdx.x, v[k]);
    } else {
      for (long long i = base + threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
    }
  }
}

__global__ void copy_flat(const uint4* __restrict__ src, uint4* __restrict__ dst, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

constexpr int kMaxPer = 16;  // 16-byte words per thread held in registers (BLOCK 512: rows to 128 KiB)

__global__ void copy_rows_regs(const uint4* __restrict__ src, uint4* __restrict__ dst, int nvec) {
  const uint4* s = src + static_cast<long long>(blockIdx.x) * nvec;
  uint4* d = dst + static_cast<long long>(blockIdx.x) * nvec;
  uint4 v[kMaxPer];
#pragma unroll
  for (int i = 0; i < kMaxPer; ++i) {
    const int j = threadIdx.x + i * blockDim.x;
    if (j < nvec) v[i] = s[j];
  }
#pragma unroll
  for (int i = 0; i < kMaxPer; ++i) {
    const int j = threadIdx.x + i * blockDim.x;
    if (j < nvec) d[j] = v[i];
  }
}

__device__ __forceinline__ void cp16(void* dst, const void* src) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(src) : "memory");
}

template <int GROUPS>
__global__ void copy_rows_async(const uint4* __restrict__ src, uint4* __restrict__ dst, int nvec) {
  extern __shared__ uint4 row[];
  const uint4* s = src + static_cast<long long>(blockIdx.x) * nvec;
  uint4* d = dst + static_cast<long long>(blockIdx.x) * nvec;
  const int half = (nvec / 2 + blockDim.x - 1) / blockDim.x * blockDim.x;  // group 0: [0, half)
  for (int j = threadIdx.x; j < (GROUPS == 2 ? half : nvec); j += blockDim.x) cp16(row + j, s + j);
  asm volatile("cp.async.commit_group;" ::: "memory");
  if constexpr (GROUPS == 2) {
    for (int j = half + threadIdx.x; j < nvec; j += blockDim.x) cp16(row + j, s + j);
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    for (int j = threadIdx.x; j < half; j += blockDim.x) d[j] = row[j];  // own words: no barrier
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  for (int j = (GROUPS == 2 ? half : 0) + threadIdx.x; j < nvec; j += blockDim.x) d[j] = row[j];
}

float quantile(std::vector<float> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(pos), hi = std::min(lo + 1, v.size() - 1);
  return static_cast<float>(v[lo] + (v[hi] - v[lo]) * (pos - lo));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: row_copy_probe ROWS COLS DTYPE_BYTES [REPS] [BLOCK]\n");
    return 2;
  }
  const long long rows = std::atoll(argv[1]), cols = std::atoll(argv[2]), eb = std::atoll(argv[3]);
  const int reps = argc > 4 ? std::atoi(argv[4]) : 50, block = argc > 5 ? std::atoi(argv[5]) : 512;
  const long long row_bytes = cols * eb, bytes = rows * row_bytes;
  if (row_bytes % 16 != 0 || (row_bytes / 16 + block - 1) / block > kMaxPer) {
    std::fprintf(stderr, "a row must be a multiple of 16 bytes and at most %d words per thread\n", kMaxPer);
    return 2;
  }
  const int nvec = static_cast<int>(row_bytes / 16);
  const long long flush_bytes = 256ll << 20;
  void *src, *dst, *flush;
  float* sink;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  fill<<<1024, 256>>>(static_cast<unsigned*>(src), bytes / 4);
  fill<<<1024, 256>>>(static_cast<unsigned*>(flush), flush_bytes / 4);
  CHECK(cudaGetLastError());
  int sms = 0, dev = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaFuncSetAttribute(copy_rows_async<1>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             std::max(static_cast<int>(row_bytes), 120 << 10)));
  CHECK(cudaFuncSetAttribute(copy_rows_async<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(row_bytes)));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));

  const auto* s4 = static_cast<const uint4*>(src);
  auto* d4 = static_cast<uint4*>(dst);
  const long long n16 = bytes / 16;
  struct Way { const char* name; void (*launch)(const uint4*, uint4*, long long, int, int, int, long long); };
  const Way ways[] = {
      {"grid", [](const uint4* s, uint4* d, long long n, int, int, int sm, long long) { copy_grid<<<sm * 8, 256>>>(s, d, n); }},
      {"flat", [](const uint4* s, uint4* d, long long n, int, int, int, long long) { copy_flat<<<(n + 127) / 128, 128>>>(s, d, n); }},
      {"regs", [](const uint4* s, uint4* d, long long, int nv, int blk, int, long long r) { copy_rows_regs<<<r, blk>>>(s, d, nv); }},
      {"async", [](const uint4* s, uint4* d, long long, int nv, int blk, int, long long r) {
         copy_rows_async<1><<<r, blk, nv * 16>>>(s, d, nv); }},
      {"async2", [](const uint4* s, uint4* d, long long, int nv, int blk, int, long long r) {
         copy_rows_async<2><<<r, blk, nv * 16>>>(s, d, nv); }},
      {"async1", [](const uint4* s, uint4* d, long long, int nv, int blk, int, long long r) {
         copy_rows_async<1><<<r, blk, std::max(nv * 16, 120 << 10)>>>(s, d, nv); }},
  };
  std::printf("row_copy_probe %lld x %lld, %lld-byte elements, %.1f MB each way, block %d, %d reps\n", rows, cols, eb,
              bytes / 1e6, block, reps);
  for (const auto& w : ways) {
    if (std::string(w.name) == "regs" && block > 512) {  // 16 words per thread: 64 registers of data
      std::printf("%-7s skipped: more registers than a block of %d threads has\n", w.name, block);
      continue;
    }
    CHECK(cudaMemset(dst, 0, bytes));
    std::vector<float> t;
    for (int i = 0; i < reps + 3; ++i) {
      flush_read<<<sms * 4, 256>>>(static_cast<const float4*>(flush), flush_bytes / 16, sink);
      CHECK(cudaEventRecord(a));
      w.launch(s4, d4, n16, nvec, block, sms, rows);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      CHECK(cudaGetLastError());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (i >= 3) t.push_back(ms * 1000.0f);  // three warm-up runs
    }
    // The copy must be exact: compare on the device's bytes, checked on the host.
    std::vector<unsigned char> hs(bytes), hd(bytes);
    CHECK(cudaMemcpy(hs.data(), src, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hd.data(), dst, bytes, cudaMemcpyDeviceToHost));
    const bool same = hs == hd;
    const float med = quantile(t, 0.5);
    std::printf("%-7s median %8.2f us  p10-p90 %8.2f-%8.2f  %6.0f GB/s%s\n", w.name, med, quantile(t, 0.1),
                quantile(t, 0.9), 2.0 * bytes / (med * 1e-6) / 1e9, same ? "" : "  WRONG COPY");
  }
  return 0;
}
