// Residual add and RMSNorm with the row held in registers: TPR threads share a row (a warp up to a
// whole block), RPB rows per block; each thread loads EPT vectors of VEC elements of x and of r, all
// issued before the first use, so each is read from memory exactly once. h = x + r is rounded to T,
// stored, and normed as stored (what PyTorch's two lines compute); y follows the block's reduction.
#include <cuda_bf16.h>

namespace add_rms_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/group_allreduce.cuh"
#include "../common/residual_add.cuh"

}  // namespace add_rms_detail

// BPS: the blocks per SM asked of __launch_bounds__ (it caps registers). HINT 1: x, r and y streamed
// (evict-first), h stored by default (the next layer reads it); 2: the weight kept in L1 and L2.
template <typename T, int TPR, int RPB, int VEC, int EPT, int BPS, int HINT>
__global__ void __launch_bounds__(TPR * RPB, BPS)
add_rmsnorm_rowreg(const T* __restrict__ x, const T* __restrict__ r, const T* __restrict__ weight, T* __restrict__ h,
                   T* __restrict__ y, long long rows, long long cols, float eps) {
  using namespace add_rms_detail;
  static_assert(TPR % 32 == 0 && TPR * RPB <= 1024, "TPR: whole warps; a block of at most 1024 threads");
  static_assert(VEC > 0 && (VEC & (VEC - 1)) == 0 && VEC * sizeof(T) <= 16, "VEC: a power of two, at most 16 bytes");
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  __shared__ float scratch[RPB * TPR / 32];

  const int lane = threadIdx.x % TPR;
  const long long row = static_cast<long long>(blockIdx.x) * RPB + threadIdx.x / TPR;
  const bool active = row < rows;
  // A row past the last is computed from row 0 and not stored: no zeroing or branch per vector.
  const long long at = (active ? row : 0) * cols;
  // Vector e of a thread starts at column (e * TPR + lane) * VEC: a warp's accesses are contiguous.
  auto col = [&](int e) { return static_cast<long long>(e * TPR + lane) * VEC; };
  constexpr int XR = HINT == 1 ? 1 : 0;

  Raw xv[EPT], rv[EPT];
#pragma unroll
  for (int e = 0; e < EPT; ++e) {
    if (col(e) < cols) {
      xv[e] = load<XR>(reinterpret_cast<const Raw*>(x + at + col(e)));
      rv[e] = load<XR>(reinterpret_cast<const Raw*>(r + at + col(e)));
    }
  }
  float v[EPT][VEC];
  const float q = residual_add<T>(xv, rv, h, at, cols, active, col, v);
  const float ms = group_allreduce<TPR, 0>(q, scratch) / static_cast<float>(cols);
  const float rstd = rsqrtf(ms + eps);
  if (!active) return;
#pragma unroll
  for (int e = 0; e < EPT; ++e) {
    if (col(e) >= cols) continue;
    float w[VEC], o[VEC];
    unpack<T>(param_read<HINT == 2 ? 2 : 0>(reinterpret_cast<const Raw*>(weight + col(e))), w);
#pragma unroll
    for (int k = 0; k < VEC; ++k) o[k] = v[e][k] * rstd * w[k];
    store<XR>(reinterpret_cast<Raw*>(y + at + col(e)), pack<T, Raw>(o));
  }
}
