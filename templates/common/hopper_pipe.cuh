// The warp-specialised pipeline's parts shared by the Hopper GEMM templates (sm_90a): register
// hand-over between producer and consumers, mbarrier waits and arrivals (a cluster's pair
// included), the consumers' named barrier, C's store by TMA, and the persistent walk over the
// tiles. Included inside the template's namespace after wgmma.cuh; the including file has <cuda/ptx>
// and <cuda/std/cstdint>.

template <int N> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N)); }
template <int N> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N)); }

// All threads of both blocks of a cluster; orders the barriers' initialisation before their use.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// One arrival on the barrier at the same shared-memory offset in block `rank` of the cluster, with
// the default (CTA-scope) release: the wgmmas it follows only read shared memory, and a
// cluster-scope release would wait for the thread's earlier stores of C.
__device__ __forceinline__ void arrive_remote(cuda::std::uint64_t* bar, unsigned rank) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
               "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}" ::"r"(a), "r"(rank) : "memory");
}

// A consumer warp's release of a stage: to its own block's producer, and with CM 2 to the pair's.
template <int CM> __device__ __forceinline__ void release_stage(cuda::std::uint64_t* bar, unsigned rank) {
  cuda::ptx::mbarrier_arrive(bar);
  if constexpr (CM == 2) arrive_remote(bar, rank ^ 1u);
}

__device__ __forceinline__ void wait_parity(cuda::std::uint64_t* bar, unsigned parity) {
  namespace ptx = cuda::ptx;
  while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, bar, parity)) {
  }
}

// The 128 threads of consumer warpgroup `cw` (named barrier 1 + cw; 0 is __syncthreads').
__device__ __forceinline__ void consumer_sync(int cw) { asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory"); }

// Consumer warpgroups taking turns (ping-pong, ON): consumer cw waits on named barrier FIRST + cw for
// its turn (mine) and passes it on to the next in order (pass); consumer 0 goes first. Every
// consumer calls start() before its first turn and finish() after its last: they balance the
// barriers' arrivals (the last consumer's opening pass, consumer 0's closing wait). Off, all are
// nothing.
template <bool ON, int NC, int FIRST> struct Turns {
  int cw;
  __device__ __forceinline__ void start() const {
    if (ON && cw == NC - 1) asm volatile("bar.arrive %0, 256;\n" ::"n"(FIRST) : "memory");
  }
  __device__ __forceinline__ void mine() const {
    if constexpr (ON) asm volatile("bar.sync %0, 256;\n" ::"r"(FIRST + cw) : "memory");
  }
  __device__ __forceinline__ void pass() const {
    if constexpr (ON) asm volatile("bar.arrive %0, 256;\n" ::"r"(FIRST + (NC == 2 ? cw ^ 1 : (cw + 1) % NC)) : "memory");
  }
  __device__ __forceinline__ void finish() const {
    if (ON && cw == 0) asm volatile("bar.sync %0, 256;\n" ::"n"(FIRST) : "memory");
  }
};

// A consumer's ROWS x BN tile of C at (row0, col0), MI blocks of m64 accumulators, stored by TMA
// (tensor map tc, boxes of ROWS x 64 two-byte columns) through its shared-memory staging `sc`: the
// staging is free once the previous tile's store has read it, and TMA clips the store at m and n.
// The consumer goes on to its next tile while the copy engine writes this one. Needs wgmma.cuh.
// The staged tile stored by TMA once every thread of consumer cw has written its part of it.
template <int BN, int ROWS>
__device__ __forceinline__ void store_staged(const TmaMap* tc, unsigned char* sc, int row0, int col0, int cw) {
  namespace ptx = cuda::ptx;
  ptx::fence_proxy_async(ptx::space_shared);  // the threads' writes, seen by the copy engine
  consumer_sync(cw);
  if (threadIdx.x % 128 == 0) {
#pragma unroll
    for (int j = 0; j < BN / 64; ++j) {
      const int cc[2] = {col0 + 64 * j, row0};
      ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, tc, cc, sc + j * ROWS * 128);
    }
    ptx::cp_async_bulk_commit_group();
  }
}

template <int BN, int ROWS, int MI, typename T>
__device__ __forceinline__ void store_tile_tma(const TmaMap* tc, unsigned char* sc, const float (&d)[MI][BN / 2], int row0,
                                               int col0, int cw) {
  namespace ptx = cuda::ptx;
  if (threadIdx.x % 128 == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
  consumer_sync(cw);
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) stage_acc<BN, ROWS, T>(sc, d[mi], mi * 64);
  store_staged<BN, ROWS>(tc, sc, row0, col0, cw);
}

// Tile u of the walk: GROUP rows of (cluster) tiles along m at a time, their columns in order, so
// that the blocks running at once share their slices of A and B in L2.
struct TileAt {
  int tm, tn;
};
template <int GROUP> __device__ __forceinline__ TileAt tile_at(int u, int rows_of_units, int tiles_n) {
  const int per_group = GROUP * tiles_n, g = u / per_group, first = g * GROUP;
  const int height = min(rows_of_units - first, GROUP), local = u - g * per_group;
  return TileAt{first + local % height, local / height};
}
