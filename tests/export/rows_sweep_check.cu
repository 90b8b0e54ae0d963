// Builds against a header written by `soltune export --problem P` for a problem over [rows, cols]
// (softmax, layernorm or rmsnorm) and nothing of soltune:
//   nvcc -std=c++17 -arch=sm_90 -DEXPORTED='"layernorm.cuh"' -DSWEEP_LAYERNORM rows_sweep_check.cu && ./a.out [ROWSxCOLS...]
// The shape sweep: 30 shapes drawn once from a fixed seed (1 to 2^17 per dimension: 1 x N, N x 1,
// primes, multiples of 8, at most 2^28 elements), and any given on the command line, each in f32 and
// bf16 through the exported launch functions on fresh random inputs with the output poisoned,
// compared with a double-precision CPU reference within the problem's tolerances. Each case also
// prints which kernel served it (tuned, nearest, fallback) and its time beside a device copy of the
// same bytes (medians of 10 flushed runs: a benchmark, not a check). Without a GPU it reports and
// exits 0.
#include EXPORTED

#include "check_common.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace check_common;

// The problem's exported functions per dtype and its tolerances.
template <typename T> struct Api;
#if defined(SWEEP_SOFTMAX)
using namespace soltune_softmax;
CHECK_API(softmax, f32, float, 1e-12, 1e-5)
CHECK_API(softmax, bf16, __nv_bfloat16, 1e-12, 8e-3)
#define SWEEP_INPUTS(x, w, b) x
#elif defined(SWEEP_LAYERNORM)
using namespace soltune_layernorm;
CHECK_API(layernorm, f32, float, 1e-5, 1e-5)
CHECK_API(layernorm, bf16, __nv_bfloat16, 1e-3, 8e-3)
#define SWEEP_INPUTS(x, w, b) x, w, b
#elif defined(SWEEP_RMSNORM)
using namespace soltune_rmsnorm;
CHECK_API(rmsnorm, f32, float, 1e-5, 1e-5)
CHECK_API(rmsnorm, bf16, __nv_bfloat16, 1e-3, 8e-3)
#define SWEEP_INPUTS(x, w, b) x, w
#else
#error "define SWEEP_SOFTMAX, SWEEP_LAYERNORM or SWEEP_RMSNORM"
#endif

