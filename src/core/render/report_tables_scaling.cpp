// `ddpbench report`'s scaling tables: weak and strong scaling with the columns and notes every
// scaling row shares, the step breakdowns, optimization impact, the comparison across devices or
// files, and cost. Torch-free.
#include "core/render/report_tables_internal.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "core/result/bench_table.hpp"
#include "core/result/row_metrics.hpp"

namespace ddpbench::report_tables_internal {

namespace {

// Columns every scaling table shows when some row has them: MFU's peak is a footnote.
template <typename Row>
void add_fact_columns(std::vector<Col<Row>>& cols, const std::vector<Row>& rows) {
  const auto any = [&](auto pred) {
    return std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return pred(r.facts); });
  };
  const auto& metrics = row_metrics();
  for (size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].used_in(kInReportTables) && any([i](const RowFacts& f) { return f.metric_at(i).has_value(); }))
      cols.push_back({metrics[i].column(), [i](const Row& r) { return opt(r.facts.metric_at(i)); }});
  if (any([](const RowFacts& f) { return f.self_check_passed.has_value(); }))
    cols.push_back({{"self_check", "self-check", "", fmtcol::plain()}, [](const Row& r) -> Value {
                      if (!r.facts.self_check_passed) return {};
                      return std::string(*r.facts.self_check_passed ? "passed" : "FAILED");
                    }});
  add_notes_column(cols, rows);
}

// Ranks that shared a GPU: the first column counts ranks and a second the GPUs (what per-GPU
// numbers, efficiency and cost count), with a note per such row. Nothing when none shared.
template <typename Row>
void add_shared_device_column(std::vector<Col<Row>>& cols, const std::vector<Row>& rows, const std::string& us) {
  if (std::none_of(rows.begin(), rows.end(), [](const Row& r) { return r.devices < r.world_size; })) return;
  cols.front().column.header = "ranks";
  cols.insert(cols.begin() + 1, Col<Row>{{"devices", us, "", fmtcol::plain()},
                                         [](const Row& r) { return Value(static_cast<long long>(r.devices)); }});
}

template <typename Row>
void add_shared_device_notes(Table& t, const std::vector<Row>& rows, const std::string& u) {
  for (const auto& r : rows)
    if (r.shared_gpu)
      t.notes.push_back(fmt::format(
          "{} ranks ran on {} {}{} (the same GPU UUID or bus id): this row measures sharing, not scaling: no "
          "efficiency{}, not plotted, not priced; its DDP overhead is by throughput (Definitions)",
          r.world_size, r.devices, u, r.devices == 1 ? "" : "s", std::is_same_v<Row, StrongRow> ? " or speedup" : ""));
}

// Rows whose exposed communication exceeds their whole DDP overhead: the no-DDP baseline
// was slower than the DDP row's compute (two separately measured series; noise or a changed
// machine state), so "other DDP overhead" comes out negative and neither split is to be read
// as measured. One note naming them, or "".
template <typename Row>
std::string negative_other_note(const std::vector<Row>& rows, const std::string& unit, const std::string& units) {
  std::vector<std::string> ns;
  for (const auto& r : rows)
    if (r.other_overhead && *r.other_overhead < 0) ns.push_back(std::to_string(r.world_size));
  if (ns.empty()) return "";
  return fmt::format(
      "{} {}: other DDP overhead is negative: exposed communication exceeds the whole DDP overhead, so "
      "the no-DDP baseline ran slower than these rows' compute (separate series: noise or a changed "
      "machine state); read the breakdown table's components, not the split",
      fmt::join(ns, ", "), ns.size() == 1 && ns[0] == "1" ? unit : units);
}

// Milliseconds of a breakdown component, missing when the row has no breakdown.
Value component_ms(const BreakdownRow& b, Phase phase) {
  if (!b.mean_s) return {};
  return Value((*b.mean_s)[static_cast<size_t>(phase)] * 1e3);
}

}  // namespace

