// wgmma_ws (warp-specialised TMA + wgmma, sm_90a) for operands of any m, n and k: launches before it
// (matmul_pad) copy A and B into scratch with rows padded to 8 elements, so that TMA, which needs
// 16-byte aligned rows, reads the copies; the zeros past k add nothing to C. C is stored from the
// consumers' registers, element by element where an odd n leaves its rows 2-byte aligned.
#define WGMMA_WS_ANY_N true
#include "wgmma_ws.cu"

#include "../common/gemm_pad.cuh"
