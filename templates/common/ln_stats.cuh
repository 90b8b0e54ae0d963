// LayerNorm's reduction states (rowreg, looped), after group_allreduce.cuh (float's shfl). Sum1:
// one sum; Sum2: sum and sum of squares; Wel: count, mean and M2, merged with Chan's formula (a
// zero state is the identity of every combine).
struct Sum1 { float s; };
struct Sum2 { float s, q; };
struct Wel { float n, m, m2; };
__device__ __forceinline__ Sum1 combine(Sum1 a, Sum1 b) { return {a.s + b.s}; }
__device__ __forceinline__ Sum2 combine(Sum2 a, Sum2 b) { return {a.s + b.s, a.q + b.q}; }
__device__ __forceinline__ Wel combine(Wel a, Wel b) {
  const float n = a.n + b.n;
  if (n == 0.f) return a;
  const float d = b.m - a.m, f = b.n / n;
  return {n, fmaf(d, f, a.m), a.m2 + b.m2 + d * d * a.n * f};
}
__device__ __forceinline__ Sum1 shfl(Sum1 v, int m) { return {shfl(v.s, m)}; }
__device__ __forceinline__ Sum2 shfl(Sum2 v, int m) { return {shfl(v.s, m), shfl(v.q, m)}; }
__device__ __forceinline__ Wel shfl(Wel v, int m) { return {shfl(v.n, m), shfl(v.m, m), shfl(v.m2, m)}; }

// STATS 0: the mean, then centred squares (two reductions); 1: Welford / Chan (one); 2: shifted
// sums (one).
template <int STATS> struct StatsOf { using type = Sum1; };
template <> struct StatsOf<1> { using type = Wel; };
template <> struct StatsOf<2> { using type = Sum2; };
