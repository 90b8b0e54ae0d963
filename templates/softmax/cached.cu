// Softmax with each row read once and held on chip until its max and sum are known: in registers
// (STAGE 0, the warp/block softmax of Apex, OneFlow, Liger), in shared memory (STAGE 1: loaded
// through registers, EPT vectors in flight; STAGE 2: cp.async straight from global memory, the
// whole row in flight), or split (STAGE 3: EPT vectors per thread in registers, the rest of the
// row by cp.async in shared memory: rows too wide for either alone, e.g. 50k floats on A100).
// TPR threads share a row: a few lanes, a warp, or up to a whole block; BLOCK / TPR rows per
// block. Rows wider than a warp reduce across warps through shared memory, after warp shuffles
// (REDUCE 0) or as a shared-memory tree (REDUCE 1). GRID 0: a block per row group; GRID k: a
// persistent grid of k blocks per SM looping over row groups. PIPE 1 (persistent grid only):
// the loads of the block's next row group go into a second buffer (registers, and shared memory
// by cp.async) before the current group is reduced and stored, so that they stay in flight across
// its reductions and barriers (as a Triton persistent reduction or a multistage pipeline does).
// Moves the fewest bytes: x read once, y written once. Computes in f32 whatever the storage type.
#include <cuda_bf16.h>

namespace softmax_cached_detail {

#include "../common/types.cuh"
#include "../common/softmax_math.cuh"

// bf16 vectors in pairs (VEC >= 2): the max on packed pairs, one max.bf16x2 per two elements and no
// conversion, and one packing conversion per output pair. bf16 softmax issued about 24
// instructions per element with the ALU pipe the busiest (ncu, docs/FINDINGS.md).
template <typename T, int VEC> constexpr bool kPairs = sizeof(T) == 2 && VEC >= 2;

template <typename T, int VEC, typename R>
__device__ __forceinline__ void max_into(const R& r, float& m, __nv_bfloat162& m2) {
  if constexpr (kPairs<T, VEC>) {
    const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&r);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) m2 = __hmax2(m2, p[k]);  // NaN: the other operand, as fmaxf
  } else {
    const T* v = reinterpret_cast<const T*>(&r);
#pragma unroll
    for (int k = 0; k < VEC; ++k) m = fmaxf(m, to_f(v[k]));
  }
}

// The normalised outputs of a vector: exp(x - m) * inv, the exponential taken again (bf16) or
// already in place (f32, INPLACE).
template <typename T, int VEC, bool INPLACE, int FAST, typename R>
__device__ __forceinline__ R normalised(const R& r, float m, float inv) {
  R o;
  if constexpr (kPairs<T, VEC>) {
    const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&r);
    __nv_bfloat162* q = reinterpret_cast<__nv_bfloat162*>(&o);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) {
      const float2 f = __bfloat1622float2(p[k]);
      q[k] = __floats2bfloat162_rn(ex<FAST>(f.x - m) * inv, ex<FAST>(f.y - m) * inv);
    }
  } else {
    const T* v = reinterpret_cast<const T*>(&r);
    T* ov = reinterpret_cast<T*>(&o);
#pragma unroll
    for (int k = 0; k < VEC; ++k) ov[k] = from_f<T>((INPLACE ? to_f(v[k]) : ex<FAST>(to_f(v[k]) - m)) * inv);
  }
  return o;
}

// load<HINT> and store<H>: HINT 1 streams the loads and stores (each byte is touched once); HINT 2
// loads by default and keeps y in L2 (norm_access's store mode 3).
#include "../common/norm_access.cuh"

#include "../common/cp_async.cuh"

#include "../common/row_reduce.cuh"

}  // namespace softmax_cached_detail

