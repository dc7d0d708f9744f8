// One self-contained HTML page of a report: tables, inline SVG plots, environment.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report.hpp"
#include "core/render/plots.hpp"

namespace ddpbench {

/// The page: a title, the files and their environment, every report table as an HTML
/// table, and each plot's SVG inlined (no external file, script or stylesheet, so a
/// stakeholder opens it with nothing else installed). `plots` may be empty.
/// Throws std::runtime_error when a plot's SVG cannot be read.
std::string render_html(const Report& r, const std::vector<Plot>& plots, const std::string& generated_utc);

}  // namespace ddpbench
