#pragma once
#include <string>
#include <vector>

namespace soltune::cli {

// soltune report --kb PATH -o FILE [--problem NAME] [--gpu NAME] [--templates DIR]
int report_command(const std::vector<std::string>& args);

}  // namespace soltune::cli
