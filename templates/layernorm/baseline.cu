// The baseline whose time is T_ref: LayerNorm as eager PyTorch runs the written formula
// (x - x.mean(-1)) * rsqrt(((x - mean) ** 2).mean(-1) + eps) * weight + bias: one kernel per
// operation (problem.yaml's launches), every intermediate stored in the tensor dtype (so bf16
// rounds after every step, as it does there).
#include <cuda_bf16.h>

#include "../common/eager_ops.cuh"
