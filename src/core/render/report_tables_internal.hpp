// Internal to `ddpbench report`'s tables (core/render/report_tables*.cpp), not part of its
// interface: the helpers the table builders share and one builder per report section, which
// report_tables (report_tables.cpp) calls in print order. Torch-free.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/analysis/report_analysis.hpp"
#include "core/analysis/report_detail.hpp"
#include "core/render/report_tables.hpp"
#include "core/util/table.hpp"

namespace ddpbench::report_tables_internal {

using report_detail::gpu_available;
using report_detail::int_at;
using report_detail::max_batch_sentence;
using report_detail::straggler_what;

/// A table cell of an optional number: the number, else n/a.
inline Value opt(const std::optional<double>& v) { return v ? Value(*v) : Value(); }

/// The context (Table::context) every table of configuration `k` carries.
inline std::vector<std::pair<std::string, Value>> key_context(const ConfigKey& k) {
  return {{"device", k.device},       {"model", k.model}, {"setup", k.setup_label()},
          {"precision", k.precision}, {"math", k.math},   {"image_size", static_cast<long long>(k.image_size)},
          {"scaling", k.scaling}};
}

// The "file" column: the label of the result file every number of the row comes from.
template <typename Row>
void add_launch_column(std::vector<Col<Row>>& cols) {
  cols.push_back({{"file", "file", "", fmtcol::plain()}, [](const Row& r) { return Value(r.launch.file); }});
}

// A note per row that is the median of several launches, and per row whose DDP overhead
// used the no-DDP row of another file. `name` says which row ("4 GPUs", "fp16 hook").
template <typename Row, typename Name>
void add_launch_notes(Table& t, const std::vector<Row>& rows, Name name) {
  for (const auto& r : rows) {
    if (r.launch.launches > 1 || !r.launch.repeats.empty())
      t.notes.push_back(fmt::format("{}: {}", name(r), launch_words(r.launch)));
    if constexpr (std::is_same_v<Row, WeakRow> || std::is_same_v<Row, StrongRow>)
      if (!r.baseline_file.empty() && r.baseline_file != r.launch.file)
        t.notes.push_back(fmt::format("{}: DDP overhead against the no-DDP row of {} (this row: {})", name(r),
                                      r.baseline_file, r.launch.file));
  }
}

// How a series that was not a fixed count stopped, in words: "auto: target_ci",
// "--duration" (a duration run ends on its duration; naming it twice says nothing).
inline std::string stopping_words(const Stopping& s) {
  if (s.mode == "duration" || s.reason == "duration") return "--duration";
  return s.mode + ": " + s.reason;
}

// The row's warnings and (when not a fixed count) why it stopped, as short codes.
inline std::string notes_cell(const RowFacts& f) {
  std::vector<std::string> codes;
  for (const auto& w : f.warnings) codes.push_back(w.code);
  if (f.stopping.mode != "fixed") codes.push_back(stopping_words(f.stopping));
  return fmt::format("{}", fmt::join(codes, ", "));
}

// The "notes" column (the row's warning codes and how it stopped), when some row has one.
template <typename Row>
void add_notes_column(std::vector<Col<Row>>& cols, const std::vector<Row>& rows) {
  if (std::any_of(rows.begin(), rows.end(),
                  [](const Row& r) { return !r.facts.warnings.empty() || r.facts.stopping.mode != "fixed"; }))
    cols.push_back(
        {{"notes", "notes", "", fmtcol::plain()}, [](const Row& r) -> Value { return notes_cell(r.facts); }});
}

// Footnotes: each row's warnings and stopping in words (the metrics' definitions are in the
// Definitions section, once).
template <typename Row>
void add_fact_notes(Table& t, const std::vector<Row>& rows, const std::string& unit) {
  for (const auto& r : rows) {
    const std::string units = fmt::format("{}{}", unit, r.world_size == 1 ? "" : "s");
    for (const auto& w : r.facts.warnings)  // some files' messages open with their code already
      t.notes.push_back(fmt::format("{} {}: {}{}", r.world_size, units,
                                    w.message.rfind(w.code + ":", 0) == 0 ? "" : w.code + ": ", w.message));
    const auto& s = r.facts.stopping;
    if (s.mode != "fixed" && stopping_words(s) == "--duration")
      t.notes.push_back(fmt::format("{} {}: ran for the --duration (CI half-width {:.2f}% of the mean)", r.world_size,
                                    units, s.achieved_ci_pct));
    else if (s.mode != "fixed")
      t.notes.push_back(
          fmt::format("{} {}: {} stopping ended on {} (CI half-width {:.2f}% of the mean, target {:.2f}%)",
                      r.world_size, units, s.mode, s.reason, s.achieved_ci_pct, s.target_ci_pct));
  }
}

// ---- one builder per section (report_tables_<section>.cpp)

// Scaling (report_tables_scaling.cpp): weak and strong scaling, their step breakdowns, the
// optimization impact of DDP's knobs, the comparison across devices or files, and cost.
Table weak_tab(const WeakTable& w);
Table strong_tab(const StrongTable& s);
Table breakdown_tab(const std::vector<BreakdownRow>& rows, const ConfigKey& key, const std::string& what);
Table impact_tab(const ImpactTable& m);
Table comparison_tab(const Comparison& c);
Table cost_tab(const CostTable& c);

// Strategies and memory (report_tables_strategy.cpp): zero2/fsdp and checkpointing, the memory
// each technique saves, inference.
Table strategy_tab(const StrategyTable& m);
Table memory_tab(const MemoryTable& m);
Table inference_tab(const InferenceTable& m);

// Cluster validation (report_tables_cluster.cpp, schema 1.6): telemetry, stragglers, per-rank
// telemetry, burn-in, pair bandwidth, find-max-bs trials.
Table telemetry_tab(const ClusterFile& c);
Table straggler_tab(const nlohmann::json& e);
Table rank_telemetry_tab(const BenchResult& r, const std::string& device);
Table burn_in_tab(const BenchResult& r, const std::string& device);
Table pairs_tab(const ClusterFile& c);
Table max_batch_tab(const ClusterFile& c);

// The executive summary and the definitions (report_tables_summary.cpp): the headline, targets,
// findings and recommendations; the terms this report's tables use (empty rows: none).
std::vector<Table> summary_tabs(const Report& r);
Table definitions_tab(const Report& r);

// The appendix (report_tables_appendix.cpp): the result files, each launch's command and CPU,
// each launch's nodes (empty rows: no file recorded its nodes).
Table files_tab(const std::vector<nlohmann::json>& files);
Table commands_tab(const std::vector<nlohmann::json>& files);
Table nodes_tab(const std::vector<nlohmann::json>& files);

}  // namespace ddpbench::report_tables_internal
