// matmul's wgmma_pad for the epilogue: A and B first copied into scratch with rows padded to 8
// elements (TMA needs 16-byte aligned rows), then wgmma_ws with the epilogue applied to the
// accumulators, C stored from registers element by element where an odd n leaves its rows 2-byte
// aligned. Serves the shapes wgmma_ws cannot (k or n not a multiple of 8).
#define WGMMA_WS_ANY_N true
#include "wgmma_ws.cu"

#include "../common/gemm_pad.cuh"
