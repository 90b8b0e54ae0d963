#pragma once
// Writes tuned kernels as one self-contained CUDA header: the variant sources (includes hoisted,
// code in a namespace), the knob values baked into the template arguments, and per dtype a host
// launch function that checks the variant's constraints for the sizes it is given (can_implement)
// before it launches. Expressions are emitted as C++ over doubles, which is how soltune evaluates
// them, so the header computes the same geometry soltune tuned.
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/space.hpp"

namespace soltune {

struct Specialization {
  const VariantSpec* variant = nullptr;
  DType dtype = DType::f32;
  Config config;
  std::vector<std::string> comment;  // lines: GPU, date, time, SOL score, knob values...
};

// One launch function per specialization, named <problem>_<dtype>; at most one per dtype.
std::string export_header(const ProblemSpec& p, const std::vector<Specialization>& specs,
                          const std::string& banner);

}  // namespace soltune
