// Bench (not a test): does an L2 policy make RMSNorm faster, or only move its writes out of the
// timed window? templates/rmsnorm/rowreg.cu at Triton's design (a warp per row, 16-byte vectors,
// the width compiled in) with each HINT, timed in turns. Every repetition starts cold: the stream
// idle, evict_last lines demoted (cudaCtxResetPersistingL2Cache), L2 flushed by a read. Three event
// spans per repetition: the kernel; the flush that follows it (it writes back whatever of y the
// kernel left dirty in L2); both together. A policy that only defers writes gains in the first span
// and gives it back in the second. Then what a kept y costs the kernels after it: with no demotion,
// a 24 MiB buffer z read twice right after the kernel, and again after a 512 MiB read; the second
// read of z comes from L2 unless lines kept for y crowd it out. Last, the kernel alone as PyTorch's
// harness times it by default: a flush by read before each repetition and nothing demoted, so that
// what a repetition keeps in L2 is there for the next; the policies in turns, then each policy's
// repetitions back to back.
//   nvcc -O3 -arch=sm_90 -std=c++17 -o store_policy bench/store_policy.cu
//   store_policy ROWS REPS          (COLS is 1024, compiled in)
#include "../templates/rmsnorm/rowreg.cu"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "flush_read.cuh"
#include "rms_inputs.cuh"

namespace {

constexpr long long kCols = 1024;
constexpr size_t kFlushBytes = 512ull << 20;  // well over the H200's 60 MB of L2

constexpr size_t kZBytes = 24ull << 20;  // fits the L2 with room to spare

struct Span { std::vector<float> kernel, after, both, z1, z2, z1_late, z2_late, kept_turns, kept_own; };

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
float quantile(std::vector<float> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1))];
}