template <typename T, int BLOCK, int TPR, int VEC, int EPT, int STAGE, int REDUCE, int HINT, int FAST_EXP, int PIPE>
__global__ void __launch_bounds__(BLOCK)
    softmax_cached(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols_ll) {
  static_assert(sizeof(T) * VEC <= 16 && VEC > 0 && (VEC & (VEC - 1)) == 0, "VEC: a power of two, at most 16 bytes");
  static_assert(TPR > 0 && (TPR & (TPR - 1)) == 0 && TPR <= BLOCK && BLOCK % 32 == 0 && BLOCK <= 1024,
                "TPR: a power of two dividing BLOCK, a multiple of the warp size");
  static_assert(STAGE < 2 || sizeof(T) * VEC >= 4, "cp.async copies 4, 8 or 16 bytes");
  static_assert(PIPE == 0 || (PIPE == 1 && STAGE != 1), "PIPE: rows loaded into registers or by cp.async only");
  using namespace softmax_cached_detail;
  using Raw = typename RawOf<sizeof(T) * VEC>::type;
  constexpr int RPB = BLOCK / TPR;  // rows per block
  constexpr bool INPLACE = sizeof(T) == 4;  // f32 keeps exp(x - max) where x was; bf16 recomputes it
  constexpr int NREG = STAGE == 0 || STAGE == 3 ? EPT : 0;  // vectors per thread held in registers
  constexpr int NB = NREG > 0 ? NREG : 1;
  constexpr bool ASYNC = STAGE >= 2;                         // shared-memory part by cp.async
  __shared__ float red[2][TPR > 32 && REDUCE == 0 ? BLOCK / 32 : 1];
  __shared__ float tree[TPR > 32 && REDUCE == 1 ? BLOCK : 1];
  extern __shared__ __align__(16) unsigned char smem[];

  const int cols = static_cast<int>(cols_ll);
  const int nvec = cols / VEC;  // cols % VEC == 0 (a constraint)
  const int slot = threadIdx.x / TPR, lane = threadIdx.x % TPR;
  // Vectors [0, jsm) of a row are in registers (vector e * TPR + lane in thread lane), the rest
  // [jsm, nvec) in this row's slot of shared memory; each thread reads back only what it wrote
  // (so no barrier guards the slot, not even when PIPE refills it with the row after next).
  const int jsm = NREG * TPR < nvec ? NREG * TPR : nvec;
  const long long sper = nvec - jsm;  // shared-memory vectors per row
  Raw* const srow0 = reinterpret_cast<Raw*>(smem) + slot * sper;
  Raw* const srow1 = srow0 + RPB * sper;  // PIPE: the second buffer
  const long long groups = (rows + RPB - 1) / RPB;
  unsigned long long policy = 0;
  if constexpr (ASYNC && HINT == 1) policy = evict_first_policy();

  // Issues the loads of group g (none past the last group): the shared-memory part first, in
  // flight while the registers load. PIPE commits a cp.async group per row group.
  auto issue = [&](long long g, Raw (&buf)[NB], Raw* srow) {
    const long long row = g * RPB + slot;
    const bool valid = g < groups && row < rows;
    const Raw* xv = reinterpret_cast<const Raw*>(x + (valid ? row : 0) * cols_ll);
    if constexpr (ASYNC) {
      if (valid) {
#pragma unroll 4
        for (int j = jsm + lane; j < nvec; j += TPR) cp_async<sizeof(Raw), HINT == 1>(srow + (j - jsm), xv + j, policy);
      }
      if constexpr (PIPE) asm volatile("cp.async.commit_group;" ::: "memory");
    }
#pragma unroll
    for (int e = 0; e < NREG; ++e)
      if (valid && e * TPR + lane < nvec) buf[e] = load<HINT>(xv + e * TPR + lane);
  };

  // Reduces and stores group g, whose loads issue() started.
  auto finish = [&](long long g, Raw (&buf)[NB], Raw* srow) {
    const long long row = g * RPB + slot;
    const bool valid = row < rows;  // the last group may be partial; its idle threads still reduce
    const Raw* xv = reinterpret_cast<const Raw*>(x + (valid ? row : 0) * cols_ll);
    Raw* yv = reinterpret_cast<Raw*>(y + (valid ? row : 0) * cols_ll);
    auto in_reg = [&](int e) { return valid && e * TPR + lane < nvec; };

    float m = neg_inf();
    __nv_bfloat162 m2 = __bfloat162bfloat162(__ushort_as_bfloat16(0xff80));  // -inf, -inf
    if constexpr (STAGE == 1) {  // the whole row to shared memory through registers, EPT loads in flight
      if (valid)
        for (int j0 = lane; j0 < nvec; j0 += TPR * EPT) {
          Raw r[EPT];
#pragma unroll
          for (int e = 0; e < EPT; ++e)
            if (j0 + e * TPR < nvec) r[e] = load<HINT>(xv + j0 + e * TPR);
#pragma unroll
          for (int e = 0; e < EPT; ++e)
            if (j0 + e * TPR < nvec) {
              srow[j0 + e * TPR] = r[e];
              max_into<T, VEC>(r[e], m, m2);
            }
        }
    }
#pragma unroll
    for (int e = 0; e < NREG; ++e)
      if (in_reg(e)) max_into<T, VEC>(buf[e], m, m2);
    if constexpr (ASYNC) {
      if constexpr (PIPE) asm volatile("cp.async.wait_group 1;" ::: "memory");  // the next group's stay in flight
      else asm volatile("cp.async.wait_all;" ::: "memory");
      if (valid) {
#pragma unroll 4
        for (int j = jsm + lane; j < nvec; j += TPR) max_into<T, VEC>(srow[j - jsm], m, m2);
      }
    }
    if constexpr (kPairs<T, VEC>) m = fmaxf(m, fmaxf(__low2float(m2), __high2float(m2)));
    m = row_reduce<MaxOp, BLOCK, TPR, REDUCE>(m, red[0], tree);

    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < NREG; ++e)
      if (in_reg(e)) {
        T* v = reinterpret_cast<T*>(&buf[e]);
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          const float ev = ex<FAST_EXP>(to_f(v[k]) - m);
          if constexpr (INPLACE) v[k] = from_f<T>(ev);
          s += ev;
        }
      }
    if constexpr (STAGE != 0) {
      if (valid) {
#pragma unroll 4
        for (int j = jsm + lane; j < nvec; j += TPR) {
          Raw r = srow[j - jsm];
          T* v = reinterpret_cast<T*>(&r);
#pragma unroll
          for (int k = 0; k < VEC; ++k) {
            const float ev = ex<FAST_EXP>(to_f(v[k]) - m);
            if constexpr (INPLACE) v[k] = from_f<T>(ev);
            s += ev;
          }
          if constexpr (INPLACE) srow[j - jsm] = r;
        }
      }
    }
    s = row_reduce<SumOp, BLOCK, TPR, REDUCE>(s, red[1], tree);

    const float inv = 1.0f / s;
    auto out = [&](const Raw& r) { return normalised<T, VEC, INPLACE, FAST_EXP>(r, m, inv); };
