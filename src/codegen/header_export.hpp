#pragma once
// Writes tuned kernels as one self-contained CUDA header: the variant sources (includes hoisted,
// code in a namespace), every tuned specialization with its knob values baked into the template
// arguments, and per dtype a host function that dispatches on the sizes it is given:
//   1. the specialization tuned for exactly these sizes, when its constraints hold here;
//   2. else the tuned specialization nearest in log2 of the sizes whose constraints hold;
//   3. else the problem's fallback (Specialization::fallback), legal at every shape (one per layout
//      it compiles in, such as matmul's trans_b);
//   4. else nothing is launched and cudaErrorInvalidValue is returned.
// A specialization may carry the cubin soltune timed (NVRTC's output, which nvcc does not reproduce:
// ptxas allocates NVRTC's PTX differently, by up to 20% in run time). On a device of the compute
// capability it was built for, the header launches that cubin (cudaLibraryLoadData, once per process);
// elsewhere, or with SOLTUNE_SOURCE_ONLY defined, the kernel compiled from source with the header.
// Expressions are emitted as C++ over doubles, which is how soltune evaluates them, so the header
// computes the same geometry and legality soltune tuned with.
#include <map>
#include <string>
#include <vector>

#include "core/space.hpp"
#include "core/task.hpp"

namespace soltune {

struct Specialization {
  const VariantSpec* variant = nullptr;
  DType dtype = DType::f32;
  Config config;
  Shape shape;                       // the sizes it was tuned for
  std::vector<std::string> comment;  // lines: GPU, date, time, SOL score, knob values...
  std::string binary = {};           // the timed cubin; empty: the source kernel only
  // Each kernel's name in `binary`, by name expression (the main kernel's and those of the launches
  // before and after it).
  std::map<std::string, std::string> lowered = {};
  int binary_cc = 0;                 // the compute capability `binary` runs on, e.g. 90
  int smem_static = -1;              // the kernel's static shared memory (ptxas); -1: unknown
  // The problem's fallback (its variant's `fallback:` configuration, legal at every shape): tried
  // after every tuned specialization, at whatever shape it was measured.
  bool fallback = false;
};

// Launch functions are named <problem>_<dtype>; at most one tuned specialization per (dtype, shape),
// and at most one fallback per (dtype, shape): a fallback is measured once per layout it compiles in.
std::string export_header(const ProblemSpec& p, const std::vector<Specialization>& specs,
                          const std::string& banner);

}  // namespace soltune
