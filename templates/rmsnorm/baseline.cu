// The baseline whose time is T_ref: RMSNorm as eager PyTorch runs the written formula
// x * rsqrt((x * x).mean(-1) + eps) * weight: one kernel per operation (problem.yaml's launches),
// every intermediate stored in the tensor dtype (so bf16 rounds after every step, as it does there).
#include <cuda_bf16.h>

#include "../common/eager_ops.cuh"
