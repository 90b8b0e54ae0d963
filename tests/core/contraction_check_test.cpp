// The correctness check of a contraction (templates/matmul's tolerance), on GEMMs simulated on the
// host with the arithmetic a kernel would use: every right way of summing passes at any k up to
// 16384 and in every input distribution the checking rounds draw; the usual wrong kernels fail. The
// projection that checks timed repetitions passes every row of those sums, the scaled 8-bit
// product's too (templates/matmul_fp8), and fails most rows of work skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "core/problem.hpp"
#include "core/task.hpp"
#include "core/tolerance.hpp"

namespace soltune {
namespace {

// Round to nearest even with `bits` significand bits; below `min_normal`, a fixed spacing (subnormals).
double round_to(double x, int bits, double min_normal, double max_finite) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(std::max(std::fabs(x), min_normal), &e);
  const double scale = std::ldexp(1.0, bits - e);
  const double r = std::nearbyint(x * scale) / scale;
  return std::fabs(r) > max_finite ? std::copysign(INFINITY, r) : r;
}
double to_bf16(double x) { return round_to(x, 8, 0x1p-126, 3.3895313892515355e38); }
double to_f16(double x) { return round_to(x, 11, 0x1p-14, 65504.0); }
double to_tf32(double x) { return round_to(x, 11, 0x1p-126, 3.4e38); }
// Toward zero with `bits` significand bits: a tensor core's adder, which truncates where f32 FMA
// rounds (24 bits; about 14 in Hopper's FP8 accumulator).
double truncate_bits(double x, int bits) {
  if (x == 0) return x;
  int e = 0;
  std::frexp(x, &e);
  const double scale = std::ldexp(1.0, bits - e);
  return std::trunc(x * scale) / scale;
}
double truncate_f32(double x) { return truncate_bits(x, 24); }

struct Gemm {
  int m = 12, n = 12, k = 0;
  std::vector<double> a, b;  // already rounded to the dtype, as the device stores them
};

// The three distributions every correctness run draws (cuda_task_state.cpp's draw_inputs):
// normal(0, 1) as declared, eight times wider, and shifted down by twice the spread.
Gemm draw(int k, int dist, DType dt, uint64_t seed, int m = 12, int n = 12) {
  Gemm g;
  g.m = m, g.n = n, g.k = k;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(dist == 2 ? -2.0 : 0.0, dist == 1 ? 8.0 : 1.0);
  auto store = [&](double v) { return dt == DType::bf16 ? to_bf16(v) : dt == DType::f16 ? to_f16(v) : double(float(v)); };
  for (int i = 0; i < g.m * k; ++i) g.a.push_back(store(nd(rng)));
  for (int i = 0; i < k * g.n; ++i) g.b.push_back(store(nd(rng)));
  return g;
}

using Kernel = std::function<double(const Gemm&, int i, int j)>;  // the f32 accumulator of C[i][j]

struct Checked {
  Accuracy acc;
  std::string why;
};

Checked check(const Gemm& g, DType dt, const Kernel& kernel, bool skip_last_column = false) {
  static const ProblemSpec p = load_problem(SOLTUNE_SOURCE_DIR "/templates", "matmul");
  std::vector<double> out, ref, mag;
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      double r = 0, s = 0;
      for (int q = 0; q < g.k; ++q) {
        r += g.a[i * g.k + q] * g.b[q * g.n + j];
        s += std::fabs(g.a[i * g.k + q] * g.b[q * g.n + j]);
      }
      ref.push_back(r);
      mag.push_back(s);
      const double c = kernel(g, i, j);
      const double stored = dt == DType::bf16 ? to_bf16(c) : dt == DType::f16 ? to_f16(c) : c;
      out.push_back(skip_last_column && j == g.n - 1 ? NAN : stored);  // unwritten: the poison
    }
  const Task t{&p, &p.variants.front(), dt, Shape{{{"m", g.m}, {"n", g.n}, {"k", g.k}, {"trans_b", 0}}}};
  const double max_finite = dt == DType::f16 ? 65504.0 : 3.3895313892515355e38;
  Checked c{compare_on_host(out, ref, mag, p.tolerance.at(dt), t.sizes(), max_finite), ""};
  c.why = c.acc.summary();
  return c;
}