Table weak_tab(const WeakTable& w) {
  const std::string u = unit_word(w.key), us = u + "s";
  std::vector<Col<WeakRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const WeakRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"nodes", "nodes", "", fmtcol::plain()},
       [](const WeakRow& r) { return Value(static_cast<long long>(r.nodes)); }},
      {{"per_rank_ex_s", "per-" + u + " ex/s", "ex/s", fmtcol::fixed(1)},
       [](const WeakRow& r) { return Value(r.per_gpu_ex_s); }},
      {{"aggregate_ex_s", "aggregate ex/s", "ex/s", fmtcol::fixed(1)},
       [](const WeakRow& r) { return Value(r.aggregate_ex_s); }},
      {{"efficiency", "efficiency", "fraction", fmtcol::percent()},
       [](const WeakRow& r) { return r.shared_gpu ? Value() : Value(r.efficiency); }},
      {{"ddp_overhead", "DDP overhead vs no-DDP", "fraction", fmtcol::percent()},
       [](const WeakRow& r) { return opt(r.ddp_overhead); }},
      {{"exposed_comm", "exposed comm", "fraction", fmtcol::percent()},
       [](const WeakRow& r) { return opt(r.exposed_comm); }},
      {{"other_ddp_overhead", "other DDP overhead", "fraction", fmtcol::percent()},
       [](const WeakRow& r) { return opt(r.other_overhead); }},
      {{"p50_s", "p50 s/iter", "s", fmtcol::fixed(4)}, [](const WeakRow& r) { return Value(r.p50_s); }},
  };
  const bool flops =
      std::any_of(w.rows.begin(), w.rows.end(), [](const WeakRow& x) { return x.tflops_per_gpu.has_value(); });
  if (flops) {
    cols.push_back({{"tflops_per_rank", "TFLOP/s/" + u, "TFLOP/s", fmtcol::fixed(2)},
                    [](const WeakRow& r) { return opt(r.tflops_per_gpu); }});
    cols.push_back({{"mfu", "MFU", "fraction", fmtcol::percent()}, [](const WeakRow& r) { return opt(r.mfu); }});
    cols.push_back({{"mfu_peak", "MFU peak", "", fmtcol::plain()}, [](const WeakRow& r) {
                      const std::string p = r.mfu_peak.short_label();
                      return r.mfu && !p.empty() ? Value(p) : Value();
                    }});
  }
  add_fact_columns(cols, w.rows);
  add_launch_column(cols);
  add_shared_device_column(cols, w.rows, us);
  cols.push_back({{"global_batch", "global batch", "examples", fmtcol::plain(), false},
                  [b = w.key.batch_per_rank](const WeakRow& r) { return Value(global_batch_of(b, r.world_size)); }});
  cols.push_back({{"p5_s", "p5 s/iter", "s", fmtcol::fixed(4), false}, [](const WeakRow& r) { return Value(r.p5_s); }});
  cols.push_back(
      {{"p95_s", "p95 s/iter", "s", fmtcol::fixed(4), false}, [](const WeakRow& r) { return Value(r.p95_s); }});

  auto ctx = key_context(w.key);
  ctx.emplace_back("batch_per_rank", w.key.batch_per_rank);
  Table t = make_table(
      "weak",
      fmt::format("Weak scaling: {}, {}, {}, batch {} per {}, {}", w.key.model, w.key.setup_label(), w.key.device,
                  with_thousands(w.key.batch_per_rank), u, w.key.input_label()),
      std::move(ctx), cols, w.rows);
  t.notes.push_back(fmt::format("efficiency against the {} row ({:.1f} ex/s per {}){}; terms: Definitions", w.baseline,
                                w.baseline_per_gpu_ex_s, u,
                                w.no_ddp_p50_s ? fmt::format("; no-DDP p50 {:.4f} s", *w.no_ddp_p50_s) : ""));
  if (const auto n = negative_other_note(w.rows, u, us); !n.empty()) t.notes.push_back(n);
  add_fact_notes(t, w.rows, u);
  add_launch_notes(t, w.rows,
                   [&](const WeakRow& r) { return fmt::format("{} {}", r.world_size, r.world_size == 1 ? u : us); });
  add_shared_device_notes(t, w.rows, u);
  return t;
}

