// Builds against a header written by `soltune export --problem softmax` and nothing of soltune:
//   nvcc -std=c++17 -arch=sm_90 -DEXPORTED='"softmax.cuh"' softmax_sweep_check.cu && ./a.out [ROWSxCOLS...]
// The shape sweep: 30 shapes drawn once from a fixed seed (1 to 2^17 per dimension: 1 x N, N x 1,
// primes, multiples of 8, at most 2^28 elements), and any given on the command line, each in f32 and
// bf16 through the exported launch functions on fresh random inputs with the output poisoned,
// compared with a double-precision CPU reference. Each case also prints which kernel served it
// (tuned, nearest, fallback) and its time beside a device copy of the same bytes (medians of 10
// flushed runs: a benchmark, not a check). Without a GPU it reports and exits 0.
#include EXPORTED

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace soltune_softmax;

float to_float(float v) { return v; }
float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(e_));                         \
      return false;                                                                        \
    }                                                                                      \
  } while (0)

struct Device {
  double sms = 0, cc = 0, optin = 0, l2 = 0;
};

bool is_prime(long long v) {
  if (v < 2) return false;
  for (long long d = 2; d * d <= v; ++d)
    if (v % d == 0) return false;
  return true;
}

// 30 shapes, the same on every run: five kinds in turn, at most 2^28 elements.
std::vector<std::pair<long long, long long>> sweep_shapes() {
  std::mt19937_64 gen(20261203);
  std::uniform_real_distribution<double> lg(0.0, 17.0);
  auto draw = [&] { return std::max(1LL, static_cast<long long>(std::exp2(lg(gen)))); };
  std::vector<std::pair<long long, long long>> out;
  for (int i = 0; i < 30; ++i) {
    long long r = draw(), c = draw();
    switch (i % 5) {
      case 1: r = 1; break;   // one long row
      case 2: c = 1; break;   // rows of one element
      case 3:                 // both prime
        while (!is_prime(r) && r > 1) ++r;
        while (!is_prime(c)) ++c;
        break;
      case 4: c = (c + 7) / 8 * 8; break;  // vector-friendly widths
      default: break;
    }
    if (r * c > (1LL << 28)) r = std::max(1LL, (1LL << 28) / c);
    out.emplace_back(r, c);
  }
  return out;
}

// An L2 flush: a buffer twice the L2 read and written between timed runs.
struct Flush {
  void* p = nullptr;
  size_t bytes = 0;
  explicit Flush(double l2) : bytes(static_cast<size_t>(2 * l2)) { cudaMalloc(&p, bytes); }
  ~Flush() { cudaFree(p); }
  void operator()() const { cudaMemsetAsync(p, 0x5a, bytes); }
};

template <typename F> float median_us(F&& f, const Flush& flush) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();  // warm-up
  std::vector<float> t;
  for (int i = 0; i < 10; ++i) {
    flush();
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000.0f);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The scratch a call asks for, per dtype.
template <typename T> long long scratch_bytes_of(long long r, long long c, const Device& d);
template <> long long scratch_bytes_of<float>(long long r, long long c, const Device& d) {
  return softmax_f32_scratch_bytes(r, c, d.sms, d.cc, d.optin, d.l2);
}
template <> long long scratch_bytes_of<__nv_bfloat16>(long long r, long long c, const Device& d) {
  return softmax_bf16_scratch_bytes(r, c, d.sms, d.cc, d.optin, d.l2);
}

