#pragma once
#include <string>
#include <vector>

namespace soltune::cli {

// soltune landscape CONFIG -o FILE: measures every legal configuration of one task (exhaustive mode).
int landscape_command(const std::vector<std::string>& args, const std::string& command_line);
// soltune bench-search --landscape FILE... --seeds N [--json]: compares strategies on landscapes.
int bench_search_command(const std::vector<std::string>& args);

}  // namespace soltune::cli
