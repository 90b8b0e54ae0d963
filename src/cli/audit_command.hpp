#pragma once
// soltune audit: the kernels export would ship, each run once under compute-sanitizer on this
// machine's GPU (eval/sanitizer_audit.hpp), the verdicts recorded in the knowledge base. Export
// reads them back (run/export_plan.hpp).
#include <string>
#include <vector>


namespace soltune::cli {

int audit_command(const std::vector<std::string>& args);

}  // namespace soltune::cli
