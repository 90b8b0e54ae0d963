#pragma once
// The exported header's part for variants with tensor maps (header_export.hpp says what the header
// does): each call encodes the maps from the caller's pointers through the driver's
// cuTensorMapEncodeTiled as the runtime hands it out, so the header still needs no -lcuda, and the
// plans check the rules soltune tuned with, so that dispatch passes over a specialization whose map
// these sizes would break.
#include <string>
#include <vector>

#include "codegen/header_export.hpp"

namespace soltune {

// detail::TensorMapShape, tensor_map_shape (the rules), encode_tensor_map and TensorMapArg.
std::string tensor_map_helpers();
// The most maps any of these specializations' variants declares: the plan struct's room for them.
size_t max_tensor_maps(const std::vector<const Specialization*>& specs);
// Statements for plan_<j> (sizes, knobs, dtype_bytes and the device symbols in scope): fill p.maps
// and clear p.ok where a map breaks a rule. Empty for a variant without maps.
std::string tensor_map_plan(DType dt, const VariantSpec& v);
// Statements for launch_<j>: encode each map over its buffer's pointer, or return
// cudaErrorInvalidValue without launching. Empty for a variant without maps.
std::string tensor_map_encodes(const VariantSpec& v);
// The local a launch passes for map `name`.
std::string tensor_map_local(const std::string& name);

}  // namespace soltune