#pragma unroll
    for (int e = 0; e < NREG; ++e)
      if (in_reg(e)) store<HINT == 2 ? 3 : HINT>(yv + e * TPR + lane, out(buf[e]));
    // The slot's reads all happen here, before a later issue() refills it: the values are used
    // (stored) first, and the cp.async asm is volatile with a memory clobber.
    if constexpr (STAGE != 0) {
      if (valid) {
#pragma unroll 4
        for (int j = jsm + lane; j < nvec; j += TPR) store<HINT == 2 ? 3 : HINT>(yv + j, out(srow[j - jsm]));
      }
    }
  };

  if constexpr (PIPE == 0) {
    // With a block per group (GRID 0) this loop runs once; a persistent grid strides over the groups.
    for (long long g = blockIdx.x; g < groups; g += gridDim.x) {
      Raw buf[NB];
      issue(g, buf, srow0);
      finish(g, buf, srow0);
    }
  } else {
    // Two buffers in turn (unrolled by two so that each stays in fixed registers): group g + G is
    // in flight while group g is reduced and stored. g is block-uniform, so are the breaks.
    const long long G = gridDim.x;
    Raw b0[NB], b1[NB];
    issue(blockIdx.x, b0, srow0);
    for (long long g = blockIdx.x; g < groups; g += 2 * G) {
      issue(g + G, b1, srow1);
      finish(g, b0, srow0);
      if (g + G >= groups) break;
      issue(g + 2 * G, b0, srow0);
      finish(g + G, b1, srow1);
    }
  }
}
