// The rows of a looped norm kernel (LayerNorm, RMSNorm) in shared memory: copied there on the first
// read (STAGE 1, through registers) or ahead of it by cp.async (STAGE 2, double-buffered across row
// groups when the grid is persistent, so that the next group is in flight while this one is
// computed). TPR threads share a row, RPB rows a block; a thread stages and reads back only its own
// columns (lane * VEC + j * TPR * VEC), so the staging needs no barrier. Needs types.cuh and
// cp_async.cuh.
template <typename T, int TPR, int RPB, int VEC, int STAGE, int PERSIST>
struct RowStage {
  static_assert(TPR % 32 == 0 && TPR * RPB <= 1024, "TPR: whole warps; a block of at most 1024 threads");
  static_assert(VEC > 0 && (VEC & (VEC - 1)) == 0 && VEC * sizeof(T) <= 16, "VEC: a power of two, at most 16 bytes");
  static_assert(STAGE >= 0 && STAGE <= 2, "STAGE in 0..2");
  static_assert(STAGE != 2 || VEC * sizeof(T) >= 4, "cp.async moves 4, 8 or 16 bytes");
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  static constexpr bool DOUBLE = STAGE == 2 && PERSIST;  // prefetch the next row group into the other buffer

  unsigned char* staged;
  const T* x;
  long long rows, cols;
  int lane = threadIdx.x % TPR, group = threadIdx.x / TPR;
  long long groups = (rows + RPB - 1) / RPB;
  long long stride = (cols * static_cast<long long>(sizeof(T)) + 15) / 16 * 16;  // bytes per staged row

  __device__ __forceinline__ T* buffer(int slot) const {
    return reinterpret_cast<T*>(staged + (slot * RPB + group) * stride);
  }
  __device__ __forceinline__ void issue(long long g, int slot) const {  // cp.async the thread's part of row group g
    const long long row = g * RPB + group;
    if (g < groups && row < rows)
      for (long long c = static_cast<long long>(lane) * VEC; c < cols; c += TPR * VEC)
        cp_async<sizeof(Raw)>(buffer(slot) + c, x + row * cols + c);
    cp_async_commit();
  }
  // Before row group g is read from `slot`: its copy has landed, and the next group's is on its way.
  __device__ __forceinline__ void arrive(long long g, int slot) const {
    if constexpr (STAGE == 2) {
      if constexpr (DOUBLE) {
        issue(g + gridDim.x, slot ^ 1);
        cp_async_wait<1>();
      } else {
        cp_async_wait<0>();
      }
    }
  }
};
