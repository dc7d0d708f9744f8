// The HTML page of a report with its plots inlined: `report --html` and validate's report.html.
#pragma once

#include <string>

#include "core/analysis/report_analysis.hpp"

namespace ddpbench {

/// `report --html`'s page of `rep`: its plots drawn into a temporary folder (removed after) and
/// inlined; a plot gnuplot cannot draw is named on stderr.
std::string report_page(const Report& rep);

}  // namespace ddpbench