// f32 FMA in k order, as a SIMT kernel (and mma.sync's f32 accumulators between k steps) does.
double fma_order(const Gemm& g, int i, int j) {
  float acc = 0;
  for (int q = 0; q < g.k; ++q) acc = std::fma(float(g.a[i * g.k + q]), float(g.b[q * g.n + j]), acc);
  return acc;
}
// Blocks of 16 products summed exactly, added to the accumulator with truncation: a tensor core.
double tensor_core(const Gemm& g, int i, int j) {
  double acc = 0;
  for (int q0 = 0; q0 < g.k; q0 += 16) {
    double s = acc;
    for (int q = q0; q < std::min(g.k, q0 + 16); ++q) s += g.a[i * g.k + q] * g.b[q * g.n + j];
    acc = truncate_f32(s);
  }
  return acc;
}
// Split-K: four f32 partial sums over quarters of k, added at the end.
double split_k(const Gemm& g, int i, int j) {
  float total = 0;
  for (int part = 0; part < 4; ++part) {
    float acc = 0;
    for (int q = part * g.k / 4; q < (part + 1) * g.k / 4; ++q)
      acc = std::fma(float(g.a[i * g.k + q]), float(g.b[q * g.n + j]), acc);
    total += acc;
  }
  return total;
}

const DType kAll[] = {DType::f32, DType::bf16, DType::f16};

TEST(ContractionCheck, EveryRightWayOfSummingPassesAtAnyKAndWidth) {
  for (int k : {16, 999, 4096, 16384})
    for (int dist = 0; dist < 3; ++dist)
      for (DType dt : kAll)
        for (const auto& [name, kernel] : std::vector<std::pair<const char*, Kernel>>{
                 {"fma", fma_order}, {"tensor core", tensor_core}, {"split-k", split_k}}) {
          const auto g = draw(k, dist, dt, 1000 * k + 10 * dist + static_cast<int>(dt));
          const auto c = check(g, dt, kernel);
          EXPECT_TRUE(c.acc.pass) << name << " " << dtype_name(dt) << " k=" << k << " dist " << dist << ": " << c.why;
        }
}

TEST(ContractionCheck, WrongGemmsFail) {
  const int k = 8192;
  for (int dist = 0; dist < 3; ++dist)
    for (DType dt : kAll) {
      const auto g = draw(k, dist, dt, 77 + dist);
      const std::string at = std::string(dtype_name(dt)) + " dist " + std::to_string(dist);
      // Accumulating in bf16 instead of f32.
      auto bf16_acc = [](const Gemm& g, int i, int j) {
        double acc = 0;
        for (int q = 0; q < g.k; ++q) acc = to_bf16(acc + g.a[i * g.k + q] * g.b[q * g.n + j]);
        return acc;
      };
      EXPECT_FALSE(check(g, dt, bf16_acc).acc.pass) << "bf16 accumulation, " << at;
      // One k-tile of 32 dropped.
      auto dropped = [](const Gemm& g, int i, int j) {
        float acc = 0;
        for (int q = 0; q < g.k; ++q)
          if (q / 32 != 100) acc = std::fma(float(g.a[i * g.k + q]), float(g.b[q * g.n + j]), acc);
        return double(acc);
      };
      EXPECT_FALSE(check(g, dt, dropped).acc.pass) << "dropped k-tile, " << at;
      // The last column left unwritten (a skipped tail).
      EXPECT_FALSE(check(g, dt, fma_order, true).acc.pass) << "skipped column, " << at;
    }
}

TEST(ContractionCheck, AKTailSkippedFails) {
  // k = 8200: a kernel that runs only whole tiles of 32 drops the last 8 products.
  for (int dist = 0; dist < 3; ++dist)
    for (DType dt : kAll) {
      const auto g = draw(8200, dist, dt, 5 + dist);
      auto tiles_only = [](const Gemm& g, int i, int j) {
        float acc = 0;
        for (int q = 0; q < g.k / 32 * 32; ++q) acc = std::fma(float(g.a[i * g.k + q]), float(g.b[q * g.n + j]), acc);
        return double(acc);
      };
      EXPECT_FALSE(check(g, dt, tiles_only).acc.pass) << dtype_name(dt) << " dist " << dist;
    }
}

