// `ddpbench report`'s tables: what build_report (core/analysis/report_analysis.cpp, the analysis) found,
// as Tables (core/util/table.hpp) for text, Markdown, CSV, JSON and HTML. Torch-free.
#include "core/render/report_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/render/report_convergence.hpp"
#include "core/render/report_tables_internal.hpp"
#include "core/result/bench_table.hpp"

namespace ddpbench {

const std::vector<ReportTableKind>& report_table_kinds() {
  static const std::vector<ReportTableKind> kKinds = {
      {"headline", "Executive summary", {}},
      {"summary", "Executive summary", {}},
      {"findings", "Executive summary", {}},
      {"recommendations", "Executive summary", {}},
      {"definitions", "Definitions", {}},
      {"weak", "Throughput scaling", {"weak-", "single-gpu-count", "overlay-"}},
      {"strong", "Throughput scaling", {"strong-"}},
      {"breakdown", "Where the time goes", {}},  // plots: any name ending in "-breakdown"
      {"impact", "Optimization impact", {"impact-"}},
      {"time_to_loss", "Time to accuracy", {"ttl-"}},
      {"strategy", "Strategies and memory", {}},
      {"memory", "Strategies and memory", {"memory-"}},
      {"inference", "Inference", {}},
      {"comm", "Communication", {"comm-"}},
      {"pairs", "Communication", {}},
      {"telemetry", "Hardware utilization and stragglers", {"telemetry-", "stragglers-"}},
      {"stragglers", "Hardware utilization and stragglers", {}},
      {"rank_telemetry", "Hardware utilization and stragglers", {}},
      {"burn_in", "Hardware utilization and stragglers", {"burnin-"}},
      {"max_batch", "Largest batch", {}},
      {"comparison", "Comparison across devices or files", {}},
      {"cost", "Cost", {}},
      {"files", "Appendix: what ran", {}},
      {"commands", "Appendix: what ran", {}},
      {"nodes", "Appendix: what ran", {}},
  };
  return kKinds;
}

std::string report_section(const std::string& kind) {
  for (const auto& k : report_table_kinds())
    if (k.kind == kind) return k.section;
  throw std::logic_error("report table kind '" + kind + "' is not in report_table_kinds() (core/render/report_tables.cpp)");
}

std::string report_section_of_plot(const std::string& name) {
  const std::string suffix = "-breakdown";
  if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return report_section("breakdown");
  for (const auto& k : report_table_kinds())
    for (const auto& prefix : k.plot_prefixes)
      if (name.rfind(prefix, 0) == 0) return k.section;
  return "";
}

std::vector<Table> report_tables(const Report& r) {
  using namespace report_tables_internal;  // the section builders (report_tables_internal.hpp)
  std::vector<Table> out = summary_tabs(r);
  const auto scaling_what = [](const ConfigKey& k, const std::string& batch) {
    return fmt::format("{}, {}, {}, {} scaling, {}, {}", k.model, k.setup_label(), k.device, k.scaling, batch,
                       k.input_label());
  };
  for (const auto& w : r.weak) out.push_back(weak_tab(w));
  for (const auto& s : r.strong) out.push_back(strong_tab(s));
  for (const auto& w : r.weak)
    if (!w.breakdown.empty())
      out.push_back(breakdown_tab(
          w.breakdown, w.key,
          scaling_what(w.key, fmt::format("batch {} per {}", with_thousands(w.key.batch_per_rank), unit_word(w.key)))));
  for (const auto& s : r.strong)
    if (!s.breakdown.empty())
      out.push_back(breakdown_tab(s.breakdown, s.key,
                                  scaling_what(s.key, fmt::format("global batch {}", with_thousands(s.global_batch)))));
  for (const auto& m : r.impact) out.push_back(impact_tab(m));
  for (auto& t : convergence_tables(r.convergence)) out.push_back(std::move(t));
  for (const auto& m : r.strategy) out.push_back(strategy_tab(m));
  for (const auto& m : r.memory) out.push_back(memory_tab(m));
  for (const auto& m : r.inference) out.push_back(inference_tab(m));
  for (const auto& c : r.comm) out.push_back(comm_table(c));
  for (const auto& c : r.cluster)
    if (!c.pair_rows.empty()) out.push_back(pairs_tab(c));
  for (const auto& c : r.cluster)
    if (std::any_of(c.rows.begin(), c.rows.end(),
                    [](const BenchResult& b) { return summarize_telemetry(b).ranks > 0; }))
      out.push_back(telemetry_tab(c));
  if (r.per_rank)
    for (const auto& c : r.cluster) {
      for (const auto& e : c.stragglers) out.push_back(straggler_tab(e));
      std::vector<std::string> models;
      for (const auto& row : c.rows)
        if (std::find(models.begin(), models.end(), row.model) == models.end()) models.push_back(row.model);
      for (const auto& m : models)
        if (const BenchResult* g = largest_group(c.rows, m)) out.push_back(rank_telemetry_tab(*g, c.device));
    }
  for (const auto& c : r.cluster)
    for (const auto& row : c.rows)
      if (!row.burn_in.per_rank.empty()) out.push_back(burn_in_tab(row, c.device));
  for (const auto& c : r.cluster)
    if (!c.max_batch.empty()) out.push_back(max_batch_tab(c));
  if (!r.comparison.rows.empty()) out.push_back(comparison_tab(r.comparison));
  for (const auto& c : r.cost) out.push_back(cost_tab(c));
  if (Table d = definitions_tab(r); !d.rows.empty()) out.push_back(std::move(d));
  if (!r.files.empty()) {
    out.push_back(files_tab(r.files));
    out.push_back(commands_tab(r.files));
    if (Table n = nodes_tab(r.files); !n.rows.empty()) out.push_back(std::move(n));
  }
  for (auto& t : out) t.section = report_section(t.kind);
  return out;
}

std::string render_report(const Report& r, TableFormat format, size_t text_width) {
  auto tables = report_tables(r);
  if (format == TableFormat::markdown)  // the headline as a list: notes print as paragraphs
    for (auto& t : tables)
      if (t.kind == "headline") {
        t.notes.clear();
        for (const auto& line : headline_lines(r.summary.headline)) t.notes.push_back("- " + line);
        t.rows.clear();
        t.columns.clear();
      }
  if (format != TableFormat::json) return render_tables(tables, format, text_width);
  nlohmann::json j = {{"headline", headline_json(r.summary.headline)},
                      {"claims", claims_json(r.summary.claims())},
                      {"tables", nlohmann::json::array()},
                      {"files", r.files},
                      {"findings", r.findings}};
  for (const auto& t : tables) j["tables"].push_back(table_json(t));
  return j.dump(2) + "\n";
}

}  // namespace ddpbench
