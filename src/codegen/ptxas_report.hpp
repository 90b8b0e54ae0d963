#pragma once
// Parser for the resource report that `--ptxas-options=-v` leaves in the NVRTC log.
//
// NVRTC 13 prints, per entry function (the cmem[0] item only for targets below sm_90):
//   ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
//   ptxas info    : Function properties for _Z3fooPf
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 16 registers, used 1 barriers, 1048 bytes smem, 368 bytes cmem[0]
//   ptxas info    : Compile time = 1.8 ms
// Non-inlined device functions get a "Function properties" block but no "Used" line.
#include <map>
#include <string>

#include "core/measure.hpp"

namespace soltune {

// Resources keyed by the (mangled) function name the report uses. Functions that appear in the
// report have parsed=true; a line that cannot be read is skipped, never an error.
std::map<std::string, Resources> parse_ptxas_report(const std::string& log);

}  // namespace soltune
