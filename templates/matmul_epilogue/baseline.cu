// The unfused pair whose time is T_ref: a GEMM (cuBLAS where the library serves, else matmul's naive
// kernel: one thread per output element from global memory, f32 accumulation) writes C, then
// epilogue_apply reads it back with the bias and R and writes the result.
#include "../matmul/baseline.cu"

#include "../common/gemm_epilogue.cuh"
#include "epilogue_apply.cuh"
