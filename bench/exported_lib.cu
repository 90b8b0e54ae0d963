// The kernels `soltune export` wrote, behind a C ABI, so that bench/torch_reference.py
// (--exported) times them in PyTorch's own harness beside eager and torch.compile: the same
// process, flush, events and inputs for all three. Built by bench/exported_bench.sh.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

// A problem left out of the export has no functions here.
#include "exported_headers.cuh"

namespace {
template <typename T> const T* in(const void* p) { return static_cast<const T*>(p); }
template <typename T> T* out(void* p) { return static_cast<T*>(p); }
cudaStream_t st(void* s) { return static_cast<cudaStream_t>(s); }
using bf16 = __nv_bfloat16;
}  // namespace

// Each returns the cudaError_t of the launch (0: success).
extern "C" {
#ifndef SOLTUNE_NO_GELU
int soltune_gelu_f32(const void* x, void* y, long long n, void* s) { return soltune_gelu::gelu_f32(in<float>(x), out<float>(y), n, st(s)); }
int soltune_gelu_bf16(const void* x, void* y, long long n, void* s) { return soltune_gelu::gelu_bf16(in<bf16>(x), out<bf16>(y), n, st(s)); }
#endif
#ifndef SOLTUNE_NO_SOFTMAX
int soltune_softmax_f32(const void* x, void* y, long long r, long long c, void* s) {
  return soltune_bench::launch(&soltune_softmax::softmax_f32, st(s), in<float>(x), out<float>(y), r, c);
}
int soltune_softmax_bf16(const void* x, void* y, long long r, long long c, void* s) {
  return soltune_bench::launch(&soltune_softmax::softmax_bf16, st(s), in<bf16>(x), out<bf16>(y), r, c);
}
#endif
#ifndef SOLTUNE_NO_LAYERNORM
int soltune_layernorm_f32(const void* x, const void* w, const void* b, void* y, long long r, long long c, void* s) {
  return soltune_bench::launch(&soltune_layernorm::layernorm_f32, st(s), in<float>(x), in<float>(w), in<float>(b), out<float>(y), r, c);
}
int soltune_layernorm_bf16(const void* x, const void* w, const void* b, void* y, long long r, long long c, void* s) {
  return soltune_bench::launch(&soltune_layernorm::layernorm_bf16, st(s), in<bf16>(x), in<bf16>(w), in<bf16>(b), out<bf16>(y), r, c);
}
#endif
#ifndef SOLTUNE_NO_RMSNORM
int soltune_rmsnorm_f32(const void* x, const void* w, void* y, long long r, long long c, void* s) {
  return soltune_bench::launch(&soltune_rmsnorm::rmsnorm_f32, st(s), in<float>(x), in<float>(w), out<float>(y), r, c);
}
int soltune_rmsnorm_bf16(const void* x, const void* w, void* y, long long r, long long c, void* s) {
  return soltune_bench::launch(&soltune_rmsnorm::rmsnorm_bf16, st(s), in<bf16>(x), in<bf16>(w), out<bf16>(y), r, c);
}
#endif
#ifndef SOLTUNE_NO_L1NORM
// ws: a zeroed int workspace of at least 4 + 16 * SMs entries (the header's contract).
int soltune_l1norm_f32(const void* x, void* y, void* ws, long long n, void* s) {
  return soltune_l1norm::l1norm_f32(in<float>(x), out<float>(y), out<int>(ws), n, st(s));
}
int soltune_l1norm_bf16(const void* x, void* y, void* ws, long long n, void* s) {
  return soltune_l1norm::l1norm_bf16(in<bf16>(x), out<bf16>(y), out<int>(ws), n, st(s));
}
#endif
}