TEST(ContractionCheck, Tf32InputsFailAnF32Gemm) {
  // Caught by the precision check in the zero-mean rounds. In the shifted round every product is
  // positive and the inputs' rounding errors average out of the sum (rel L2 about 5e-6): that round
  // cannot tell, and the evaluator fails a candidate on any round.
  for (int k : {1024, 8192})
    for (int dist = 0; dist < 2; ++dist) {
      const auto g = draw(k, dist, DType::f32, 9 + dist);
      auto tf32 = [](const Gemm& g, int i, int j) {
        float acc = 0;
        for (int q = 0; q < g.k; ++q)
          acc = std::fma(float(to_tf32(g.a[i * g.k + q])), float(to_tf32(g.b[q * g.n + j])), acc);
        return double(acc);
      };
      const auto c = check(g, DType::f32, tf32);
      EXPECT_FALSE(c.acc.pass) << "k=" << k << " dist " << dist << ": " << c.why;
      EXPECT_FALSE(c.acc.precision_ok) << "TF32 is caught as lower precision than declared";
    }
}

TEST(ContractionCheck, AnInfIsRightOnlyWhereTheReferenceRoundsPastTheLargestValue) {
  static const ProblemSpec p = load_problem(SOLTUNE_SOURCE_DIR "/templates", "matmul");
  Tolerance tol = p.tolerance.at(DType::f16);
  const Bindings k16{{"k", 16384}};
  // mtol * mag = (2 * 16384 + 4) * 2^-24 * 65600 = 128.1: the band around 65600 reaches past 65504.
  EXPECT_TRUE(compare_on_host({INFINITY}, {65600}, {65600}, tol, k16, 65504).pass);
  EXPECT_FALSE(compare_on_host({-INFINITY}, {65600}, {65600}, tol, k16, 65504).pass);  // the wrong side
  EXPECT_FALSE(compare_on_host({INFINITY}, {1000}, {65600}, tol, k16, 65504).pass);    // far inside
  EXPECT_FALSE(compare_on_host({NAN}, {65600}, {65600}, tol, k16, 65504).pass);        // NaN never
}

// The projection check of timed repetitions (SOLTUNE_PROJECTION_BOUND), as the device runs it, on a
// candidate's C (values as stored): the rows whose projection is off, for one draw of signs.
// Rows of C off by the projection check (eval/timed_check.cpp on the host) under `tol`, matmul's
// for dt where none is given.
int rows_off(const Gemm& g, DType dt, const std::vector<double>& c, uint64_t seed, const Tolerance* given = nullptr) {
  static const ProblemSpec p = load_problem(SOLTUNE_SOURCE_DIR "/templates", "matmul");
  const Tolerance& tol = given ? *given : p.tolerance.at(dt);
  const double mtol = tol.mtol.eval(Bindings{{"m", g.m}, {"n", g.n}, {"k", g.k}, {"trans_b", 0}});
  std::mt19937_64 rng(seed);
  std::vector<double> x(static_cast<size_t>(g.n)), y(static_cast<size_t>(g.k), 0), bsum(y), bmax(y);
  for (auto& v : x) v = rng() >> 63 ? -1.0 : 1.0;
  for (int q = 0; q < g.k; ++q)
    for (int j = 0; j < g.n; ++j) {
      const double v = g.b[q * g.n + j];
      y[q] += v * x[j];
      bsum[q] += std::fabs(v);
      bmax[q] = std::max(bmax[q], std::fabs(v));
    }
  int off = 0;
  for (int i = 0; i < g.m; ++i) {
    double z = 0, msum = 0, mmax = 0, w = 0, c2 = 0, cabs = 0;
    for (int q = 0; q < g.k; ++q) {
      const double v = g.a[i * g.k + q];
      z += v * y[q];
      msum += std::fabs(v) * bsum[q];
      mmax += std::fabs(v) * bmax[q];
    }
    for (int j = 0; j < g.n; ++j) {
      const double v = c[i * g.n + j];
      w += v * x[j];
      c2 += v * v;
      cabs += std::fabs(v);
    }
    const double bound = SOLTUNE_PROJECTION_BOUND(double(g.n), double(g.k), tol.atol, tol.rtol, mtol, c2, mmax, msum, cabs,
                                                  kProjectionZscore);
    off += !(std::fabs(w - z) <= bound);
  }
  return off;
}

