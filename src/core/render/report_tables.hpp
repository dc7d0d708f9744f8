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

/// One kind of table `report` prints: Table::kind (the JSON "kind"), the document section it
/// belongs to, and the name prefixes of the plots drawn for it (core/render/plots write_plots,
/// report_convergence), which the HTML page places in that section.
struct ReportTableKind {
  std::string kind, section;
  std::vector<std::string> plot_prefixes;
};

/// Every kind of table report_tables makes, once each: the one list report_section, the HTML
/// page's plot placement and the tests read (a table of a kind missing here fails
/// report_section, never lands in a default section).
const std::vector<ReportTableKind>& report_table_kinds();

/// The document section tables of `kind` belong to ("Throughput scaling" for "weak").
/// Throws std::logic_error for a kind not in report_table_kinds() (a programming error).
std::string report_section(const std::string& kind);

/// The section of the plot file named `name` (without folder): that of the kind whose plot
/// prefix it starts with ("strong-..." is "Throughput scaling"; a name ending in "-breakdown"
/// is "Where the time goes"); "" for none.
std::string report_section_of_plot(const std::string& name);

/// nccl-tests' table of one collective (size, count, type, redop, root, time us, algbw,
/// busbw, #wrong), kind "comm", with the busbw factor's source in a note.
Table comm_table(const CommTable& c);

/// The report in `format` (render_tables of report_tables; text tables wider than `text_width`
/// columns in parts, 0 for none; Markdown prints the headline as a list); JSON is
/// {"headline": headline_json, "tables", "files", "findings": the findings' sentences}.
std::string render_report(const Report& r, TableFormat format, size_t text_width = 0);

}  // namespace ddpbench
