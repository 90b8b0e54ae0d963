// Builds against a header written by `soltune export --problem gelu` and nothing of soltune:
//   nvcc -std=c++17 -arch=sm_90 -DEXPORTED='"gelu.cuh"' gelu_export_check.cu && ./a.out [N...]
// With a GPU it runs both exported launch functions on fresh random inputs, at tuned and untuned
// sizes, and compares with a double-precision CPU reference; without one it reports and exits 0.
#include EXPORTED

#include "check_common.cuh"

#include <cuda_bf16.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using check_common::to_float;

double gelu_ref(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

template <typename T, typename Launch>
bool check(const char* name, long long n, Launch launch, double atol, double rtol, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<T> x(n), y(n);
  for (auto& v : x) v = T(dist(gen));
  T *dx = nullptr, *dy = nullptr;
  CHECK(cudaMalloc(&dx, n * sizeof(T)));
  CHECK(cudaMalloc(&dy, n * sizeof(T)));
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dy, 0xFF, n * sizeof(T)));  // poison: unwritten elements read as NaN
  CHECK(launch(dx, dy, n));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(y.data(), dy, n * sizeof(T), cudaMemcpyDeviceToHost));
  cudaFree(dx);
  cudaFree(dy);
  long long bad = 0;
  double worst = 0;
  for (long long i = 0; i < n; ++i) {
    const double r = gelu_ref(to_float(x[i])), v = to_float(y[i]);
    const double err = std::fabs(v - r);
    if (!(err <= atol + rtol * std::fabs(r))) ++bad;
    if (err > worst || std::isnan(v)) worst = std::isnan(v) ? INFINITY : err;
  }
  std::printf("%s n=%lld: %lld mismatches, max abs err %.3g -> %s\n", name, n, bad, worst, bad ? "FAIL" : "ok");
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (check_common::no_device()) return 0;
  bool ok = true;
  // The tuned size first, then sizes no one tuned (odd tails included); or the sizes given.
  std::vector<long long> sizes = {268435456LL, 1000003LL, 12345LL, 1LL};
  if (argc > 1) sizes.clear();
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  for (long long n : sizes) {
    ok &= check<float>("f32", n, [](const float* x, float* y, long long m) { return soltune_gelu::gelu_f32(x, y, m); },
                       1e-6, 2e-6, 1u + static_cast<unsigned>(n));
    ok &= check<__nv_bfloat16>("bf16", n,
                               [](const __nv_bfloat16* x, __nv_bfloat16* y, long long m) { return soltune_gelu::gelu_bf16(x, y, m); },
                               1e-3, 8e-3, 2u + static_cast<unsigned>(n));
  }
  std::printf(ok ? "exported header: all checks passed\n" : "exported header: FAILED\n");
  return ok ? 0 : 1;
}