template <typename T, typename Launch, typename Choice>
bool check(const char* dtype, long long rows, long long cols, Launch launch, Choice choice, double rtol, const Device& dev,
           const Flush& flush, unsigned seed, std::vector<double>& ratios) {
  const long long n = rows * cols;
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<T> x(n), y(n);
  for (auto& v : x) v = T(dist(gen));
  int source = -1;
  const int which = choice(rows, cols, source);
  T *dx = nullptr, *dy = nullptr;
  void* scratch = nullptr;
  const long long need = which >= 0 ? std::max(256LL, scratch_bytes_of<T>(rows, cols, dev)) : 256;
  CHECK(cudaMalloc(&dx, n * sizeof(T)));
  CHECK(cudaMalloc(&dy, n * sizeof(T)));
  CHECK(cudaMalloc(&scratch, need));
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dy, 0xFF, n * sizeof(T)));  // poison: unwritten elements read as NaN
  CHECK(launch(dx, dy, rows, cols, scratch, need));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(y.data(), dy, n * sizeof(T), cudaMemcpyDeviceToHost));
  const float t = median_us([&] { launch(dx, dy, rows, cols, scratch, need); }, flush);
  const float copy = median_us([&] { cudaMemcpyAsync(dy, dx, n * sizeof(T), cudaMemcpyDeviceToDevice); }, flush);
  CHECK(cudaGetLastError());
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(scratch);
  long long bad = 0;
  double worst = 0;
  std::vector<double> e(cols);
  for (long long r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (long long c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(to_float(x[r * cols + c])));
    for (long long c = 0; c < cols; ++c) s += e[c] = std::exp(static_cast<double>(to_float(x[r * cols + c])) - m);
    for (long long c = 0; c < cols; ++c) {
      const double ref = e[c] / s, v = to_float(y[r * cols + c]);
      const double err = std::fabs(v - ref);
      if (!(err <= 1e-12 + rtol * ref)) ++bad;
      if (!(err <= worst)) worst = std::isnan(v) ? INFINITY : err;
    }
  }
  ratios.push_back(t / copy);
  static const char* kSource[] = {"tuned", "nearest", "fallback"};
  std::printf("%-5s %9lld x %-9lld %-8s %9.1f us (copy %8.1f us, %.2fx): %lld mismatches, max abs err %.3g -> %s\n", dtype,
              rows, cols, source >= 0 && source <= 2 ? kSource[source] : "none", t, copy, t / copy, bad, worst,
              bad ? "FAIL" : "ok");
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: nothing to check\n");
    return 0;
  }
  Device dev;
  int v = 0;
  cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0);
  dev.sms = v;
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  dev.cc = major * 10 + minor;
  cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  dev.optin = v;
  cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, 0);
  dev.l2 = v;
  const Flush flush(dev.l2);
  auto shapes = sweep_shapes();
  for (int i = 1; i < argc; ++i) {
    long long r = 0, c = 0;
    if (std::sscanf(argv[i], "%lldx%lld", &r, &c) == 2) shapes.emplace_back(r, c);
  }
  bool ok = true;
  unsigned seed = 1;
  std::vector<double> f32_ratios, bf16_ratios;
  for (const auto& [rows, cols] : shapes) {
    ok &= check<float>("f32", rows, cols,
                       [](const float* x, float* y, long long r, long long c, void* s, long long b) {
                         return softmax_f32(x, y, r, c, s, static_cast<size_t>(b));
                       },
                       [&](long long r, long long c, int& src) {
                         softmax_f32_plan p;
                         const int j = softmax_f32_choice(r, c, dev.sms, dev.cc, dev.optin, dev.l2, 1e300, &p);
                         src = j >= 0 ? p.source : -1;
                         return j;
                       },
                       1e-5, dev, flush, seed++, f32_ratios);
    ok &= check<__nv_bfloat16>("bf16", rows, cols,
                               [](const __nv_bfloat16* x, __nv_bfloat16* y, long long r, long long c, void* s, long long b) {
                                 return softmax_bf16(x, y, r, c, s, static_cast<size_t>(b));
                               },
                               [&](long long r, long long c, int& src) {
                                 softmax_bf16_plan p;
                                 const int j = softmax_bf16_choice(r, c, dev.sms, dev.cc, dev.optin, dev.l2, 1e300, &p);
                                 src = j >= 0 ? p.source : -1;
                                 return j;
                               },
                               8e-3, dev, flush, seed++, bf16_ratios);
  }
  for (auto* r : {&f32_ratios, &bf16_ratios}) std::sort(r->begin(), r->end());
  std::printf("median time / copy time over the sweep: f32 %.2fx, bf16 %.2fx\n", f32_ratios[f32_ratios.size() / 2],
              bf16_ratios[bf16_ratios.size() / 2]);
  std::printf(ok ? "all checks passed\n" : "some checks FAILED\n");
  return ok ? 0 : 1;
}
