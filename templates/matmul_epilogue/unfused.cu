// The unfused pair as a rival of the fused variants: matmul's wgmma_ws (tuned like them) writes C,
// then epilogue_apply reads it back with the bias and R. Where a fused epilogue slows the GEMM more
// than the second pass costs, this wins and export picks it for the shape.
#include "../matmul/wgmma_ws.cu"

#include "epilogue_apply.cuh"
