// One self-contained HTML page of a report: tables, inline SVG plots, environment.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report_analysis.hpp"
#include "core/render/plots.hpp"

namespace ddpbench {

/// The page: the title, the headline (the report's table of kind "headline", as a list) right
/// after it, then every report table in its section, each plot's SVG inlined right after the
/// last table it belongs to (Plot::tables; its section's end when none is in the report),
/// definitions as a list, the files and their environment last. No external file or script,
/// so a stakeholder opens it with nothing else installed. Its stylesheet puts plots beside
/// their table where the window has room; below 700 px each table keeps its row label (fixed
/// while it scrolls) and its key column and hides the rest behind an "all N columns" switch.
/// `plots` may be empty. Throws std::runtime_error when a plot's SVG cannot be read.
std::string render_html(const Report& r, const std::vector<Plot>& plots, const std::string& generated_utc);

}  // namespace ddpbench