template <typename T>
void run(const char* dtype, long long rows, int reps, const uint4* flush, const uint4* z, unsigned* sink, int sms) {
  constexpr int VEC = 16 / sizeof(T), EPT = kCols * sizeof(T) / 512;
  using K = void (*)(const T*, const T*, T*, long long, long long, float);
  const K kernels[] = {rmsnorm_rowreg<T, 32, 1, VEC, EPT, 0, 0, 2, 0, 0, 0, 1, kCols>,
                       rmsnorm_rowreg<T, 32, 1, VEC, EPT, 0, 0, 2, 0, 0, 1, 1, kCols>,
                       rmsnorm_rowreg<T, 32, 1, VEC, EPT, 0, 0, 2, 0, 0, 2, 1, kCols>,
                       rmsnorm_rowreg<T, 32, 1, VEC, EPT, 0, 0, 2, 0, 0, 3, 1, kCols>};
  constexpr int N = sizeof(kernels) / sizeof(kernels[0]);
  const long long n = rows * kCols;
  const RmsInputs<T> in(rows, kCols, sms);
  T *x = in.x, *w = in.w, *y = in.y;

  // Every policy writes the same y bit for bit (the hints change no arithmetic).
  std::vector<T> ref(n), got(n);
  for (int k = 0; k < N; ++k) {
    CHECK(cudaMemset(y, 0xff, n * sizeof(T)));
    kernels[k]<<<rows, 32>>>(x, w, y, rows, kCols, 1e-6f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(k ? got.data() : ref.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost));
    if (k && std::memcmp(got.data(), ref.data(), n * sizeof(T)) != 0) {
      std::fprintf(stderr, "HINT %d wrote another y than HINT 0\n", k);
      std::exit(1);
    }
  }

  cudaEvent_t ev[7];
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  const int hints[] = {0, 1, 2, 3};
  Span spans[N];
  const long long flush_n = kFlushBytes / sizeof(uint4);
  auto read = [&](const uint4* p, long long n) { flush_read<<<4 * sms, 512>>>(p, n, sink); };
  auto demote = [] {  // the GPU idle, evict_last lines demoted
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaCtxResetPersistingL2Cache());
  };
  for (int r = -3; r < reps; ++r) {  // three warm-up rounds
    for (int k = 0; k < N; ++k) {
      demote();
      read(flush, flush_n);
      CHECK(cudaEventRecord(ev[0]));
      kernels[k]<<<rows, 32>>>(x, w, y, rows, kCols, 1e-6f);
      CHECK(cudaEventRecord(ev[1]));
      read(flush, flush_n);
      CHECK(cudaEventRecord(ev[2]));
      CHECK(cudaEventSynchronize(ev[2]));
      CHECK(cudaGetLastError());
      if (r < 0) continue;
      float a, b;
      CHECK(cudaEventElapsedTime(&a, ev[0], ev[1]));
      CHECK(cudaEventElapsedTime(&b, ev[1], ev[2]));
      spans[k].kernel.push_back(a * 1e3f);
      spans[k].after.push_back(b * 1e3f);
      spans[k].both.push_back((a + b) * 1e3f);
    }
  }
  // The kernels after it: nothing demotes y's lines this time.
  const long long z_n = kZBytes / sizeof(uint4);
  for (int r = -3; r < reps; ++r) {
    for (int k = 0; k < N; ++k) {
      demote();
      read(flush, flush_n);
      kernels[k]<<<rows, 32>>>(x, w, y, rows, kCols, 1e-6f);
      CHECK(cudaEventRecord(ev[0]));
      read(z, z_n);
      CHECK(cudaEventRecord(ev[1]));
      read(z, z_n);
      CHECK(cudaEventRecord(ev[2]));
      read(flush, flush_n);
      CHECK(cudaEventRecord(ev[3]));
      read(z, z_n);
      CHECK(cudaEventRecord(ev[4]));
      read(z, z_n);
      CHECK(cudaEventRecord(ev[5]));
      CHECK(cudaEventSynchronize(ev[5]));
      CHECK(cudaGetLastError());
      if (r < 0) continue;
      float t[4];
      CHECK(cudaEventElapsedTime(&t[0], ev[0], ev[1]));
      CHECK(cudaEventElapsedTime(&t[1], ev[1], ev[2]));
      CHECK(cudaEventElapsedTime(&t[2], ev[3], ev[4]));
      CHECK(cudaEventElapsedTime(&t[3], ev[4], ev[5]));
      spans[k].z1.push_back(t[0] * 1e3f);
      spans[k].z2.push_back(t[1] * 1e3f);
      spans[k].z1_late.push_back(t[2] * 1e3f);
      spans[k].z2_late.push_back(t[3] * 1e3f);
    }
  }
  std::printf("%s %lldx%lld, %d repetitions; median us (quartiles)\n", dtype, rows, kCols, reps);
  std::printf("  HINT  kernel                 flush after             both\n");
  // Nothing demoted: PyTorch's harness by default.
  auto kept_rep = [&](int k, std::vector<float>* into) {
    read(flush, flush_n / 2);  // the harness's 256 MiB
    CHECK(cudaEventRecord(ev[0]));
    kernels[k]<<<rows, 32>>>(x, w, y, rows, kCols, 1e-6f);
    CHECK(cudaEventRecord(ev[1]));
    CHECK(cudaEventSynchronize(ev[1]));
    CHECK(cudaGetLastError());
    float a;
    CHECK(cudaEventElapsedTime(&a, ev[0], ev[1]));
    if (into) into->push_back(a * 1e3f);
  };
  demote();
  for (int r = -3; r < reps; ++r)
    for (int k = 0; k < N; ++k) kept_rep(k, r < 0 ? nullptr : &spans[k].kept_turns);
  for (int k = 0; k < N; ++k) {
    demote();
    for (int r = -3; r < reps; ++r) kept_rep(k, r < 0 ? nullptr : &spans[k].kept_own);
  }
  auto cell = [](const std::vector<float>& v) {
    char b[64];
    std::snprintf(b, sizeof b, "%7.2f (%6.2f-%6.2f)", median(v), quantile(v, 0.25), quantile(v, 0.75));
    return std::string(b);
  };
  for (int k = 0; k < N; ++k)
    std::printf("  %4d  %s  %s  %s\n", hints[k], cell(spans[k].kernel).c_str(), cell(spans[k].after).c_str(),
                cell(spans[k].both).c_str());
  std::printf("  then z (24 MiB) read twice, right after the kernel and after a 512 MiB read (no demotion):\n");
  std::printf("  HINT  z first                z again                  late z first             late z again\n");
  for (int k = 0; k < N; ++k)
    std::printf("  %4d  %s  %s  %s  %s\n", hints[k], cell(spans[k].z1).c_str(), cell(spans[k].z2).c_str(),
                cell(spans[k].z1_late).c_str(), cell(spans[k].z2_late).c_str());
  std::printf("  the kernel after a flush by read, nothing demoted (PyTorch's harness by default):\n");
  std::printf("  HINT  in turns                 back to back\n");
  for (int k = 0; k < N; ++k)
    std::printf("  %4d  %s  %s\n", hints[k], cell(spans[k].kept_turns).c_str(), cell(spans[k].kept_own).c_str());
  for (auto& e : ev) CHECK(cudaEventDestroy(e));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: store_policy ROWS REPS\n");
    return 2;
  }
  const long long rows = std::atoll(argv[1]);
  const int reps = std::atoi(argv[2]);
  if (rows <= 0 || reps < 10) {
    std::fprintf(stderr, "store_policy: ROWS must be positive and REPS at least 10\n");
    return 2;
  }
  int dev = 0, sms = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  uint4 *flush, *z;
  unsigned* sink;
  CHECK(cudaMalloc(&flush, kFlushBytes));
  CHECK(cudaMalloc(&z, kZBytes));
  CHECK(cudaMemset(z, 3, kZBytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMemset(flush, 1, kFlushBytes));
  run<__nv_bfloat16>("bf16", rows, reps, flush, z, sink, sms);
  run<float>("f32", rows, reps, flush, z, sink, sms);
  CHECK(cudaFree(flush));
  CHECK(cudaFree(z));
  CHECK(cudaFree(sink));
  return 0;
}
