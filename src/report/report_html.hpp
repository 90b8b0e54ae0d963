#pragma once
// The report as one HTML file: its data as JSON, Chart.js and the page's own script inline, so that
// it opens offline in any browser with nothing beside it.
#include <string>

#include "report/report_data.hpp"

namespace soltune::report {

// The page for `d`; `generated_at` is printed as it is (ISO-8601 UTC).
std::string render_html(const ReportData& d, const std::string& generated_at);

// The report's data as JSON (the page reads it; tests check it).
std::string report_json(const ReportData& d);

}  // namespace soltune::report
