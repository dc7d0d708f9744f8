// The rendering half of `ddpbench report`: the Report that build_report (core/analysis/report_analysis.hpp) found,
// as tables (table.hpp's one table, five printers). Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report_analysis.hpp"
#include "core/util/table.hpp"

namespace ddpbench {

/// The headline (ExecutiveSummary::headline) as the report's first table, kind "headline": one
/// row per headline_lines sentence, columns topic ("Scope", "Targets", a model, "Data quality",
/// "Not measured") and line; text prints each line as "- line". The HTML page places it first.
Table headline_table(const Headline& h);

/// The report's tables in print order, each with its document section (Table::section): the
/// executive summary (the headline, targets, findings, recommendations), weak then
/// strong scaling, their step breakdowns, optimization impact, time to accuracy, strategies,
/// memory, inference, collectives, pair bandwidth, telemetry, per-rank straggler tables and
/// per-rank telemetry (with per_rank), burn-in, find-max-bs trials, comparison, cost, the
/// definitions of the terms the tables use (kind "definitions": once, for every table), and the
/// appendix (result files, the command of each).
std::vector<Table> report_tables(const Report& r);

/// The document section tables of `kind` belong to ("Throughput scaling" for "weak"); the
/// convergence tables' kinds, and any kind not listed, go to "Time to accuracy".
std::string report_section(const std::string& kind);

/// nccl-tests' table of one collective (size, count, type, redop, root, time us, algbw,
/// busbw, #wrong), kind "comm", with the busbw factor's source in a note.
Table comm_table(const CommTable& c);

/// The report in `format` (render_tables of report_tables; text tables wider than `text_width`
/// columns in parts, 0 for none; Markdown prints the headline as a list); JSON is
/// {"headline": headline_json, "tables", "files", "findings": the findings' sentences}.
std::string render_report(const Report& r, TableFormat format, size_t text_width = 0);

}  // namespace ddpbench