Table strong_tab(const StrongTable& s) {
  const std::string u = unit_word(s.key), us = u + "s";
  std::vector<Col<StrongRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const StrongRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"nodes", "nodes", "", fmtcol::plain()},
       [](const StrongRow& r) { return Value(static_cast<long long>(r.nodes)); }},
      {{"batch_per_rank", "batch/" + u, "examples", fmtcol::plain()},
       [](const StrongRow& r) { return Value(r.batch_per_rank); }},
      {{"step_s", "time/step s", "s", fmtcol::fixed(4)}, [](const StrongRow& r) { return Value(r.step_s); }},
      {{"speedup", "speedup", "ratio", fmtcol::times()},
       [](const StrongRow& r) { return r.shared_gpu ? Value() : Value(r.speedup); }},
      {{"efficiency", "efficiency", "fraction", fmtcol::percent()},
       [](const StrongRow& r) { return r.shared_gpu ? Value() : Value(r.efficiency); }},
      {{"aggregate_ex_s", "aggregate ex/s", "ex/s", fmtcol::fixed(1)},
       [](const StrongRow& r) { return Value(r.aggregate_ex_s); }},
      {{"ddp_overhead", "DDP overhead vs no-DDP", "fraction", fmtcol::percent()},
       [](const StrongRow& r) { return opt(r.ddp_overhead); }},
      {{"exposed_comm", "exposed comm", "fraction", fmtcol::percent()},
       [](const StrongRow& r) { return opt(r.exposed_comm); }},
      {{"other_ddp_overhead", "other DDP overhead", "fraction", fmtcol::percent()},
       [](const StrongRow& r) { return opt(r.other_overhead); }},
  };
  add_fact_columns(cols, s.rows);
  add_launch_column(cols);
  add_shared_device_column(cols, s.rows, us);
  cols.push_back(
      {{"p5_s", "p5 s/iter", "s", fmtcol::fixed(4), false}, [](const StrongRow& r) { return Value(r.p5_s); }});
  cols.push_back(
      {{"p95_s", "p95 s/iter", "s", fmtcol::fixed(4), false}, [](const StrongRow& r) { return Value(r.p95_s); }});
  auto ctx = key_context(s.key);
  ctx.emplace_back("global_batch", s.global_batch);
  Table t = make_table(
      "strong",
      fmt::format("Strong scaling: {}, {}, {}, global batch {}, {}", s.key.model, s.key.setup_label(), s.key.device,
                  with_thousands(s.global_batch), s.key.input_label()),
      std::move(ctx), cols, s.rows);
  const int n0 = s.rows.front().devices;
  t.notes.push_back(fmt::format("speedup = t({}) / t(N){}; DDP overhead against the no-DDP row of the same batch per "
                                "{}; terms: Definitions",
                                n0, n0 == 1 ? "" : fmt::format(" x {}", n0), u));
  if (const auto n = negative_other_note(s.rows, u, us); !n.empty()) t.notes.push_back(n);
  add_fact_notes(t, s.rows, u);
  add_launch_notes(t, s.rows,
                   [&](const StrongRow& r) { return fmt::format("{} {}", r.world_size, r.world_size == 1 ? u : us); });
  add_shared_device_notes(t, s.rows, u);
  return t;
}

Table breakdown_tab(const std::vector<BreakdownRow>& rows, const ConfigKey& key, const std::string& what) {
  const std::string u = unit_word(key), us = u + "s";
  std::vector<Col<BreakdownRow>> cols = {
      {{"run", "run", "", fmtcol::plain()},
       [](const BreakdownRow& r) { return Value(std::string(r.ddp ? "DDP" : "no DDP")); }},
      {{"world_size", us, "", fmtcol::plain()},
       [](const BreakdownRow& r) { return Value(static_cast<long long>(r.world_size)); }},
  };
  if (key.scaling == "strong")
    cols.push_back({{"batch_per_rank", "batch/" + u, "examples", fmtcol::plain()},
                    [](const BreakdownRow& r) { return Value(r.batch_per_rank); }});
  const std::vector<std::pair<Phase, const char*>> comps = {{Phase::forward, "forward"},
                                                            {Phase::backward_compute, "bwd compute"},
                                                            {Phase::backward_comm, "bwd comm"},
                                                            {Phase::overlap, "overlap"},
                                                            {Phase::exposed_comm, "exposed comm"},
                                                            {Phase::optimizer, "optimizer"},
                                                            {Phase::other, "other"},
                                                            {Phase::step, "step"}};
  for (const auto& [phase, header] : comps) {
    std::string k = phase_key(phase);
    k.replace(k.size() - 2, 2, "_ms");  // forward_s -> forward_ms
    cols.push_back({{k, std::string(header) + " ms", "ms", fmtcol::fixed(2)},
                    [phase = phase](const BreakdownRow& r) { return component_ms(r, phase); }});
  }
  cols.push_back({{"buckets", "buckets", "", fmtcol::plain()}, [](const BreakdownRow& r) -> Value {
                    if (!r.buckets) return {};
                    return Value(static_cast<long long>(std::llround(*r.buckets)));
                  }});
  cols.push_back({{"allreduce_mib_per_step", "allreduce MiB/step", "MiB", fmtcol::fixed(1)}, [](const BreakdownRow& r) {
                    return r.allreduce_bytes_per_step ? Value(*r.allreduce_bytes_per_step / (1024.0 * 1024.0))
                                                      : Value();
                  }});
  cols.push_back({{"effective_busbw_gbps", "eff. busbw GB/s", "GB/s", fmtcol::fixed(3)},
                  [](const BreakdownRow& r) { return opt(r.effective_busbw_gbps); }});
  cols.push_back({{"file", "file", "", fmtcol::plain()}, [](const BreakdownRow& r) { return Value(r.file); }});
  Table t = make_table("breakdown", "Step breakdown: " + what, key_context(key), cols, rows);
  // How the rows measured it, once per distinct note ("no DDP: ...", "DDP: ...").
  std::vector<std::string> seen;
  for (const auto& r : rows) {
    if (r.note.empty()) continue;
    std::string line = fmt::format("{}: {}", r.ddp ? "DDP" : "no DDP", r.note);
    if (std::find(seen.begin(), seen.end(), line) == seen.end()) seen.push_back(std::move(line));
  }
  t.notes.insert(t.notes.end(), seen.begin(), seen.end());
  return t;
}

