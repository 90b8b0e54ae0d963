#pragma once
// A Python package of exported kernels (soltune export --format python): per problem its exported
// header, one C entry point per dtype over it (_kernels.cu, built by nvcc into _kernels.so, at
// export or at first import), the problems' arguments as data (_problems.json) and a runtime
// (__init__.py, python_runtime.py) that checks the caller's arrays before it launches.
#include <string>
#include <vector>

#include "codegen/header_export.hpp"

namespace soltune {

struct PythonProblem {
  const ProblemSpec* spec = nullptr;
  std::vector<Specialization> specs;  // what the header exports
  std::string header;                 // export_header()'s text
};

struct PackageFile {
  std::string path;  // relative to the package's folder
  std::string text;
};

// `build`: the nvcc command line that builds _kernels.so in the package's folder (recorded in
// _problems.json, so that a lazy build at import runs the same one).
std::vector<PackageFile> python_package(const std::vector<PythonProblem>& problems, const std::string& gpu,
                                        const std::vector<std::string>& build);

// The nvcc command line for `arch` (e.g. sm_90a): -shared, position-independent, CUDA runtime static.
std::vector<std::string> python_build_command(const std::string& nvcc, const std::string& arch);

}  // namespace soltune
