// The residual add of the fused norms (templates/add_rmsnorm, add_rmsnorm_fp8): h = x + r for a
// thread's EPT vectors of VEC elements, from their raw loads xv and rv (vector e at column col(e);
// those at or past cols skipped). h is rounded to T and stored where the row is active, v is h as
// stored (0 past cols), and the thread's sum of squares of v is returned. Include after types.cuh and
// norm_access.cuh.
template <typename T, int EPT, int VEC, typename Raw, typename Col>
__device__ __forceinline__ float residual_add(const Raw (&xv)[EPT], const Raw (&rv)[EPT], T* __restrict__ h, long long at,
                                              long long cols, bool active, Col col, float (&v)[EPT][VEC]) {
  float sq = 0.f;
#pragma unroll
  for (int e = 0; e < EPT; ++e) {
    if (col(e) < cols) {
      float a[VEC], b[VEC];
      unpack<T>(xv[e], a);
      unpack<T>(rv[e], b);
#pragma unroll
      for (int k = 0; k < VEC; ++k) a[k] += b[k];
      const Raw hv = pack<T, Raw>(a);
      if (active) store<0>(reinterpret_cast<Raw*>(h + at + col(e)), hv);
      unpack<T>(hv, v[e]);  // h as stored
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k) v[e][k] = 0.f;
    }
#pragma unroll
    for (int k = 0; k < VEC; ++k) sq = fmaf(v[e][k], v[e][k], sq);
  }
  return sq;
}
