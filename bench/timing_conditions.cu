// Bench (not a test): RMSNorm f32 kernels exported by soltune (one or more libraries built by
// bench/exported_bench.sh) and a plain copy of x into y, timed in turns under the conditions in
// which soltune's worker and PyTorch's harness time kernels, one condition changed at a time. Which
// of them moves a kernel's time, and does it move every kernel alike?
//   nvcc -O3 -arch=sm_90 -std=c++17 -o timing_conditions bench/timing_conditions.cu -ldl
//   timing_conditions ROWS COLS REPS LIB...
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "flush_read.cuh"

namespace {

using RmsFn = int (*)(const void*, const void*, void*, long long, long long, void*);

// Values in [-2, 2) from a hash of the index (never zeros, no host transfer).
__global__ void fill(float* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    p[i] = (h & 0xffffff) * (4.0f / 16777216.0f) - 2.0f;
  }
}

// The stream idles ns of %globaltimer (PyTorch's harness busy-waits about 100 us).
__global__ void spin(unsigned long long ns) {
  unsigned long long t0, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - t0 < ns);
}

__global__ void copy16(const uint4* __restrict__ src, uint4* __restrict__ dst, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

struct Condition {
  const char* name;
  bool spin_before, spin_after, sync_each, y_offset, two_x;
  bool sequential = false;  // each implementation's repetitions one after another (as soltune times one candidate)
  bool copy_before = false;  // an untimed copy of other buffers before each flush (the same predecessor for all)
  long long other_read = 0;  // bytes of other buffers read (not written) before each flush: pages, no dirty lines
  long long other_write = 0;  // bytes of other buffers written before each flush (a small one: dirty lines, few pages)
};

__global__ void read_only(const uint4* p, long long n, unsigned* sink) {
  unsigned acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    acc ^= p[i].x;
  if (acc == 0x9e3779b9u) *sink = acc;
}

double quantile(std::vector<float> v, double q) {
  std::sort(v.begin(), v.end());
  return 1e3 * v[static_cast<size_t>(q * (v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: timing_conditions ROWS COLS REPS LIB...   (CHURN_GIB=N: N GiB allocated and freed first)\n");
    return 2;
  }
  const long long rows = std::atoll(argv[1]), cols = std::atoll(argv[2]), n = rows * cols;
  const int reps = std::atoi(argv[3]);
  std::vector<std::string> names;
  std::vector<RmsFn> fns;
  for (int i = 4; i < argc; ++i) {
    void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "%s: %s\n", argv[i], dlerror());
      return 1;
    }
    auto f = reinterpret_cast<RmsFn>(dlsym(h, "soltune_rmsnorm_f32"));
    if (!f) {
      std::fprintf(stderr, "%s: no soltune_rmsnorm_f32\n", argv[i]);
      return 1;
    }
    names.push_back(i == 4 ? "soltune" : "soltune#" + std::to_string(i - 3));
    fns.push_back(f);
  }
  // CHURN_GIB: allocate, touch and free that much first, as soltune's worker does for its ceiling
  // probes before a task's buffers (does the allocation history move a kernel's time?).
  if (const char* churn = std::getenv("CHURN_GIB")) {
    std::vector<void*> bufs;
    for (int i = 0; i < std::atoi(churn); ++i) {
      void* b;
      CHECK(cudaMalloc(&b, 1ll << 30));
      CHECK(cudaMemset(b, 1, 1ll << 30));
      bufs.push_back(b);
    }
    CHECK(cudaDeviceSynchronize());
    for (void* b : bufs) CHECK(cudaFree(b));
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t guard = 64 << 10;  // soltune's guard zone before an output
  float *x0, *x1, *w, *ybase, *z;
  CHECK(cudaMalloc(&x0, n * 4));
  CHECK(cudaMalloc(&x1, n * 4));
  CHECK(cudaMalloc(&w, cols * 4));
  CHECK(cudaMalloc(&ybase, n * 4 + 2 * guard));
  CHECK(cudaMalloc(&z, std::max(n * 4, 256ll << 20)));  // other memory for the predecessor conditions
  fill<<<2048, 256>>>(x0, n, 1);
  fill<<<2048, 256>>>(x1, n, 2);
  fill<<<64, 256>>>(w, cols, 3);
  CHECK(cudaGetLastError());
  const long long fwords = (256ll << 20) / 16;
  uint4* fbuf;
  unsigned* sink;
  CHECK(cudaMalloc(&fbuf, fwords * 16));
  CHECK(cudaMemset(fbuf, 0x5a, fwords * 16));
  CHECK(cudaMalloc(&sink, 4));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Implementations: each exported library, then the copy (x's bytes read and written).
  const int impls = static_cast<int>(fns.size()) + 1;
  names.push_back("copy");
  auto run = [&](int k, const float* x, float* y) -> cudaError_t {
    if (k < static_cast<int>(fns.size())) return static_cast<cudaError_t>(fns[k](x, w, y, rows, cols, s));
    const long long words = n * 4 / 16;
    copy16<<<(words + 127) / 128, 128, 0, s>>>(reinterpret_cast<const uint4*>(x), reinterpret_cast<uint4*>(y), words);
    return cudaGetLastError();
  };

  const Condition conds[] = {
      {"queued (soltune's, gate-less)", false, false, false, false, false},
      {"queued, y after a 64 KiB guard", false, false, false, true, false},
      {"queued, x alternating two buffers", false, false, false, false, true},
      {"100 us spin after the flush (PyTorch harness)", false, true, false, false, false},
      {"100 us spin before the flush", true, false, false, false, false},
      {"synchronized every repetition", false, false, true, false, false},
      {"sequential: each implementation's repetitions in a row", false, false, false, false, false, true},
      {"sequential, an untimed copy of other buffers before each flush", false, false, false, false, false, true, true},
      {"in turns, an untimed copy of other buffers before each flush", false, false, false, false, false, false, true},
      {"sequential, 256 MiB of other buffers read before each flush", false, false, false, false, false, true, false, 256ll << 20},
      {"sequential, 8 MiB of another buffer written before each flush", false, false, false, false, false, true, false, 0, 8ll << 20},
      {"queued (soltune's, gate-less), again", false, false, false, false, false},
  };
  std::vector<cudaEvent_t> ev(2 * static_cast<size_t>(reps) * impls);
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  std::printf("rmsnorm f32 %lldx%lld, %d repetitions per condition, implementations in rotating turns\n", rows, cols, reps);
  for (const auto& c : conds) {
    float* y = c.y_offset ? reinterpret_cast<float*>(reinterpret_cast<char*>(ybase) + guard) : ybase;
    for (int k = 0; k < impls; ++k) CHECK(run(k, x0, y));  // warm-up
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < reps * impls; ++i) {
      const int r = c.sequential ? i % reps : i / impls;
      const int k = c.sequential ? i / reps : (r + i % impls) % impls;
      const float* x = c.two_x && r % 2 ? x1 : x0;
      if (c.copy_before)
        copy16<<<(n / 4 + 127) / 128, 128, 0, s>>>(reinterpret_cast<const uint4*>(x1), reinterpret_cast<uint4*>(z), n / 4);
      if (c.other_read)
        read_only<<<sms * 8, 256, 0, s>>>(reinterpret_cast<const uint4*>(z), c.other_read / 16, sink);
      if (c.other_write) CHECK(cudaMemsetAsync(z, 0, c.other_write, s));
      if (c.spin_before) spin<<<1, 1, 0, s>>>(100000);
      flush_read<<<sms * 8, 256, 0, s>>>(fbuf, fwords, sink);
      if (c.spin_after) spin<<<1, 1, 0, s>>>(100000);
      CHECK(cudaEventRecord(ev[2 * (static_cast<size_t>(r) * impls + k)], s));
      CHECK(run(k, x, y));
      CHECK(cudaEventRecord(ev[2 * (static_cast<size_t>(r) * impls + k) + 1], s));
      if (c.sync_each) CHECK(cudaStreamSynchronize(s));
    }
    CHECK(cudaStreamSynchronize(s));
    std::printf("%s\n", c.name);
    for (int k = 0; k < impls; ++k) {
      std::vector<float> ms(reps);
      for (int r = 0; r < reps; ++r)
        CHECK(cudaEventElapsedTime(&ms[r], ev[2 * (static_cast<size_t>(r) * impls + k)],
                                   ev[2 * (static_cast<size_t>(r) * impls + k) + 1]));
      std::printf("  %-10s median %7.2f us  p10-p90 %7.2f-%-7.2f\n", names[k].c_str(), quantile(ms, 0.5),
                  quantile(ms, 0.1), quantile(ms, 0.9));
    }
  }
  return 0;
}
