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
