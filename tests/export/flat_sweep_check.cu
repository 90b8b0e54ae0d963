// Builds against a header written by `soltune export --problem P` for a problem over [n] (gelu or
// l1norm) and nothing of soltune:
//   nvcc -std=c++17 -arch=sm_90 -DEXPORTED='"l1norm.cuh"' -DSWEEP_L1NORM flat_sweep_check.cu && ./a.out [N...]
// The size sweep: 30 sizes drawn once from a fixed seed (1 to 2^28: any size, primes, multiples of
// 8, powers of two and one past them), and any given on the command line, each in f32 and bf16
// through the exported launch functions on fresh random inputs with the output poisoned, compared
// with a double-precision CPU reference within the problem's tolerances. Each case also prints which
// kernel served it and its time beside a device copy moving the same bytes (medians of 10 flushed
// runs: a benchmark, not a check). Without a GPU it reports and exits 0.
#include EXPORTED

#include "check_common.cuh"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

using namespace check_common;

// The problem's exported functions per dtype, its tolerances, and whether it reduces to one value.
template <typename T> struct Api;
#if defined(SWEEP_GELU)
using namespace soltune_gelu;
CHECK_API(gelu, f32, float, 1e-6, 2e-6)
CHECK_API(gelu, bf16, __nv_bfloat16, 1e-3, 8e-3)
constexpr bool kReduces = false;
#define SWEEP_ARGS(x, y, ws, n) x, y, n
#elif defined(SWEEP_L1NORM)
using namespace soltune_l1norm;
CHECK_API(l1norm, f32, float, 0.0, 1e-5)
CHECK_API(l1norm, bf16, __nv_bfloat16, 0.0, 4e-3)
constexpr bool kReduces = true;
#define SWEEP_ARGS(x, y, ws, n) x, y, ws, n
#else
#error "define SWEEP_GELU or SWEEP_L1NORM"
#endif

// The reference in double: y[i] = gelu(x[i]) (tanh form), or y[0] = sum |x[i]|.
void reference(const std::vector<double>& x, std::vector<double>& y) {
#if defined(SWEEP_GELU)
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = 0.5 * x[i] * (1.0 + std::tanh(0.7978845608028654 * (x[i] + 0.044715 * x[i] * x[i] * x[i])));
#else
  y[0] = 0;
  for (double v : x) y[0] += std::fabs(v);
#endif
}

// The kernel an exported dispatch picks for a size.
template <typename F, typename P> int choose_with(F f, long long n, const Device& d, P* plan) {
  if constexpr (std::is_invocable_v<F, double, double, double, double, double, double, P*>)
    return f(n, d.sms, d.cc, d.optin, d.l2, static_cast<double>(kScratchBytes), plan);
  else return f(n, d.sms, d.cc, d.optin, d.l2, plan);
}

// 30 sizes, the same on every run: five kinds in turn, 1 to 2^28.
std::vector<long long> sweep_sizes() {
  std::mt19937_64 gen(20261204);
  std::uniform_real_distribution<double> lg(0.0, 28.0);
  std::vector<long long> out;
  for (int i = 0; i < 30; ++i) {
    const double l = lg(gen);
    long long n = std::max(1LL, static_cast<long long>(std::exp2(l)));
    switch (i % 5) {
      case 1: while (!is_prime(n)) ++n; break;          // prime
      case 2: n = (n + 7) / 8 * 8; break;                 // vector-friendly
      case 3: n = 1LL << static_cast<int>(l); break;      // a power of two
      case 4: n = (1LL << static_cast<int>(l)) + 1; break;  // one past it: a tail of one element
      default: break;
    }
    out.push_back(std::min(n, 1LL << 28));
  }
  return out;
}

template <typename T> bool check(long long n, const Device& dev, const Flush& flush, void* scratch, int* ws, unsigned seed,
                                 std::vector<double>& ratios) {
  using A = Api<T>;
  const long long outs = kReduces ? 1 : n;
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<T> x(n), y(outs);
  for (auto& v : x) v = T(dist(gen));
  typename A::Plan plan;
  const int which = choose_with(A::choice, n, dev, &plan);
  T *dx = nullptr, *dy = nullptr;
  CHECK(cudaMalloc(&dx, n * sizeof(T)));
  CHECK(cudaMalloc(&dy, outs * sizeof(T)));
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dy, 0xFF, outs * sizeof(T)));  // poison: unwritten elements read as NaN
  auto call = [&] { return launch_with(A::launch, scratch, kScratchBytes, SWEEP_ARGS(dx, dy, ws, n)); };
  CHECK(call());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(y.data(), dy, outs * sizeof(T), cudaMemcpyDeviceToHost));
  const float t = median_us(call, flush);
  // A copy moving the problem's bytes: x into y for an element-wise map; for a reduction, which
  // only reads x, half of x into a buffer of its own.
  const long long copy_elems = kReduces ? std::max(1LL, n / 2) : n;
  T* dc = dy;
  if (kReduces) CHECK(cudaMalloc(&dc, copy_elems * sizeof(T)));
  const float copy = median_us([&] { cudaMemcpyAsync(dc, dx, copy_elems * sizeof(T), cudaMemcpyDeviceToDevice); }, flush);
  CHECK(cudaGetLastError());
  cudaFree(dx);
  cudaFree(dy);
  if (kReduces) cudaFree(dc);
  std::vector<double> xr(n), ref(outs);
  for (long long i = 0; i < n; ++i) xr[i] = to_float(x[i]);
  reference(xr, ref);
  long long bad = 0;
  double worst = 0;
  for (long long i = 0; i < outs; ++i) {
    const double v = to_float(y[i]), err = std::fabs(v - ref[i]);
    if (!(err <= A::atol + A::rtol * std::fabs(ref[i]))) ++bad;
    if (!(err <= worst)) worst = std::isnan(v) ? INFINITY : err;
  }
  ratios.push_back(t / copy);
  std::printf("%-5s n=%-10lld %-8s %9.1f us (copy %8.1f us, %.2fx): %lld mismatches, max abs err %.3g -> %s\n", A::dtype, n,
              source_name(which >= 0 ? plan.source : -1), t, copy, t / copy, bad, worst, bad ? "FAIL" : "ok");
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (no_device()) return 0;
  const Device dev = Device::current();
  const Flush flush(dev.l2);
  auto sizes = sweep_sizes();
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  void* scratch = nullptr;
  int* ws = nullptr;  // the L1 norm's workspace: zeroed, and every launch leaves it so
  const size_t ws_bytes = sizeof(int) * (4 + 16 * static_cast<size_t>(dev.sms));
  if (cudaMalloc(&scratch, kScratchBytes) != cudaSuccess || cudaMalloc(&ws, ws_bytes) != cudaSuccess ||
      cudaMemset(ws, 0, ws_bytes) != cudaSuccess) {
    std::printf("FAIL: no scratch or workspace\n");
    return 1;
  }
  bool ok = true;
  unsigned seed = 1;
  std::vector<double> f32_ratios, bf16_ratios;
  for (long long n : sizes) {
    ok &= check<float>(n, dev, flush, scratch, ws, seed++, f32_ratios);
    ok &= check<__nv_bfloat16>(n, dev, flush, scratch, ws, seed++, bf16_ratios);
  }
  cudaFree(scratch);
  cudaFree(ws);
  return sweep_verdict(ok, f32_ratios, bf16_ratios);
}
