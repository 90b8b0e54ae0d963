#pragma once
// Every CUDA runtime call is checked; a failure of the infrastructure throws soltune::Error naming
// the call, the source line and CUDA's own message. Per-candidate failures are handled by the caller
// from the returned code (see cuda_evaluator.cpp), not through this macro.
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"

namespace soltune {

[[noreturn]] void throw_cuda(cudaError_t e, const char* call, const char* file, int line);
std::string cuda_error_text(cudaError_t e);  // "cudaErrorIllegalAddress: an illegal memory access..."
// Errors after which the context is unusable and the device must be reset.
bool cuda_error_is_sticky(cudaError_t e);

}  // namespace soltune

#define SOLTUNE_CUDA(call)                                                         \
  do {                                                                             \
    const cudaError_t soltune_err_ = (call);                                       \
    if (soltune_err_ != cudaSuccess) ::soltune::throw_cuda(soltune_err_, #call, __FILE__, __LINE__); \
  } while (0)