Table impact_tab(const ImpactTable& m) {
  const ConfigKey& k = m.key;
  const std::string u = unit_word(k);
  std::vector<Col<ImpactRow>> cols = {
      {{"technique", "technique", "", fmtcol::plain()}, [](const ImpactRow& r) { return Value(r.technique); }},
      {{"step_ms", "step p50 ms", "ms", fmtcol::fixed(2)}, [](const ImpactRow& r) { return Value(r.step_s * 1e3); }},
      {{"speedup", "speedup", "ratio", fmtcol::times()}, [](const ImpactRow& r) { return opt(r.speedup); }},
      {{"exposed_comm_ms", "exposed comm ms", "ms", fmtcol::fixed(2)},
       [](const ImpactRow& r) { return r.exposed_comm_s ? Value(*r.exposed_comm_s * 1e3) : Value(); }},
      {{"exposed_change_ms", "exposed comm change ms", "ms", fmtcol::fixed(2)},
       [](const ImpactRow& r) { return r.exposed_change_s ? Value(*r.exposed_change_s * 1e3) : Value(); }},
      {{"exposed_change", "exposed comm change", "fraction", fmtcol::percent()},
       [](const ImpactRow& r) { return opt(r.exposed_change); }},
      {{"aggregate_ex_s", "aggregate ex/s", "ex/s", fmtcol::fixed(1)},
       [](const ImpactRow& r) { return Value(r.aggregate_ex_s); }},
  };
  add_launch_column(cols);
  auto ctx = key_context(k);
  ctx.emplace_back("batch_per_rank", k.batch_per_rank);
  ctx.emplace_back("world_size", static_cast<long long>(k.world_size));
  Table t = make_table("impact",
                       fmt::format("Optimization impact: {}, {}, {}, batch {} per {}, {}x{} images, DDP on {} {}s",
                                   k.model, k.setup_label(), k.device, with_thousands(k.batch_per_rank), u,
                                   k.image_size, k.image_size, k.world_size, u),
                       std::move(ctx), cols, m.rows);
  if (!m.has_baseline)
    t.notes.push_back(
        fmt::format("no plain run (every DDP knob at its default) on {} {}s of this configuration, so no "
                    "speedup or change: measure one with the variants (e.g. add 25 to --bucket-cap-mb, "
                    "none to --comm-hook)",
                    k.world_size, u));
  add_launch_notes(t, m.rows, [](const ImpactRow& r) { return r.technique; });
  return t;
}

