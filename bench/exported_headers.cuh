#pragma once
// The headers `soltune export` wrote (found on the include path), less those of problems left out
// of the export (SOLTUNE_NO_<PROBLEM>: bench/exported_bench.sh). Each user guards its own uses.
#ifndef SOLTUNE_NO_GELU
#include "gelu.cuh"
#endif
#ifndef SOLTUNE_NO_L1NORM
#include "l1norm.cuh"
#endif
#ifndef SOLTUNE_NO_LAYERNORM
#include "layernorm.cuh"
#endif
#ifndef SOLTUNE_NO_RMSNORM
#include "rmsnorm.cuh"
#endif
#ifndef SOLTUNE_NO_SOFTMAX
#include "softmax.cuh"
#endif
