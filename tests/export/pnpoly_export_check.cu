// Builds against a header written by `soltune export --problem pnpoly` and nothing of soltune:
//   nvcc -std=c++17 -arch=sm_90 -DEXPORTED='"pnpoly.cuh"' pnpoly_export_check.cu && ./a.out [N...]
// With a GPU it calls the exported launch function on fresh random points and a random polygon of
// 600 vertices (given once from host memory, once from device memory), at tuned and untuned point
// counts, and compares with a double-precision CPU crossing-number test; a polygon size no kernel
// was built for must be refused. Without a GPU it reports and exits 0.
#include EXPORTED

#include "check_common.cuh"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

constexpr int kVertices = 600;

int crossing(const std::vector<float>& v, double px, double py) {
  bool c = false;
  for (int a = 0, b = kVertices - 1; a < kVertices; b = a++) {
    const double ax = v[2 * a], ay = v[2 * a + 1], bx = v[2 * b], by = v[2 * b + 1];
    if ((ay > py) != (by > py) && px < (bx - ax) * (py - ay) / (by - ay) + ax) c = !c;
  }
  return c;
}

bool check(long long n, bool polygon_on_device, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float2> pts(n);
  std::vector<float> poly(2 * kVertices);
  for (auto& p : pts) p = make_float2(u(gen), u(gen));
  for (auto& x : poly) x = u(gen);
  float2* dp = nullptr;
  int* dout = nullptr;
  float* dpoly = nullptr;
  CHECK(cudaMalloc(&dp, n * sizeof(float2)));
  CHECK(cudaMalloc(&dout, n * sizeof(int)));
  CHECK(cudaMalloc(&dpoly, poly.size() * sizeof(float)));
  CHECK(cudaMemcpy(dp, pts.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dpoly, poly.data(), poly.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dout, 0xFF, n * sizeof(int)));  // poison: unwritten answers read as -1
  CHECK(soltune_pnpoly::pnpoly_f32(dp, polygon_on_device ? dpoly : poly.data(), dout, n, kVertices));
  CHECK(cudaDeviceSynchronize());
  std::vector<int> got(n);
  CHECK(cudaMemcpy(got.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  const bool refused = soltune_pnpoly::pnpoly_f32(dp, dpoly, dout, n, kVertices + 1) == cudaErrorInvalidValue;
  cudaFree(dp);
  cudaFree(dout);
  cudaFree(dpoly);
  long long wrong = 0, invalid = 0, in = 0;
  for (long long i = 0; i < n; ++i) {
    if (got[i] != 0 && got[i] != 1) ++invalid;
    const int want = crossing(poly, pts[i].x, pts[i].y);
    in += want;
    wrong += got[i] != want;
  }
  // Within f32 rounding of an edge a point may fall either side: about 1 in 10^5 (problem.yaml).
  const bool ok = invalid == 0 && static_cast<double>(wrong) <= 1e-4 * static_cast<double>(n) && refused;
  std::printf("n=%lld (polygon in %s memory): %lld inside, %lld disagree, %lld not 0 or 1, nv=%d %s -> %s\n", n,
              polygon_on_device ? "device" : "host", in, wrong, invalid, kVertices + 1,
              refused ? "refused" : "NOT refused", ok ? "ok" : "FAIL");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (check_common::no_device()) return 0;
  std::vector<long long> sizes = {1048576LL, 1000003LL, 4099LL, 1LL};
  if (argc > 1) sizes.clear();
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  bool ok = true;
  for (long long n : sizes) {
    ok &= check(n, false, 11u + static_cast<unsigned>(n));
    ok &= check(n, true, 12u + static_cast<unsigned>(n));
  }
  std::printf(ok ? "exported header: all checks passed\n" : "exported header: FAILED\n");
  return ok ? 0 : 1;
}