Table comparison_tab(const Comparison& c) {
  // Long form: one line per (configuration, group), so CSV and JSON stay one column per quantity.
  struct Line {
    const ComparisonRow* row;
    size_t group;
  };
  std::vector<Line> lines;
  for (const auto& row : c.rows)
    for (size_t g = 0; g < row.per_gpu_ex_s.size(); ++g)
      if (row.per_gpu_ex_s[g]) lines.push_back({&row, g});
  const std::string u = c.unit;
  const std::vector<Col<Line>> cols = {
      {{"model", "model", "", fmtcol::plain()}, [](const Line& l) { return Value(l.row->key.model); }},
      {{"setup", "setup", "", fmtcol::plain()}, [](const Line& l) { return Value(l.row->key.setup_label()); }},
      {{"image_size", "image", "px", fmtcol::plain()},
       [](const Line& l) { return Value(static_cast<long long>(l.row->key.image_size)); }},
      {{"scaling", "scaling", "", fmtcol::plain()}, [](const Line& l) { return Value(l.row->key.scaling); }},
      {{"batch_per_rank", "batch/" + u, "examples", fmtcol::plain()},
       [](const Line& l) { return Value(l.row->key.batch_per_rank); }},
      {{"world_size", u + "s", "", fmtcol::plain()},
       [](const Line& l) { return Value(static_cast<long long>(l.row->key.world_size)); }},
      {{"group", c.by, "", fmtcol::plain()}, [&c](const Line& l) { return Value(c.groups[l.group]); }},
      {{"per_rank_ex_s", "per-" + u + " ex/s", "ex/s", fmtcol::fixed(1)},
       [](const Line& l) { return opt(l.row->per_gpu_ex_s[l.group]); }},
      {{"ratio", "ratio", "ratio", fmtcol::times()}, [](const Line& l) { return opt(l.row->ratio[l.group]); }},
  };
  return make_table("comparison",
                    fmt::format("Per-{} throughput by {} (ratio to the first {} with a value)", u, c.by, c.by), {},
                    cols, lines);
}

Table cost_tab(const CostTable& c) {
  const std::string u = unit_word(c.key), us = u + "s";
  const bool setups = std::any_of(c.rows.begin(), c.rows.end(), [&](const CostRow& r) { return r.setup != c.rows.front().setup; });
  std::vector<Col<CostRow>> cols;
  if (setups || c.rows.empty())
    cols.push_back({{"setup", "setup", "", fmtcol::plain()}, [](const CostRow& r) { return Value(r.setup); }});
  cols.push_back({{"world_size", us, "", fmtcol::plain()},
                  [](const CostRow& r) { return Value(static_cast<long long>(r.world_size)); }});
  cols.push_back(
      {{"mean_step_s", "mean s/step", "s", fmtcol::fixed(4)}, [](const CostRow& r) { return Value(r.mean_step_s); }});
  cols.push_back({{"ex_s_mean_step", "ex/s at mean step", "ex/s", fmtcol::fixed(1)},
                  [](const CostRow& r) { return Value(r.ex_s_mean_step); }});
  cols.push_back({{"usd_per_million", "USD per 1M samples", "USD", fmtcol::fixed(4)},
                  [](const CostRow& r) { return Value(r.usd_per_million); }});
  cols.push_back({{"relative", "cost efficiency vs cheapest", "fraction", fmtcol::percent()},
                  [](const CostRow& r) { return Value(r.relative); }});
  cols.push_back({{"hours", "time h", "h", fmtcol::sig3()}, [](const CostRow& r) { return Value(r.hours); }});
  cols.push_back({{"usd", "cost USD", "USD", fmtcol::fixed(2)}, [](const CostRow& r) { return Value(r.usd); }});
  cols.push_back({{"file", "file", "", fmtcol::plain()}, [](const CostRow& r) { return Value(r.file); }});
  std::vector<std::pair<std::string, Value>> ctx = {{"device", c.key.device}, {"model", c.model}};
  if (!setups && !c.rows.empty()) ctx.emplace_back("setup", c.rows.front().setup);
  Table t = make_table(
      "cost",
      fmt::format("Cost: {}{}, {}x{} images; {:.2f} USD per {}-hour, {} epochs of {} samples", c.model,
                  !setups && !c.rows.empty() ? ", " + c.rows.front().setup : "", c.key.image_size, c.key.image_size,
                  c.gpu_hour_usd, u, c.epochs, with_thousands(c.dataset_size)),
      std::move(ctx), cols, c.rows);
  if (!c.rows.empty()) {
    const CostRow& b = c.rows[c.best];
    t.notes.push_back(fmt::format(
        "Cheapest per sample: {}{} {}, {:.4f} USD per 1M samples ({}); cost efficiency = its USD per 1M samples / the "
        "row's; terms: Definitions",
        setups ? b.setup + " on " : "", b.world_size, b.world_size == 1 ? u : us, b.usd_per_million, b.file));
  }
  for (const auto& x : c.not_priced)
    t.notes.push_back(x + ": not priced: its ranks shared a " + u + ", which measures sharing, not a size to buy");
  return t;
}

}  // namespace ddpbench::report_tables_internal
