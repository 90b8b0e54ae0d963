// The chunk of a row that block b of a split-row plan owns (softmax, LayerNorm and RMSNorm `split`):
// rows are cut into chunks of CHUNK elements, one block per chunk of every row, in row order.
// cols % VEC == 0, so a chunk holds whole vectors and the last one of a row may be short.
template <int CHUNK, int VEC> struct SplitChunk {
  long long row, chunks, col, begin;  // its row, the row's chunk count, its first column and element
  int nvec;                           // its vectors
  __device__ SplitChunk(long long b, long long cols) {
    chunks = (cols + CHUNK - 1) / CHUNK;
    row = b / chunks;
    col = (b - row * chunks) * CHUNK;
    begin = row * cols + col;
    const long long left = cols - col;
    nvec = static_cast<int>((left < CHUNK ? left : CHUNK) / VEC);
  }
};
// The elements of chunk j of a row of cols (its count in a statistics merge).
__device__ __forceinline__ float split_chunk_count(long long j, long long chunk, long long cols) {
  const long long left = cols - j * chunk;
  return static_cast<float>(left < chunk ? left : chunk);
}

// Block b's chunk of a row of x as vectors of VEC elements of T (cols % VEC == 0), walked in steps of
// the block: a thread reads UNROLL vectors a step, BLOCK apart (j0, j0 + BLOCK, ...), those inside
// the chunk, under the norms' HINT (norm_access.cuh, included before this file with types.cuh).
template <typename T, int BLOCK, int VEC, int UNROLL, int STEPS, int HINT>
struct SplitBlock : SplitChunk<BLOCK * VEC * UNROLL * STEPS, VEC> {
  static_assert(sizeof(T) * VEC <= 16 && VEC > 0 && (VEC & (VEC - 1)) == 0, "VEC: a power of two, at most 16 bytes");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: whole warps");
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  static constexpr int CHUNK = BLOCK * VEC * UNROLL * STEPS;  // elements
  static constexpr int STEP = BLOCK * UNROLL;                 // vectors per step of the block
  const Raw* xv;  // the chunk's first vector
  __device__ SplitBlock(long long b, const T* x, long long cols)
      : SplitChunk<CHUNK, VEC>(b, cols), xv(reinterpret_cast<const Raw*>(x + this->begin)) {}
  // Whether the e-th vector of the thread's step from j0 lies in the chunk.
  __device__ __forceinline__ bool in(int j0, int e) const { return j0 + e * BLOCK < this->nvec; }
  // The thread's step from vector j0, by the first read of x (first) or the last (last).
  __device__ __forceinline__ void first(Raw (&buf)[UNROLL], int j0) const {
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (in(j0, e)) buf[e] = first_read<HINT>(xv + j0 + e * BLOCK);
  }
  __device__ __forceinline__ void last(Raw (&buf)[UNROLL], int j0) const {
#pragma unroll
    for (int e = 0; e < UNROLL; ++e)
      if (in(j0, e)) buf[e] = last_read<HINT>(xv + j0 + e * BLOCK);
  }
};

// Programmatic dependent launch (the plan's second launch is `programmatic`): the first launch lets
// the second start once all its blocks run, and the second reads x (no launch's output) before it
// waits for the first's pairs. Both are no-ops before sm_90 and in a launch made without it.
__device__ __forceinline__ void split_release_dependents() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void split_wait_for_stats() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
