// Builds against a header written by `soltune export --problem matmul` (bf16 specializations, with or
// without plans that take scratch, as mma_sync's split-K) and nothing of soltune:
//   nvcc -std=c++17 -arch=sm_90 -DEXPORTED='"matmul.cuh"' matmul_export_check.cu && ./a.out M,N,K,TB ...
// For each shape it draws fresh inputs, sizes the scratch with matmul_bf16_scratch_bytes (none where
// the header takes none), poisons C
// and the scratch, calls matmul_bf16 and compares with a double-precision GPU reference under the
// contraction band |c - ref| <= 1e-6 + 2^-8 |ref| + (2k + 4) 2^-24 (|A| |B|)_ij. Then it calls again
// with no scratch: the header must fall back to a plan without it or refuse, never launch short.
#include EXPORTED

#include "check_common.cuh"

#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

// What a header without scratch lacks: its scratch query, the worst match for any arguments, so
// that the header's own wins wherever it has one.
namespace no_scratch {
inline long long matmul_bf16_scratch_bytes(...) { return 0; }
}  // namespace no_scratch

namespace {

using check_common::launch_with;

// C and (|A| |B|) in double, one thread per element; B as k x n, or n x k with tb.
__global__ void reference(const __nv_bfloat16* a, const __nv_bfloat16* b, double* c, double* mag, long long m,
                          long long n, long long k, int tb) {
  const long long col = blockIdx.x * 16LL + threadIdx.x, row = blockIdx.y * 16LL + threadIdx.y;
  if (row >= m || col >= n) return;
  double acc = 0, s = 0;
  for (long long i = 0; i < k; ++i) {
    const double x = __bfloat162float(a[row * k + i]);
    const double y = __bfloat162float(tb ? b[col * k + i] : b[i * n + col]);
    acc += x * y;
    s += std::fabs(x * y);
  }
  c[row * n + col] = acc;
  mag[row * n + col] = s;
}

struct Facts {
  int sms = 0, cc = 0, optin = 0, l2 = 0;
};

bool check(long long m, long long n, long long k, int tb, const Facts& f, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<__nv_bfloat16> a(m * k), b(k * n), c(m * n);
  for (auto& v : a) v = __float2bfloat16(dist(gen));
  for (auto& v : b) v = __float2bfloat16(dist(gen));
  __nv_bfloat16 *da, *db, *dc;
  double *dref, *dmag;
  CHECK(cudaMalloc(&da, a.size() * 2));
  CHECK(cudaMalloc(&db, b.size() * 2));
  CHECK(cudaMalloc(&dc, c.size() * 2));
  CHECK(cudaMalloc(&dref, c.size() * 8));
  CHECK(cudaMalloc(&dmag, c.size() * 8));
  CHECK(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  reference<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16)>>>(da, db, dref, dmag, m, n, k, tb);
  CHECK(cudaGetLastError());
  using namespace soltune_matmul;
  using namespace no_scratch;
  const long long need = matmul_bf16_scratch_bytes(m, n, k, tb, f.sms, f.cc, f.optin, f.l2);
  if (need < 0) {
    std::printf("FAIL %lldx%lldx%lld tb=%d: no plan\n", m, n, k, tb);
    return false;
  }
  void* scratch = nullptr;
  if (need > 0) CHECK(cudaMalloc(&scratch, need));
  if (need > 0) CHECK(cudaMemset(scratch, 0xFF, need));  // poison: what a plan reads unwritten is NaN
  CHECK(cudaMemset(dc, 0xFF, c.size() * 2));
  if (const cudaError_t e = launch_with(&soltune_matmul::matmul_bf16, scratch, static_cast<size_t>(need), da, db, dc, m, n, k, tb);
      e != cudaSuccess) {
    std::printf("FAIL %lldx%lldx%lld tb=%d: the call returned %s\n", m, n, k, tb, cudaGetErrorString(e));
    if (scratch) cudaFree(scratch);
    return false;
  }
  CHECK(cudaDeviceSynchronize());
  std::vector<double> ref(c.size()), mag(c.size());
  CHECK(cudaMemcpy(c.data(), dc, c.size() * 2, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(ref.data(), dref, ref.size() * 8, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(mag.data(), dmag, mag.size() * 8, cudaMemcpyDeviceToHost));
  long long bad = 0;
  const double mtol = (2.0 * k + 4) * std::ldexp(1.0, -24);
  for (size_t i = 0; i < c.size(); ++i) {
    const double v = __bfloat162float(c[i]);
    if (!(std::fabs(v - ref[i]) <= 1e-6 + std::ldexp(1.0, -8) * std::fabs(ref[i]) + mtol * mag[i])) ++bad;
  }
  // Without scratch the call takes a plan that needs none, or launches nothing.
  CHECK(cudaMemset(dc, 0xFF, c.size() * 2));
  const cudaError_t bare = launch_with(&soltune_matmul::matmul_bf16, nullptr, 0, da, db, dc, m, n, k, tb);
  CHECK(cudaDeviceSynchronize());
  long long bare_bad = 0;
  if (bare == cudaSuccess) {
    CHECK(cudaMemcpy(c.data(), dc, c.size() * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < c.size(); ++i) {
      const double v = __bfloat162float(c[i]);
      if (!(std::fabs(v - ref[i]) <= 1e-6 + std::ldexp(1.0, -8) * std::fabs(ref[i]) + mtol * mag[i])) ++bare_bad;
    }
  } else if (bare != cudaErrorInvalidValue) {
    std::printf("FAIL without scratch: %s\n", cudaGetErrorString(bare));
    ++bare_bad;
  }
  (void)cudaGetLastError();
  std::printf("%lldx%lldx%lld tb=%d: scratch %lld bytes, %lld outside the band; without scratch %s, %lld -> %s\n", m, n,
              k, tb, need, bad, bare == cudaSuccess ? "ran" : "refused", bare_bad, bad || bare_bad ? "FAIL" : "ok");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dref);
  cudaFree(dmag);
  if (scratch) cudaFree(scratch);
  return bad == 0 && bare_bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (check_common::no_device()) return 0;
  Facts f;
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  cudaDeviceGetAttribute(&f.optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  cudaDeviceGetAttribute(&f.l2, cudaDevAttrL2CacheSize, 0);
  f.cc = major * 10 + minor;
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    long long m = 0, n = 0, k = 0;
    int tb = 0;
    if (std::sscanf(argv[i], "%lld,%lld,%lld,%d", &m, &n, &k, &tb) != 4) {
      std::printf("bad shape '%s' (expected M,N,K,TB)\n", argv[i]);
      return 2;
    }
    failed += !check(m, n, k, tb, f, 1234u + static_cast<unsigned>(i));
  }
  std::printf(failed ? "%d check(s) FAILED\n" : "all checks passed\n", failed);
  return failed ? 1 : 0;
}