std::vector<double> run(const Gemm& g, DType dt, const Kernel& kernel) {
  std::vector<double> c;
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      const double v = kernel(g, i, j);
      c.push_back(dt == DType::bf16 ? to_bf16(v) : dt == DType::f16 ? to_f16(v) : double(float(v)));
    }
  return c;
}

TEST(ProjectionCheck, EveryRightWayOfSummingPassesEveryRow) {
  for (int k : {64, 4096})
    for (int dist = 0; dist < 3; ++dist)
      for (DType dt : kAll) {
        const auto g = draw(k, dist, dt, 3000 + k + 10 * dist + static_cast<int>(dt), 16, 512);
        for (const auto& [name, kernel] : std::vector<std::pair<const char*, Kernel>>{
                 {"fma", fma_order}, {"tensor core", tensor_core}, {"split-k", split_k}}) {
          const auto c = run(g, dt, kernel);
          for (uint64_t seed = 0; seed < 4; ++seed)
            EXPECT_EQ(rows_off(g, dt, c, seed), 0) << name << " " << dtype_name(dt) << " k=" << k << " dist " << dist;
        }
      }
}

// One row off fails the check. The bound is as loose as the band (k f32 roundings per element, at
// every element at once) and the magnitudes' bound make it: a row's power depends on how far its
// errors reach past that, and a wrong kernel is caught by its many rows. Here 16 rows of 512.
TEST(ProjectionCheck, WorkSkippedInATimedRepetitionFailsMostRows) {
  const int k = 4096;
  for (DType dt : kAll) {
    const auto g = draw(k, 0, dt, 41 + static_cast<int>(dt), 16, 512);
    const auto other = draw(k, 0, dt, 4100 + static_cast<int>(dt), 16, 512);
    const std::string at = dtype_name(dt).data();
    // The previous repetition's result, on other inputs: what a kernel that skips a call leaves.
    EXPECT_GE(rows_off(g, dt, run(other, dt, fma_order), 1), 8) << "stale result, " << at;
    // Half of k summed.
    auto half_k = [](const Gemm& h, int i, int j) {
      float acc = 0;
      for (int q = 0; q < h.k / 2; ++q) acc = std::fma(float(h.a[i * h.k + q]), float(h.b[q * h.n + j]), acc);
      return double(acc);
    };
    EXPECT_GE(rows_off(g, dt, run(g, dt, half_k), 2), 6) << "half of k, " << at;
    // Every other column left at zero.
    auto holes = [](const Gemm& h, int i, int j) { return j % 2 == 0 ? 0.0 : fma_order(h, i, j); };
    EXPECT_GE(rows_off(g, dt, run(g, dt, holes), 3), 4) << "columns skipped, " << at;
  }
}

// The scaled 8-bit product (templates/matmul_fp8, scaled_gemm_projection): the projection reads
// each element of A and B times its scale, exact in double, so it sees a Gemm of the scaled values.
// A kernel like wgmma_ws: each k32 step's products summed exactly into the tensor core's
// accumulator of 14 significant bits, truncated; every 128 k that sum promoted into f32 (times the
// block's scales there, or the row's and the tensor's at the end); C rounded to bf16.
struct Fp8Gemm {
  int m = 16, n = 512, k = 0, mode = 0;
  std::vector<double> a, b, sa, sb;  // A m x k and B n x k in e4m3's values; the scales as matmul_fp8 lays them out
  double scale_a(int i, int q) const { return mode == 0 ? sa[0] : mode == 1 ? sa[i] : sa[(q / 128) * m + i]; }
  double scale_b(int j, int q) const { return mode == 0 ? sb[0] : mode == 1 ? sb[j] : sb[(j / 128) * ((k + 127) / 128) + q / 128]; }
  Gemm scaled() const {  // what the check reads: (sa A) and (sb B)^T as a k x n B
    Gemm g;
    g.m = m, g.n = n, g.k = k;
    for (int i = 0; i < m; ++i)
      for (int q = 0; q < k; ++q) g.a.push_back(a[i * k + q] * scale_a(i, q));
    for (int q = 0; q < k; ++q)
      for (int j = 0; j < n; ++j) g.b.push_back(b[j * k + q] * scale_b(j, q));
    return g;
  }
};

double to_e4m3(double x) { return round_to(x, 4, 0x1p-6, 448.0); }

