#pragma once
// Encoding the tensor maps a variant declares: cuTensorMapEncodeTiled, reached through the runtime's
// driver entry point (cudaGetDriverEntryPointByVersion), so that soltune links no libcuda and still
// starts on machines without a driver.
#include <string>
#include <vector>

#include "core/tensor_map.hpp"

namespace soltune {

// One encoded map: a CUtensorMap's 128 bytes. The driver needs 64-byte alignment; 128 is the
// alignment CUDA 13's cuda.h gives CUtensorMap itself. A kernel takes the map by value
// (`const __grid_constant__`), so a launch's argument pointer points here.
struct alignas(128) TensorMapBlob {
  unsigned char bytes[128];
};

// A candidate's maps over one input set, in the variant's order: the storage its launches point at.
struct TensorMapArgs {
  std::vector<std::string> names;
  std::vector<TensorMapBlob> blobs;
  const TensorMapBlob* find(const std::string& name) const;  // null when there is no such map
};

// Encodes a map of elements of type `elem` over `address` into out. Returns "" or why not: the
// driver's CUresult (number and name) with every parameter it was given, or that the driver offers
// no cuTensorMapEncodeTiled.
std::string encode_tensor_map(const TensorMapParams& p, DType elem, void* address, TensorMapBlob& out);

}  // namespace soltune
