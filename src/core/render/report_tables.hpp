// The rendering half of `ddpbench report`: the Report that build_report (core/analysis/report.hpp) found,
// as tables (table.hpp's one table, five printers). Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report.hpp"
#include "core/util/table.hpp"

namespace ddpbench {

/// The report's tables in print order, each with its document section (Table::section): the
/// executive summary (targets, findings: the headline sentences, recommendations), weak then
/// strong scaling, their step breakdowns, optimization impact, time to accuracy, strategies,
/// memory, inference, collectives, pair bandwidth, telemetry, per-rank straggler tables and
/// per-rank telemetry (with per_rank), burn-in, find-max-bs trials, comparison, cost, and the
/// appendix (result files, the command of each).
std::vector<Table> report_tables(const Report& r);

/// The document section tables of `kind` belong to ("Throughput scaling" for "weak"); the
/// convergence tables' kinds, and any kind not listed, go to "Time to accuracy".
std::string report_section(const std::string& kind);

/// nccl-tests' table of one collective (size, count, type, redop, root, time us, algbw,
/// busbw, #wrong), kind "comm", with the busbw factor's source in a note.
Table comm_table(const CommTable& c);

/// The report in `format` (render_tables of report_tables; text tables wider than `text_width`
/// columns in parts, 0 for none); JSON adds the files and the headline: {"tables", "files",
/// "headline"}.
std::string render_report(const Report& r, TableFormat format, size_t text_width = 0);

}  // namespace ddpbench
