#pragma once
// How a cheating kernel of the GPU tests knows which launch it is in: its body starts with this, and
// k is then the number of launches before this one (`calls`, a __device__ counter the test's source
// declares, counts every block of every launch).
#define SOLTUNE_TEST_CALL_INDEX \
  "__shared__ unsigned k; if (threadIdx.x == 0) k = atomicAdd(&calls, 1u) / gridDim.x; __syncthreads(); "