// One row of the reference in double: softmax; LayerNorm (eps 1e-5, biased variance); RMSNorm (eps 1e-6).
void reference_row(const double* x, const double* w, const double* b, long long cols, double* y) {
#if defined(SWEEP_SOFTMAX)
  (void)w, (void)b;
  double m = -INFINITY, s = 0;
  for (long long c = 0; c < cols; ++c) m = std::max(m, x[c]);
  for (long long c = 0; c < cols; ++c) s += y[c] = std::exp(x[c] - m);
  for (long long c = 0; c < cols; ++c) y[c] /= s;
#elif defined(SWEEP_LAYERNORM)
  double mean = 0, var = 0;
  for (long long c = 0; c < cols; ++c) mean += x[c];
  mean /= cols;
  for (long long c = 0; c < cols; ++c) var += (x[c] - mean) * (x[c] - mean);
  const double rstd = 1 / std::sqrt(var / cols + 1e-5);
  for (long long c = 0; c < cols; ++c) y[c] = (x[c] - mean) * rstd * w[c] + b[c];
#else
  (void)b;
  double q = 0;
  for (long long c = 0; c < cols; ++c) q += x[c] * x[c];
  const double rstd = 1 / std::sqrt(q / cols + 1e-6);
  for (long long c = 0; c < cols; ++c) y[c] = x[c] * rstd * w[c];
#endif
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

// The kernel an exported dispatch picks for a shape (given the scratch, where the header takes it).
template <typename F, typename P> int choose_with(F f, long long r, long long c, const Device& d, P* plan) {
  if constexpr (std::is_invocable_v<F, double, double, double, double, double, double, double, P*>)
    return f(r, c, d.sms, d.cc, d.optin, d.l2, static_cast<double>(kScratchBytes), plan);
  else return f(r, c, d.sms, d.cc, d.optin, d.l2, plan);
}

template <typename T>
bool check(long long rows, long long cols, const Device& dev, const Flush& flush, void* scratch, unsigned seed,
           std::vector<double>& ratios) {
  using A = Api<T>;
  const long long n = rows * cols;
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f), param(1.0f, 0.5f);
  std::vector<T> x(n), y(n), w(cols), b(cols);
  for (auto& v : x) v = T(dist(gen));
  for (auto& v : w) v = T(param(gen));
  for (auto& v : b) v = T(param(gen) - 1.0f);
  typename A::Plan plan;
  const int which = choose_with(A::choice, rows, cols, dev, &plan);
  const int source = which >= 0 ? plan.source : -1;
  T *dx = nullptr, *dy = nullptr, *dw = nullptr, *db = nullptr;
  CHECK(cudaMalloc(&dx, n * sizeof(T)));
  CHECK(cudaMalloc(&dy, n * sizeof(T)));
  CHECK(cudaMalloc(&dw, cols * sizeof(T)));
  CHECK(cudaMalloc(&db, cols * sizeof(T)));
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dw, w.data(), cols * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), cols * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dy, 0xFF, n * sizeof(T)));  // poison: unwritten elements read as NaN
  auto call = [&] { return launch_with(A::launch, scratch, kScratchBytes, SWEEP_INPUTS(dx, dw, db), dy, rows, cols); };
  CHECK(call());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(y.data(), dy, n * sizeof(T), cudaMemcpyDeviceToHost));
  const float t = median_us(call, flush);
  const float copy = median_us([&] { cudaMemcpyAsync(dy, dx, n * sizeof(T), cudaMemcpyDeviceToDevice); }, flush);
  CHECK(cudaGetLastError());
  for (T* p : {dx, dy, dw, db}) cudaFree(p);
  long long bad = 0;
  double worst = 0;
  std::vector<double> xr(cols), wr(cols), br(cols), ref(cols);
  for (long long c = 0; c < cols; ++c) wr[c] = to_float(w[c]), br[c] = to_float(b[c]);
  for (long long r = 0; r < rows; ++r) {
    for (long long c = 0; c < cols; ++c) xr[c] = to_float(x[r * cols + c]);
    reference_row(xr.data(), wr.data(), br.data(), cols, ref.data());
    for (long long c = 0; c < cols; ++c) {
      const double v = to_float(y[r * cols + c]), err = std::fabs(v - ref[c]);
      if (!(err <= A::atol + A::rtol * std::fabs(ref[c]))) ++bad;
      if (!(err <= worst)) worst = std::isnan(v) ? INFINITY : err;
    }
  }
  ratios.push_back(t / copy);
  std::printf("%-5s %9lld x %-9lld %-8s %9.1f us (copy %8.1f us, %.2fx): %lld mismatches, max abs err %.3g -> %s\n", A::dtype,
              rows, cols, source_name(source), t, copy, t / copy, bad, worst,
              bad ? "FAIL" : "ok");
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (no_device()) return 0;
  const Device dev = Device::current();
  const Flush flush(dev.l2);
  auto shapes = sweep_shapes();
  for (int i = 1; i < argc; ++i) {
    long long r = 0, c = 0;
    if (std::sscanf(argv[i], "%lldx%lld", &r, &c) == 2) shapes.emplace_back(r, c);
  }
  void* scratch = nullptr;
  if (cudaMalloc(&scratch, kScratchBytes) != cudaSuccess) {
    std::printf("FAIL: no %zu bytes of scratch\n", kScratchBytes);
    return 1;
  }
  bool ok = true;
  unsigned seed = 1;
  std::vector<double> f32_ratios, bf16_ratios;
  for (const auto& [rows, cols] : shapes) {
    ok &= check<float>(rows, cols, dev, flush, scratch, seed++, f32_ratios);
    ok &= check<__nv_bfloat16>(rows, cols, dev, flush, scratch, seed++, bf16_ratios);
  }
  cudaFree(scratch);
  return sweep_verdict(ok, f32_ratios, bf16_ratios);
}
