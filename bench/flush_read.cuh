// soltune's L2 flush (src/eval/builtin_kernels.cpp) for the bench programs: a read of the whole
// buffer, grid-stride; the conditional store keeps the loads alive and practically never happens.
#pragma once
#include <cuda_runtime.h>

__global__ void flush_read(const uint4* p, long long n, unsigned* sink) {
  unsigned acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const uint4 v = __ldcg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}
