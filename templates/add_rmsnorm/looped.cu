// Residual add and RMSNorm for rows of any width: a block of TPR threads per row walks it in chunks
// of TPR * VEC * UNROLL elements, writing h = x + r (rounded to T) and summing its squares, then
// walks it again reading h back (from L2, where the first pass just left it) for y. The kernel of
// last resort: VEC 1 serves every width.
#include <cuda_bf16.h>

namespace add_rms_detail {

#include "../common/types.cuh"
#include "../common/norm_access.cuh"
#include "../common/group_allreduce.cuh"

}  // namespace add_rms_detail

template <typename T, int TPR, int VEC, int UNROLL>
__global__ void __launch_bounds__(TPR)
add_rmsnorm_looped(const T* __restrict__ x, const T* __restrict__ r, const T* __restrict__ weight, T* __restrict__ h,
                   T* __restrict__ y, long long rows, long long cols, float eps) {
  using namespace add_rms_detail;
  static_assert(TPR % 32 == 0 && TPR <= 1024, "TPR: whole warps, at most 1024");
  static_assert(VEC > 0 && (VEC & (VEC - 1)) == 0 && VEC * sizeof(T) <= 16, "VEC: a power of two, at most 16 bytes");
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr long long CHUNK = static_cast<long long>(TPR) * VEC * UNROLL;
  __shared__ float scratch[TPR / 32];
  const long long row = blockIdx.x;  // the grid is one block per row
  const long long at = row * cols;
  const int lane = threadIdx.x;

  float q = 0.f;
  for (long long base = 0; base < cols; base += CHUNK) {
    Raw xv[UNROLL], rv[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
      if (c < cols) {
        xv[u] = load<0>(reinterpret_cast<const Raw*>(x + at + c));
        rv[u] = load<0>(reinterpret_cast<const Raw*>(r + at + c));
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
      if (c >= cols) continue;
      float a[VEC], b[VEC];
      unpack<T>(xv[u], a);
      unpack<T>(rv[u], b);
#pragma unroll
      for (int k = 0; k < VEC; ++k) a[k] += b[k];
      const Raw hv = pack<T, Raw>(a);
      store<0>(reinterpret_cast<Raw*>(h + at + c), hv);
      unpack<T>(hv, a);  // h as stored
#pragma unroll
      for (int k = 0; k < VEC; ++k) q = fmaf(a[k], a[k], q);
    }
  }
  // The block's stores of h are read back by other threads of it below.
  const float ms = group_allreduce<TPR, 0>(q, scratch) / static_cast<float>(cols);
  __syncthreads();
  const float rstd = rsqrtf(ms + eps);
  for (long long base = 0; base < cols; base += CHUNK) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long c = base + static_cast<long long>(u * TPR + lane) * VEC;
      if (c >= cols) continue;
      float v[VEC], w[VEC];
      unpack<T>(load<0>(reinterpret_cast<const Raw*>(h + at + c)), v);
      unpack<T>(param_read<0>(reinterpret_cast<const Raw*>(weight + c)), w);
#pragma unroll
      for (int k = 0; k < VEC; ++k) v[k] = v[k] * rstd * w[k];
      store<0>(reinterpret_cast<Raw*>(y + at + c), pack<T, Raw>(v));
    }
  }
}
