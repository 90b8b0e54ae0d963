// Bench (not a test): all of y kept in L2, or only its start? RMSNorm rowreg 32768x1024 at the
// session-14 pick (TPR 32, RPB 4, VEC 16 bytes, RED 1, BPS 4) with HINT 2 (nothing kept), 3 (all of y
// kept), 4-7 (only y's first 16, 24, 32, 48 MiB kept), each timed
// in turns with a stand-in for torch.compile's kernel (Triton's design: a warp per row, HINT 2)
// writing the same y, in a random order per repetition. Two conditions: cold for both (the GPU idle,
// evict_last lines demoted, 256 MiB read) and PyTorch's harness by default (the 256 MiB read only:
// what one kernel keeps in L2 is there for the other). Prints medians and the paired difference;
// then each alone, its repetitions back to back by the harness's default (an output buffer reused
// call after call, as under CUDA graphs).
// HINT 4-7 are not in the template: build against the working copy of session 15's call 6,
//   git apply bench/results/s15/s15d_rowreg_head_kept.patch
// (call 2's HINT 4-7, y's lines demoted by applypriority: s15a2_rowreg_released.patch; call 3's, only
// y's last 16-40 MiB kept: s15a3_rowreg_tail_kept.patch, with those names; BENCHMARKS.md).
//   nvcc -O3 -arch=sm_90 -std=c++17 -o release_policy bench/release_policy.cu
//   release_policy REPS
#include "../templates/rmsnorm/rowreg.cu"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_check.cuh"
#include "flush_read.cuh"
#include "rms_inputs.cuh"

namespace {

constexpr long long kRows = 32768, kCols = 1024;
constexpr size_t kFlushBytes = 256ull << 20;  // the harness's (triton.testing.do_bench's) flush

float q(std::vector<float> v, double f) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(f * (v.size() - 1))];
}

template <typename T> void run(const char* dtype, int reps, const uint4* flush, unsigned* sink, int sms) {
  constexpr int VEC = 16 / sizeof(T), EPT = kCols * sizeof(T) / (32 * 16);
  using K = void (*)(const T*, const T*, T*, long long, long long, float);
  struct V { const char* name; K k; int rpb; };
  const V vs[] = {
      {"HINT 2 (nothing kept)", rmsnorm_rowreg<T, 32, 4, VEC, EPT, 1, 0, 4, 0, 0, 2, 1, kCols>, 4},
      {"HINT 3 (kept)", rmsnorm_rowreg<T, 32, 4, VEC, EPT, 1, 0, 4, 0, 0, 3, 1, kCols>, 4},
      {"HINT 4 (first 16 MiB kept)", rmsnorm_rowreg<T, 32, 4, VEC, EPT, 1, 0, 4, 0, 0, 4, 1, kCols>, 4},
      {"HINT 5 (first 24 MiB kept)", rmsnorm_rowreg<T, 32, 4, VEC, EPT, 1, 0, 4, 0, 0, 5, 1, kCols>, 4},
      {"HINT 6 (first 32 MiB kept)", rmsnorm_rowreg<T, 32, 4, VEC, EPT, 1, 0, 4, 0, 0, 6, 1, kCols>, 4},
      {"HINT 7 (first 48 MiB kept)", rmsnorm_rowreg<T, 32, 4, VEC, EPT, 1, 0, 4, 0, 0, 7, 1, kCols>, 4},
  };
  const V other{"Triton's design", rmsnorm_rowreg<T, 32, 1, VEC, EPT, 0, 0, 1, 0, 0, 2, 1, kCols>, 1};
  const long long n = kRows * kCols;
  const RmsInputs<T> in(kRows, kCols, sms);
  T *x = in.x, *w = in.w, *y = in.y;
  auto launch = [&](const V& v) {
    v.k<<<static_cast<unsigned>((kRows + v.rpb - 1) / v.rpb), 32 * v.rpb>>>(x, w, y, kRows, kCols, 1e-6f);
  };

  // Every variant writes the same y bit for bit as Triton's design (the hints change no arithmetic).
  std::vector<T> ref(n), got(n);
  CHECK(cudaMemset(y, 0xff, n * sizeof(T)));
  launch(other);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(ref.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost));
  for (const V& v : vs) {
    CHECK(cudaMemset(y, 0xff, n * sizeof(T)));
    launch(v);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), ref.data(), n * sizeof(T)) != 0) {
      std::fprintf(stderr, "%s wrote another y than Triton's design\n", v.name);
      std::exit(1);
    }
  }

  cudaEvent_t ev[2];
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  auto timed = [&](const V& v, bool cold) {
    if (cold) {
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaCtxResetPersistingL2Cache());
    }
    flush_read<<<4 * sms, 512>>>(flush, kFlushBytes / sizeof(uint4), sink);
    CHECK(cudaEventRecord(ev[0]));
    launch(v);
    CHECK(cudaEventRecord(ev[1]));
    CHECK(cudaEventSynchronize(ev[1]));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    return ms * 1e3f;
  };
  std::printf("%s %lldx%lld, %d repetitions in turns with Triton's design; median us (p25-p75)\n", dtype, kRows,
              kCols, reps);
  std::printf("  %-36s %-8s %-21s %-21s %-24s %s\n", "variant", "cond", "variant", "Triton's design",
              "variant - Triton", "Triton after variant");
  for (const V& v : vs) {
    for (bool cold : {true, false}) {
      std::mt19937 rng(7);
      std::vector<float> a, b, d, b_after;
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaCtxResetPersistingL2Cache());
      for (int r = -5; r < reps; ++r) {
        const bool first = rng() & 1;
        float ta, tb;
        if (first) { ta = timed(v, cold); tb = timed(other, cold); }
        else { tb = timed(other, cold); ta = timed(v, cold); }
        if (r < 0) continue;
        a.push_back(ta);
        b.push_back(tb);
        d.push_back(ta - tb);
        if (first) b_after.push_back(tb);
      }
      std::printf("  %-36s %-8s %7.2f (%5.2f-%5.2f)  %7.2f (%5.2f-%5.2f)  %+6.2f (%+5.2f to %+5.2f)  %7.2f\n", v.name,
                  cold ? "cold" : "default", q(a, .5), q(a, .25), q(a, .75), q(b, .5), q(b, .25), q(b, .75),
                  q(d, .5), q(d, .25), q(d, .75), q(b_after, .5));
    }
  }
  std::printf("  alone, back to back, by the harness's default: median us (p25-p75)\n");
  auto alone = [&](const V& v) {
    std::vector<float> a;
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaCtxResetPersistingL2Cache());
    for (int r = -5; r < reps; ++r) {
      const float t = timed(v, false);
      if (r >= 0) a.push_back(t);
    }
    std::printf("  %-36s %7.2f (%5.2f-%5.2f)\n", v.name, q(a, .5), q(a, .25), q(a, .75));
  };
  alone(other);
  for (const V& v : vs) alone(v);
  for (auto& e : ev) CHECK(cudaEventDestroy(e));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::atoi(argv[1]) < 10) {
    std::fprintf(stderr, "usage: release_policy REPS (at least 10)\n");
    return 2;
  }
  const int reps = std::atoi(argv[1]);
  int dev = 0, sms = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  uint4* flush;
  unsigned* sink;
  CHECK(cudaMalloc(&flush, kFlushBytes));
  CHECK(cudaMemset(flush, 1, kFlushBytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  run<__nv_bfloat16>("bf16", reps, flush, sink, sms);
  run<float>("f32", reps, flush, sink, sms);
  CHECK(cudaFree(flush));
  CHECK(cudaFree(sink));
  return 0;
}
