// The baseline whose time is T_ref: h = x + r, then RMSNorm as eager PyTorch runs the written formula
// h * rsqrt((h * h).mean(-1) + eps) * weight: one kernel per operation (problem.yaml's launches),
// every intermediate stored in the tensor dtype.
#include <cuda_bf16.h>

#include "../common/eager_ops.cuh"
