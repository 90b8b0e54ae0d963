#pragma once
// The tuner <-> worker protocol: frames (core/frames.hpp) holding YAML messages, plus raw frames
// for CUBINs. Encoders and decoders for the values that cross it.
#include <yaml-cpp/yaml.h>

#include <string>

#include "codegen/compiler.hpp"
#include "core/frames.hpp"
#include "core/task.hpp"
#include "eval/timing_loop.hpp"

namespace soltune::wire {

std::string emit(const YAML::Node& n);
YAML::Node parse(const std::string& text);  // throws Error on malformed YAML

YAML::Node encode(const DeviceInfo& d);
DeviceInfo decode_device(const YAML::Node& n);
YAML::Node encode(const TaskBaseline& b);
TaskBaseline decode_baseline(const YAML::Node& n);
// How the worker evaluates (the hello's options): every field, so that none falls back to its
// default on the worker's side unnoticed.
YAML::Node encode(const CudaEvalOptions& o);
CudaEvalOptions decode_eval_options(const YAML::Node& n);
YAML::Node encode(const Resources& r);
Resources decode_resources(const YAML::Node& n);
// A compiled program's kernels (name expression, lowered name, resources), in the request's order.
YAML::Node encode_kernels(const std::vector<CompiledKernel>& ks);
std::vector<CompiledKernel> decode_kernels(const YAML::Node& n);
// The parts of a result the worker fills: status, log, timing, accuracy, occupancy.
YAML::Node encode_outcome(const EvalResult& r);
void decode_outcome(const YAML::Node& n, EvalResult& r);
// A task by names: the worker loads the problem from the same templates folder.
YAML::Node encode_task(const Task& t);

}  // namespace soltune::wire
