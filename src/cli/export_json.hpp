#pragma once
// `soltune export --format json`: the tuned specializations as data, for frameworks that compile
// and launch kernels themselves (NVRTC name expression, geometry and constraint expressions, the
// template source, the measurements).
#include <string>
#include <vector>

#include "codegen/header_export.hpp"
#include "kb/records.hpp"

namespace soltune::cli {

std::string export_json(const ProblemSpec& p, const std::vector<Specialization>& specs,
                        const std::vector<ResultRecord>& records, const std::string& gpu);

}  // namespace soltune::cli
