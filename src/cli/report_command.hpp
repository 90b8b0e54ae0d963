#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "report/report_data.hpp"

namespace soltune::cli {

// soltune report --kb PATH -o FILE [--problem NAME] [--gpu NAME] [--templates DIR]
int report_command(const std::vector<std::string>& args);

// The report of a knowledge base written to `out` (tune --report too); throws Error as collect() does.
void write_report(const std::filesystem::path& kb_path, const report::ReportOptions& o, const std::string& out);

}  // namespace soltune::cli
