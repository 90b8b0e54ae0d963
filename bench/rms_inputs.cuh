// The inputs of the RMSNorm bench programs (store_policy.cu, release_policy.cu): x and the weight
// drawn in [-2, 2) from a hash of the index (never all zeros), and y, on the device for as long as
// the value lives. Include after templates/rmsnorm/rowreg.cu (rms_detail::from_f).
#pragma once
#include <cuda_runtime.h>

#include "cuda_check.cuh"

template <typename T> __global__ void rms_fill(T* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    p[i] = rms_detail::from_f<T>((h & 0xffffff) * (4.0f / 16777216.0f) - 2.0f);
  }
}

template <typename T> struct RmsInputs {
  T *x = nullptr, *w = nullptr, *y = nullptr;
  RmsInputs(long long rows, long long cols, int sms) {
    const long long n = rows * cols;
    CHECK(cudaMalloc(&x, n * sizeof(T)));
    CHECK(cudaMalloc(&y, n * sizeof(T)));
    CHECK(cudaMalloc(&w, cols * sizeof(T)));
    rms_fill<<<4 * sms, 256>>>(x, n, 1u);
    rms_fill<<<1, 256>>>(w, cols, 2u);
    CHECK(cudaGetLastError());
  }
  RmsInputs(const RmsInputs&) = delete;
  RmsInputs& operator=(const RmsInputs&) = delete;
  ~RmsInputs() {  // a bench exits on any failed call, so the frees are checked as well
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(w));
  }
};