Fp8Gemm draw_fp8(int k, int mode, uint64_t seed) {
  Fp8Gemm g;
  g.k = k, g.mode = mode;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  std::uniform_real_distribution<double> ud(0.25, 4.0);  // problem.yaml's init of the scales
  for (int i = 0; i < g.m * k; ++i) g.a.push_back(to_e4m3(nd(rng)));
  for (int i = 0; i < g.n * k; ++i) g.b.push_back(to_e4m3(nd(rng)));
  const int kb = (k + 127) / 128;
  const int na = mode == 0 ? 1 : mode == 1 ? g.m : g.m * kb, nb = mode == 0 ? 1 : mode == 1 ? g.n : ((g.n + 127) / 128) * kb;
  for (int i = 0; i < na; ++i) g.sa.push_back(double(float(ud(rng))));
  for (int i = 0; i < nb; ++i) g.sb.push_back(double(float(ud(rng))));
  return g;
}

// C's bf16 values by the kernel above, summing k up to k_end (all of it where negative); `b_scaled`
// false leaves B's scales out.
std::vector<double> run_fp8(const Fp8Gemm& g, bool b_scaled = true, int k_end = -1) {
  const int ke = k_end < 0 ? g.k : k_end;
  std::vector<double> c;
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      float total = 0;
      double acc = 0;
      for (int q0 = 0; q0 < ke; q0 += 32) {
        double s = acc;
        for (int q = q0; q < std::min(ke, q0 + 32); ++q) s += g.a[i * g.k + q] * g.b[j * g.k + q];
        acc = truncate_bits(s, 14);
        const bool slice_end = (q0 + 32) % 128 == 0 || q0 + 32 >= ke;
        if (slice_end) {
          const double sc = g.mode == 2 ? g.scale_a(i, q0) * (b_scaled ? g.scale_b(j, q0) : 1.0) : 1.0;
          total = std::fma(float(acc), float(sc), total);
          acc = 0;
        }
      }
      if (g.mode != 2) total = total * float(g.scale_a(i, 0)) * float(b_scaled ? g.scale_b(j, 0) : 1.0);
      c.push_back(to_bf16(total));
    }
  return c;
}

const Tolerance& fp8_tolerance() {
  static const ProblemSpec p = load_problem(SOLTUNE_SOURCE_DIR "/templates", "matmul_fp8");
  return p.tolerance.at(DType::e4m3);
}

TEST(ProjectionCheck, ScaledFp8WithPromotionPassesEveryRowInEveryScaleMode) {
  for (int k : {512, 4096})
    for (int mode : {0, 1, 2}) {
      const auto g = draw_fp8(k, mode, 700 + k + mode);
      const auto c = run_fp8(g);
      const Gemm s = g.scaled();
      for (uint64_t seed = 0; seed < 4; ++seed)
        EXPECT_EQ(rows_off(s, DType::e4m3, c, seed, &fp8_tolerance()), 0) << "k=" << k << " scale " << mode;
    }
}

// One row off fails the repetition. The 8-bit accumulation's band (2^-11 of the magnitude) and the
// magnitudes' bound (mmax msum, loose by the largest scaled |B| over the mean) make the projection's
// bound wide here: each mistake fails a few rows of 16 (2 to 6 at these seeds), and the exact rows,
// compared element by element, catch it whatever the projection does.
TEST(ProjectionCheck, ScaledFp8WorkSkippedOrScalesDroppedFailRows) {
  const int k = 4096;
  for (int mode : {0, 1, 2}) {
    const auto g = draw_fp8(k, mode, 900 + mode), other = draw_fp8(k, mode, 990 + mode);
    const Gemm s = g.scaled();
    EXPECT_GE(rows_off(s, DType::e4m3, run_fp8(other), 1, &fp8_tolerance()), 2) << "stale result, scale " << mode;
    EXPECT_GE(rows_off(s, DType::e4m3, run_fp8(g, true, k / 2), 2, &fp8_tolerance()), 2) << "half of k, scale " << mode;
    if (mode != 0) {  // one scale per tensor may sit near 1
      EXPECT_GE(rows_off(s, DType::e4m3, run_fp8(g, false), 3, &fp8_tolerance()), 2) << "B's scales dropped, scale " << mode;
    }
  }
}

}  // namespace
}  // namespace soltune
