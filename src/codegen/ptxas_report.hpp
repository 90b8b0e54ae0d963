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
//
// On sm_90a ptxas also notes, before the entry functions, where it undid a kernel's design:
//   ptxas info    : (C7519) warpgroup.arrive is injected in around line 1755 by compiler to allow use of registers in GMMA in function '_Z...'
//   ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.
// These become Resources::notes of the function they name; one that names none (C7508 names none
// in NVRTC 13.0) belongs to every entry function of the compile.
#include <map>
#include <string>

#include "core/measure.hpp"

namespace soltune {

// Resources keyed by the (mangled) function name the report uses. Functions that appear in the
// report have parsed=true; a line that cannot be read is skipped, never an error.
std::map<std::string, Resources> parse_ptxas_report(const std::string& log);

}  // namespace soltune
