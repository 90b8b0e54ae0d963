// Softmax of long rows split over a thread-block cluster (sm_90): the CLUSTER blocks of a cluster
// share a row, each holding its slice in registers, so that a 50k-wide row is read once with few
// registers per thread and several blocks per SM. Each block reduces its slice to (max, sum of
// exp(x - max)) with warp shuffles and one shared-memory exchange; the blocks then read each
// other's pairs through distributed shared memory after one cluster barrier. GRID 0: a cluster
// per row; GRID k: a persistent grid of about k blocks per SM, clusters looping over rows.
// Computes in f32 whatever the storage type.
#include <cuda_bf16.h>

namespace softmax_cluster_detail {

#include "../common/types.cuh"
#include "../common/softmax_math.cuh"

template <int HINT, typename R> __device__ __forceinline__ R load(const R* p) {
  if constexpr (HINT) return __ldcs(p); else return *p;
}
template <int HINT, typename R> __device__ __forceinline__ void store(R* p, R v) {
  if constexpr (HINT) __stcs(p, v); else *p = v;
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// All threads of all blocks of the cluster; orders shared-memory writes before it with reads after.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// Reads a float at the same shared-memory offset in block `rank` of the cluster.
__device__ __forceinline__ float ld_cluster(const float* p, unsigned rank) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  unsigned ra;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(a), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(ra) : "memory");
  return v;
}

}  // namespace softmax_cluster_detail

template <typename T, int CLUSTER, int BLOCK, int VEC, int EPT, int HINT, int FAST_EXP>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(BLOCK)
    softmax_cluster(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols_ll) {
  static_assert(sizeof(T) * VEC <= 16 && VEC > 0 && (VEC & (VEC - 1)) == 0, "VEC: a power of two, at most 16 bytes");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024 && CLUSTER >= 1 && CLUSTER <= 8, "BLOCK: warps; CLUSTER: at most 8 (portable)");
  using namespace softmax_cluster_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int NW = BLOCK / 32;
  constexpr bool INPLACE = sizeof(T) == 4;  // f32 keeps exp(x - local max) where x was
  // Per row parity, so that the next row's writes need no extra barrier (see the hazards below).
  __shared__ float wm[2][NW], ws[2][NW];  // per-warp partials
  __shared__ float part[2][2];            // this block's (max, sum), read by the whole cluster

  const int cols = static_cast<int>(cols_ll);
  const int nvec = cols / VEC;  // cols % VEC == 0 (a constraint)
  const unsigned rank = cluster_rank();
  const long long nclusters = gridDim.x / CLUSTER;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Vector j of the row: block-sized chunks dealt round-robin to the blocks of the cluster.
  auto vec_index = [&](int e) { return (e * CLUSTER + static_cast<int>(rank)) * BLOCK + static_cast<int>(threadIdx.x); };

  int par = 0;
  // The loop bound is the same for every block of a cluster: all reach every cluster barrier.
  for (long long row = blockIdx.x / CLUSTER; row < rows; row += nclusters, par ^= 1) {
    const Raw* xv = reinterpret_cast<const Raw*>(x + row * cols_ll);
    Raw* yv = reinterpret_cast<Raw*>(y + row * cols_ll);
    Raw buf[EPT];
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (vec_index(e) < nvec) buf[e] = load<HINT>(xv + vec_index(e));
    float m = neg_inf(), s = 0.0f;
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (vec_index(e) < nvec) {
        const T* v = reinterpret_cast<const T*>(&buf[e]);
#pragma unroll
        for (int k = 0; k < VEC; ++k) m = fmaxf(m, to_f(v[k]));
      }
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (vec_index(e) < nvec) {
        T* v = reinterpret_cast<T*>(&buf[e]);
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          const float ev = ex<FAST_EXP>(to_f(v[k]) - m);
          if constexpr (INPLACE) v[k] = from_f<T>(ev);
          s += ev;
        }
      }
    const float mt = m;  // this thread's max, which its in-place exps are relative to

    // Block: warps, then every warp combines the warps' pairs (wm/ws[par] are rewritten two rows
    // later, after this row's successor has passed a barrier that follows these reads).
    warp_combine<FAST_EXP>(m, s);
    if (lane == 0) {
      wm[par][warp] = m;
      ws[par][warp] = s;
    }
    __syncthreads();
    m = lane < NW ? wm[par][lane] : neg_inf();
    s = lane < NW ? ws[par][lane] : 0.0f;
    warp_combine<FAST_EXP>(m, s);

    // Cluster: publish this block's pair, wait for everyone's, read them all (part[par] is
    // rewritten two rows later, after the next row's cluster barrier, which every reader of this
    // row's pairs reaches only after reading them).
    if (threadIdx.x == 0) {
      part[par][0] = m;
      part[par][1] = s;
    }
    cluster_sync();
    float pm[CLUSTER], ps[CLUSTER];
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) {
      pm[r] = ld_cluster(&part[par][0], r);
      ps[r] = ld_cluster(&part[par][1], r);
    }
    float M = neg_inf(), S = 0.0f;
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) combine<FAST_EXP>(M, S, pm[r], ps[r]);

    const float inv = 1.0f / S;
    // f32: y = exp(x - mt) * exp(mt - M) / S; mt is finite wherever this thread has elements.
    const float scale = INPLACE ? ex<FAST_EXP>(mt - M) * inv : inv;
#pragma unroll
    for (int e = 0; e < EPT; ++e)
      if (vec_index(e) < nvec) {
        const T* v = reinterpret_cast<const T*>(&buf[e]);
        Raw o;
        T* ov = reinterpret_cast<T*>(&o);
#pragma unroll
        for (int k = 0; k < VEC; ++k)
          ov[k] = from_f<T>((INPLACE ? to_f(v[k]) : ex<FAST_EXP>(to_f(v[k]) - M)) * scale);
        store<HINT>(yv + vec_index(e), o);
      }
  }
  cluster_sync();  // no block may exit while another can still read its shared memory
}
