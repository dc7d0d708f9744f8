// `ddpbench report`'s tables: what build_report (core/analysis/report.cpp, the analysis) found,
// as Tables (core/util/table.hpp) for text, Markdown, CSV, JSON and HTML. Torch-free.
#include "core/render/report_tables.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <type_traits>

#include "core/analysis/busbw.hpp"
#include "core/analysis/pairs.hpp"
#include "core/analysis/report_detail.hpp"
#include "core/launch/node_env.hpp"
#include "core/render/report_convergence.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/row_metrics.hpp"
#include "core/stats/burn_in.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench {

using report_detail::gpu_available;
using report_detail::int_at;
using report_detail::max_batch_sentence;
using report_detail::straggler_what;

namespace {

Value opt(const std::optional<double>& v) { return v ? Value(*v) : Value(); }

std::vector<std::pair<std::string, Value>> key_context(const ConfigKey& k) {
  return {{"device", k.device},       {"model", k.model}, {"setup", k.setup_label()},
          {"precision", k.precision}, {"math", k.math},   {"image_size", static_cast<long long>(k.image_size)},
          {"scaling", k.scaling}};
}

// How a series that was not a fixed count stopped, in words: "auto: target_ci",
// "--duration" (a duration run ends on its duration; naming it twice says nothing).
std::string stopping_words(const Stopping& s) {
  if (s.mode == "duration" || s.reason == "duration") return "--duration";
  return s.mode + ": " + s.reason;
}

// The row's warnings and (when not a fixed count) why it stopped, as short codes.
std::string notes_cell(const RowFacts& f) {
  std::vector<std::string> codes;
  for (const auto& w : f.warnings) codes.push_back(w.code);
  if (f.stopping.mode != "fixed") codes.push_back(stopping_words(f.stopping));
  return fmt::format("{}", fmt::join(codes, ", "));
}

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
  if (any([](const RowFacts& f) { return !f.warnings.empty() || f.stopping.mode != "fixed"; }))
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
std::string negative_other_note(const std::vector<Row>& rows, const std::string& units) {
  std::vector<std::string> ns;
  for (const auto& r : rows)
    if (r.other_overhead && *r.other_overhead < 0) ns.push_back(std::to_string(r.world_size));
  if (ns.empty()) return "";
  return fmt::format(
      "{} {}: other DDP overhead is negative: exposed communication exceeds the whole DDP overhead, so "
      "the no-DDP baseline ran slower than these rows' compute (separate series: noise or a changed "
      "machine state); read the breakdown table's components, not the split",
      fmt::join(ns, ", "), units);
}

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
      fmt::format("Weak scaling: {}, {}, {}, batch {} per {}, {}x{} images", w.key.model, w.key.setup_label(),
                  w.key.device, with_thousands(w.key.batch_per_rank), u, w.key.image_size, w.key.image_size),
      std::move(ctx), cols, w.rows);
  t.notes.push_back(fmt::format("efficiency against the {} row ({:.1f} ex/s per {}){}; terms: Definitions", w.baseline,
                                w.baseline_per_gpu_ex_s, u,
                                w.no_ddp_p50_s ? fmt::format("; no-DDP p50 {:.4f} s", *w.no_ddp_p50_s) : ""));
  if (const auto n = negative_other_note(w.rows, us); !n.empty()) t.notes.push_back(n);
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
      fmt::format("Strong scaling: {}, {}, {}, global batch {}, {}x{} images", s.key.model, s.key.setup_label(),
                  s.key.device, with_thousands(s.global_batch), s.key.image_size, s.key.image_size),
      std::move(ctx), cols, s.rows);
  const int n0 = s.rows.front().devices;
  t.notes.push_back(fmt::format("speedup = t({}) / t(N){}; DDP overhead against the no-DDP row of the same batch per "
                                "{}; terms: Definitions",
                                n0, n0 == 1 ? "" : fmt::format(" x {}", n0), u));
  if (const auto n = negative_other_note(s.rows, us); !n.empty()) t.notes.push_back(n);
  add_fact_notes(t, s.rows, u);
  add_launch_notes(t, s.rows,
                   [&](const StrongRow& r) { return fmt::format("{} {}", r.world_size, r.world_size == 1 ? u : us); });
  add_shared_device_notes(t, s.rows, u);
  return t;
}

// Milliseconds of a breakdown component, missing when the row has no breakdown.
Value component_ms(const BreakdownRow& b, Phase phase) {
  if (!b.mean_s) return {};
  return Value((*b.mean_s)[static_cast<size_t>(phase)] * 1e3);
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

// "resnet50, CPU (...), batch 32 per rank, 64x64 images" (a strategy group's key: precision varies).
std::string strategy_what(const ConfigKey& k) {
  const std::string u = unit_word(k);
  const std::string batch = k.scaling == "weak" ? fmt::format("batch {} per {}", with_thousands(k.batch_per_rank), u)
                                                : fmt::format("global batch {}", with_thousands(k.global_batch));
  return fmt::format("{}, {}, {} scaling, {}, {}x{} images", k.model, k.device, k.scaling, batch, k.image_size,
                     k.image_size);
}

std::vector<std::pair<std::string, Value>> strategy_context(const ConfigKey& k) {
  return {{"device", k.device},
          {"model", k.model},
          {"image_size", static_cast<long long>(k.image_size)},
          {"scaling", k.scaling},
          {"batch_per_rank", k.scaling == "weak" ? Value(k.batch_per_rank) : Value()}};
}

Table strategy_tab(const StrategyTable& m) {
  const std::string u = unit_word(m.key), us = u + "s";
  // GPU rows measure the caching allocator (a file too old to record it shows n/a, never RSS).
  const bool gpu = u == "GPU";
  std::vector<Col<StrategyRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const StrategyRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"strategy", "strategy", "", fmtcol::plain()}, [](const StrategyRow& r) { return Value(r.strategy); }},
      {{"activation_checkpointing", "act. ckpt", "", fmtcol::plain()},
       [](const StrategyRow& r) { return Value(std::string(r.activation_checkpointing ? "on" : "off")); }},
      {{"precision", "precision", "", fmtcol::plain()}, [](const StrategyRow& r) { return Value(r.precision); }},
      {{"aggregate_ex_s", "throughput ex/s", "ex/s", fmtcol::fixed(1)},
       [](const StrategyRow& r) { return Value(r.aggregate_ex_s); }},
      {{"efficiency", "efficiency", "fraction", fmtcol::percent()},
       [](const StrategyRow& r) { return opt(r.efficiency); }},
      {{"step_ms", "step p50 ms", "ms", fmtcol::fixed(2)}, [](const StrategyRow& r) { return Value(r.step_s * 1e3); }},
      {{"exposed_comm", "exposed comm", "fraction", fmtcol::percent()},
       [](const StrategyRow& r) { return opt(r.exposed_comm); }},
  };
  if (gpu) {
    cols.push_back({{"peak_allocated_bytes", "peak allocated/" + u, "bytes", fmtcol::bytes()},
                    [](const StrategyRow& r) { return opt(r.peak_allocated_bytes); }});
    cols.push_back({{"peak_reserved_bytes", "peak reserved/" + u, "bytes", fmtcol::bytes()},
                    [](const StrategyRow& r) { return opt(r.peak_reserved_bytes); }});
  }
  cols.push_back({{"peak_rss_bytes", "peak RSS/" + u, "bytes", fmtcol::bytes(), !gpu},
                  [](const StrategyRow& r) { return opt(r.peak_rss_bytes); }});
  cols.push_back({{"model_state_bytes", "model state/" + u, "bytes", fmtcol::bytes()},
                  [](const StrategyRow& r) { return opt(r.model_state_bytes); }});
  add_launch_column(cols);
  Table t =
      make_table("strategy", "Strategy comparison: " + strategy_what(m.key), strategy_context(m.key), cols, m.rows);
  add_launch_notes(t, m.rows, [&](const StrategyRow& r) {
    return fmt::format("{} {}, {}{}, {}", r.world_size, r.world_size == 1 ? u : us, r.strategy,
                       r.activation_checkpointing ? " with act. ckpt" : "", r.precision);
  });
  return t;
}

Table memory_tab(const MemoryTable& m) {
  const std::string u = unit_word(m.key), us = u + "s";
  std::vector<Col<MemoryRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const MemoryRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"technique", "technique", "", fmtcol::plain()}, [](const MemoryRow& r) { return Value(r.technique); }},
      {{"peak_bytes", m.peak_kind + "/" + u, "bytes", fmtcol::bytes()},
       [](const MemoryRow& r) { return Value(r.peak_bytes); }},
      {{"baseline_peak_bytes", "fp32 DDP", "bytes", fmtcol::bytes()},
       [](const MemoryRow& r) { return Value(r.baseline_peak_bytes); }},
      {{"saved_bytes", "memory saved", "bytes", fmtcol::bytes()},
       [](const MemoryRow& r) { return Value(r.saved_bytes); }},
      {{"saved", "saved", "fraction", fmtcol::percent()}, [](const MemoryRow& r) { return Value(r.saved); }},
      {{"step_ms", "step p50 ms", "ms", fmtcol::fixed(2)}, [](const MemoryRow& r) { return Value(r.step_s * 1e3); }},
      {{"baseline_step_ms", "fp32 DDP ms", "ms", fmtcol::fixed(2)},
       [](const MemoryRow& r) { return Value(r.baseline_step_s * 1e3); }},
      {{"time_paid", "time paid", "fraction", fmtcol::percent()},
       [](const MemoryRow& r) { return Value(r.time_paid); }},
      {{"model_state_bytes", "model state/" + u, "bytes", fmtcol::bytes()},
       [](const MemoryRow& r) { return opt(r.model_state_bytes); }},
      {{"baseline_model_state_bytes", "fp32 DDP model state", "bytes", fmtcol::bytes(), false},
       [](const MemoryRow& r) { return opt(r.baseline_model_state_bytes); }},
  };
  add_launch_column(cols);
  Table t = make_table("memory", "Memory optimization (measured): " + strategy_what(m.key), strategy_context(m.key),
                       cols, m.rows);
  const auto name = [&](const MemoryRow& r) {
    return fmt::format("{} {}, {}", r.world_size, r.world_size == 1 ? u : us, r.technique);
  };
  add_launch_notes(t, m.rows, name);
  for (const auto& r : m.rows)
    if (r.baseline_file != r.launch.file)
      t.notes.push_back(
          fmt::format("{}: against the fp32 DDP row of {} (this row: {})", name(r), r.baseline_file, r.launch.file));
  return t;
}

Table inference_tab(const InferenceTable& m) {
  const std::string u = unit_word(m.key), us = u + "s";
  std::vector<Col<InferenceRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const InferenceRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"aggregate_ex_s", "throughput ex/s", "ex/s", fmtcol::fixed(1)},
       [](const InferenceRow& r) { return Value(r.aggregate_ex_s); }},
      {{"p50_ms", "latency p50 ms", "ms", fmtcol::fixed(2)},
       [](const InferenceRow& r) { return Value(r.p50_s * 1e3); }},
      {{"p95_ms", "latency p95 ms", "ms", fmtcol::fixed(2)},
       [](const InferenceRow& r) { return Value(r.p95_s * 1e3); }},
      {{"peak_memory_bytes", "peak memory/" + u, "bytes", fmtcol::bytes()},
       [](const InferenceRow& r) { return opt(r.peak_memory_bytes); }},
  };
  add_launch_column(cols);
  auto ctx = key_context(m.key);
  ctx.emplace_back("batch_per_rank", m.key.batch_per_rank);
  Table t = make_table("inference",
                       fmt::format("Inference (forward only, no DDP): {}, {}, {}, batch {} per {}, {}x{} images",
                                   m.key.model, m.key.setup_label(), m.key.device, with_thousands(m.key.batch_per_rank),
                                   u, m.key.image_size, m.key.image_size),
                       std::move(ctx), cols, m.rows);
  add_launch_notes(
      t, m.rows, [&](const InferenceRow& r) { return fmt::format("{} {}", r.world_size, r.world_size == 1 ? u : us); });
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
  std::vector<Col<CostRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const CostRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"mean_step_s", "mean s/step", "s", fmtcol::fixed(4)}, [](const CostRow& r) { return Value(r.mean_step_s); }},
      {{"ex_s_mean_step", "ex/s at mean step", "ex/s", fmtcol::fixed(1)},
       [](const CostRow& r) { return Value(r.ex_s_mean_step); }},
      {{"usd_per_million", "USD per 1M samples", "USD", fmtcol::fixed(4)},
       [](const CostRow& r) { return Value(r.usd_per_million); }},
      {{"hours", "time h", "h", fmtcol::sig3()}, [](const CostRow& r) { return Value(r.hours); }},
      {{"usd", "cost USD", "USD", fmtcol::fixed(2)}, [](const CostRow& r) { return Value(r.usd); }},
      {{"file", "file", "", fmtcol::plain()}, [](const CostRow& r) { return Value(r.file); }},
  };
  const bool weak = c.key.scaling == "weak";
  auto ctx = key_context(c.key);
  ctx.emplace_back(weak ? "batch_per_rank" : "global_batch", c.batch);
  Table t = make_table(
      "cost",
      fmt::format("Cost: {}, {}, {}, {}x{} images, {} scaling, {} {}; {:.2f} USD per {}-hour, {} epochs of {} samples",
                  c.key.model, c.key.setup_label(), c.key.device, c.key.image_size, c.key.image_size, c.key.scaling,
                  weak ? "batch per " + u : "global batch", with_thousands(c.batch), c.gpu_hour_usd, u, c.epochs,
                  with_thousands(c.dataset_size)),
      std::move(ctx), cols, c.rows);
  const auto best =
      std::find_if(c.rows.begin(), c.rows.end(), [&](const CostRow& x) { return x.world_size == c.best_world_size; });
  if (best != c.rows.end())
    t.notes.push_back(fmt::format("Most cost-efficient: {} {}(s), {:.4f} USD per 1M samples; terms: Definitions",
                                  c.best_world_size, u, best->usd_per_million));
  for (const auto& x : c.not_priced)
    t.notes.push_back(x + ": not priced: its ranks shared a " + u + ", which measures sharing, not a size to buy");
  return t;
}

// ---- cluster validation tables (schema 1.6)

Value num_or_na(const std::optional<double>& v, double scale = 1) { return v ? Value(*v * scale) : Value(); }

// "1 of 4 (hw_thermal_slowdown, sw_thermal_slowdown)", "0 of 4".
std::string throttled_words(const TelemetryRowSummary& t) {
  std::string s = fmt::format("{} of {}", t.throttled_ranks, t.gpu_ranks);
  if (!t.throttle_reasons.empty()) s += fmt::format(" ({})", fmt::join(t.throttle_reasons, ", "));
  return s;
}

// The one note that says the GPU metrics were unavailable, with the reasons, for `rows`.
std::optional<std::string> unavailable_note(const std::vector<std::pair<std::string, TelemetryRowSummary>>& rows) {
  std::set<std::string> why;
  int ranks = 0, all = 0;
  for (const auto& [label, t] : rows) {
    why.insert(t.gpu_unavailable.begin(), t.gpu_unavailable.end());
    ranks += t.ranks - t.gpu_ranks;
    all += t.ranks;
  }
  if (why.empty()) return std::nullopt;
  return fmt::format(
      "GPU metrics unavailable{}: {}",
      ranks == all ? " (every rank; host metrics only)" : fmt::format(" on {} of {} rank samples", ranks, all),
      fmt::join(why, "; "));
}

// Telemetry codes of row warnings, in words under the telemetry and burn-in tables.
bool telemetry_code(const std::string& c) {
  return c == "low_gpu_util" || c == "gpu_throttled" || c == "throughput_drift";
}

Table telemetry_tab(const ClusterFile& c) {
  using Line = std::pair<const BenchResult*, TelemetryRowSummary>;
  std::vector<Line> lines;
  std::vector<std::pair<std::string, TelemetryRowSummary>> for_note;
  for (const auto& r : c.rows) {
    auto t = summarize_telemetry(r);
    if (t.ranks == 0) continue;
    for_note.emplace_back(r.label, t);
    lines.emplace_back(&r, std::move(t));
  }
  const bool gpu = std::any_of(lines.begin(), lines.end(), [](const Line& l) { return l.second.gpu_ranks > 0; });
  std::vector<Col<Line>> cols = {
      {{"model", "model", "", fmtcol::plain()}, [](const Line& l) { return Value(l.first->model); }},
      {{"run", "run", "", fmtcol::plain()}, [](const Line& l) { return Value(l.first->label); }},
      {{"batch_per_rank", "batch/rank", "examples", fmtcol::plain()},
       [](const Line& l) { return Value(l.first->batch_per_rank); }},
      {{"ranks", "ranks", "", fmtcol::plain()},
       [](const Line& l) { return Value(static_cast<long long>(l.second.ranks)); }},
  };
  if (gpu) {
    cols.push_back({{"min_sm_util_pct", "min SM util %", "%", fmtcol::fixed(1)},
                    [](const Line& l) { return num_or_na(l.second.min_sm_util_pct); }});
    cols.push_back({{"max_temperature_c", "max temp C", "C", fmtcol::fixed(0)},
                    [](const Line& l) { return num_or_na(l.second.max_temperature_c); }});
    cols.push_back({{"min_sm_clock_mhz", "min SM clock MHz", "MHz", fmtcol::fixed(0)},
                    [](const Line& l) { return num_or_na(l.second.min_sm_clock_mhz); }});
    cols.push_back({{"max_power_w", "max power W", "W", fmtcol::fixed(0)},
                    [](const Line& l) { return num_or_na(l.second.max_power_w); }});
    cols.push_back({{"max_mem_used_pct", "max GPU mem % of card", "%", fmtcol::fixed(1)},
                    [](const Line& l) { return num_or_na(l.second.max_mem_used_pct); }});
    cols.push_back({{"throttled", "throttled ranks", "", fmtcol::plain()}, [](const Line& l) -> Value {
                      if (l.second.gpu_ranks == 0) return {};
                      return throttled_words(l.second);
                    }});
  }
  cols.push_back({{"mean_cpu_util_pct", "CPU util %", "%", fmtcol::fixed(1)},
                  [](const Line& l) { return num_or_na(l.second.mean_cpu_util_pct); }});
  cols.push_back({{"max_peak_rss_bytes", "peak RSS", "bytes", fmtcol::bytes()},
                  [](const Line& l) { return num_or_na(l.second.max_peak_rss_bytes); }});
  cols.push_back({{"net_rx_mb_s", "net rx MB/s", "MB/s", fmtcol::fixed(2)},
                  [](const Line& l) { return num_or_na(l.second.mean_net_rx_bytes_per_s, 1e-6); }});
  cols.push_back({{"net_tx_mb_s", "net tx MB/s", "MB/s", fmtcol::fixed(2)},
                  [](const Line& l) { return num_or_na(l.second.mean_net_tx_bytes_per_s, 1e-6); }});
  Table t = make_table(
      "telemetry", fmt::format("Telemetry during the measured iterations: {}, {} ({})", c.device, c.label, c.source),
      {{"device", c.device}, {"source", c.source}}, cols, lines);
  t.notes.push_back(
      std::string(
          gpu ? "min SM util = lowest over ranks of each rank's mean SM utilization (NVML: a kernel was running, "
                "not how full the SMs were); max temp, max power: highest sample of any rank; min SM clock: "
                "lowest sample of any rank; max GPU mem % of card = largest memory used on any rank's GPU (NVML: "
                "every process on it) / the card's memory; throttled ranks: ranks with a clock-event reason in "
                "some sample; "
              : "") +
      "CPU util = mean over ranks of each rank's process CPU time / wall time (> 100% with several threads); peak RSS "
      "= "
      "largest over ranks; net MB/s (1e6 bytes/s) = mean over ranks on the process group's interface");
  if (const auto n = unavailable_note(for_note)) t.notes.push_back(*n);
  for (const auto& [r, sum] : lines)
    for (const auto& w : r->warnings)
      if (telemetry_code(w.code) && w.code != "throughput_drift")
        t.notes.push_back(fmt::format("{} {}: {}: {}", r->model, r->label, w.code, w.message));
  return t;
}

Table straggler_tab(const nlohmann::json& e) {
  std::vector<nlohmann::json> ranks(e["ranks"].begin(), e["ranks"].end());
  const auto ms = [](const char* key) {
    return [key](const nlohmann::json& x) { return num_or_na(json_num_opt(x, key), 1e3); };
  };
  const std::vector<Col<nlohmann::json>> cols = {
      {{"rank", "rank", "", fmtcol::plain()}, [](const nlohmann::json& x) { return Value(int_at(x, "rank")); }},
      {{"host", "host", "", fmtcol::plain()}, [](const nlohmann::json& x) { return Value(json_str_or(x, "host")); }},
      {{"local_rank", "local rank", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(int_at(x, "local_rank")); }},
      {{"gpu_index", "GPU", "", fmtcol::plain()},
       [](const nlohmann::json& x) -> Value {
         const long long g = int_at(x, "gpu_index");
         return g < 0 ? Value(std::string("cpu")) : Value(g);
       }},
      {{"gpu_uuid", "UUID", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(json_str_or(x, "gpu_uuid")); }},
      {{"bus_id", "bus id", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(json_str_or(x, "bus_id")); }},
      {{"compute_step_ms", "compute-only step ms", "ms", fmtcol::fixed(2)}, ms("compute_step_s")},
      {{"ddp_step_ms", "DDP step ms", "ms", fmtcol::fixed(2)}, ms("ddp_step_s")},
      {{"comm_wait_ms", "comm wait ms", "ms", fmtcol::fixed(2)}, ms("comm_wait_s")},
      {{"score", "score", "ratio", fmtcol::fixed(3)},
       [](const nlohmann::json& x) { return num_or_na(json_num_opt(x, "score")); }},
      {{"straggler", "straggler", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(std::string(json_true(x, "straggler") ? "STRAGGLER" : "")); }},
  };
  const double thr = json_num_opt(e, "threshold").value_or(0.95);
  Table t = make_table(
      "stragglers", fmt::format("Per-rank step times and straggler score: {} (threshold {:g})", straggler_what(e), thr),
      {{"model", json_str_or(e, "model")}, {"batch_per_rank", int_at(e, "batch_per_rank")}}, cols, ranks);
  t.notes.push_back(fmt::format(
      "score = the fastest rank's compute-only step / this rank's (1 = fastest; NVIDIA's resiliency extension), "
      "compute-only step = p50 of the rank's own steps without DDP, all ranks at the same time; DDP step = p50 in the "
      "largest DDP group; comm wait = mean exposed communication per step there; straggler: score < {:g}",
      thr));
  if (const auto n = json_str_or(e, "note"); !n.empty()) t.notes.push_back(n);
  return t;
}

// One line per rank of a row with telemetry: the rank and its telemetry summary.
struct RankTel {
  int rank = 0;
  std::string host;
  const TelemetrySummary* s = nullptr;
};

Table rank_telemetry_tab(const BenchResult& r, const std::string& device) {
  std::vector<RankTel> lines;
  for (const auto& rk : r.ranks)
    if (const auto* s = sampled_telemetry(rk)) lines.push_back({rk.rank, rk.host, s});
  const bool gpu = std::any_of(lines.begin(), lines.end(), [](const RankTel& l) { return gpu_available(*l.s); });
  // One statistic of a metric, found by `metric` in the summary, times `scale`.
  using Find = std::function<const std::optional<MetricStats>*(const TelemetrySummary&)>;
  const auto at = [](Find metric, std::optional<double> MetricStats::*stat, double scale = 1) {
    return [metric, stat, scale](const RankTel& l) -> Value {
      const std::optional<MetricStats>* m = metric(*l.s);
      if (!m || !*m || !((**m).*stat)) return {};
      return Value(*((**m).*stat) * scale);
    };
  };
  const auto gpu_metric = [](std::optional<MetricStats> GpuTelemetry::*field) -> Find {
    return [field](const TelemetrySummary& s) { return s.gpu ? &((*s.gpu).*field) : nullptr; };
  };
  const Find cpu = [](const TelemetrySummary& s) { return s.host ? &s.host->cpu_util_pct : nullptr; };
  const auto net_metric = [](std::optional<MetricStats> NetTelemetry::*field) -> Find {
    return [field](const TelemetrySummary& s) { return s.host && s.host->net ? &((*s.host->net).*field) : nullptr; };
  };
  std::vector<Col<RankTel>> cols = {
      {{"rank", "rank", "", fmtcol::plain()}, [](const RankTel& l) { return Value(static_cast<long long>(l.rank)); }},
      {{"host", "host", "", fmtcol::plain()}, [](const RankTel& l) { return Value(l.host); }},
  };
  if (gpu) {
    cols.push_back({{"gpu_index", "GPU", "", fmtcol::plain()}, [](const RankTel& l) -> Value {
                      if (!gpu_available(*l.s)) return {};
                      return Value(l.s->gpu->index.value_or(-1));
                    }});
    cols.push_back({{"mean_sm_util_pct", "SM util %", "%", fmtcol::fixed(1)},
                    at(gpu_metric(&GpuTelemetry::sm_util_pct), &MetricStats::mean)});
    cols.push_back({{"mean_sm_clock_mhz", "SM clock MHz", "MHz", fmtcol::fixed(0)},
                    at(gpu_metric(&GpuTelemetry::sm_clock_mhz), &MetricStats::mean)});
    cols.push_back({{"max_temperature_c", "max temp C", "C", fmtcol::fixed(0)},
                    at(gpu_metric(&GpuTelemetry::temperature_c), &MetricStats::max)});
    cols.push_back({{"throttled", "throttled", "", fmtcol::plain()}, [](const RankTel& l) -> Value {
                      if (!gpu_available(*l.s)) return {};
                      const GpuTelemetry& g = *l.s->gpu;
                      const double f = g.throttled_fraction.value_or(0);
                      const std::vector<std::string> why = g.throttle_reasons.value_or(std::vector<std::string>{});
                      if (f <= 0 && why.empty()) return std::string("no");
                      return fmt::format("{:.0f}% ({})", f * 100, fmt::join(why, ", "));
                    }});
  }
  cols.push_back({{"mean_cpu_util_pct", "CPU util %", "%", fmtcol::fixed(1)}, at(cpu, &MetricStats::mean)});
  cols.push_back({{"net_rx_mb_s", "net rx MB/s", "MB/s", fmtcol::fixed(2)},
                  at(net_metric(&NetTelemetry::rx_bytes_per_s), &MetricStats::mean, 1e-6)});
  cols.push_back({{"net_tx_mb_s", "net tx MB/s", "MB/s", fmtcol::fixed(2)},
                  at(net_metric(&NetTelemetry::tx_bytes_per_s), &MetricStats::mean, 1e-6)});
  Table t = make_table("rank_telemetry",
                       fmt::format("Per-rank telemetry: {}, {}, batch {} per rank, {} {}", r.model, r.label,
                                   r.batch_per_rank, device, r.ddp ? "(largest DDP group)" : "(no DDP)"),
                       {{"model", r.model}, {"device", device}, {"world_size", static_cast<long long>(r.world_size)}},
                       cols, lines);
  t.notes.push_back(
      "each rank's mean over its samples (max temp: its highest sample; throttled: share of samples with "
      "a clock-event reason, and the reasons seen)");
  return t;
}

// Percentile of a few numbers (core/stats/stats), for the burn-in's min/median/max over ranks.
Table burn_in_tab(const BenchResult& r, const std::string& device) {
  const RowBurnIn& b = r.burn_in;
  const double window = b.window_s.value_or(0);
  const std::vector<BurnInRank>& per_rank = b.per_rank;
  size_t windows = 0;
  for (const auto& x : per_rank) windows = std::max(windows, x.ex_per_s.size());
  std::vector<size_t> idx(windows);
  for (size_t i = 0; i < windows; ++i) idx[i] = i;
  const bool many = per_rank.size() > kBurnInRankColumns;
  std::vector<Col<size_t>> cols = {
      {{"window", "window", "", fmtcol::plain()}, [](size_t i) { return Value(static_cast<long long>(i)); }},
      {{"start_s", "start s", "s", fmtcol::fixed(0)},
       [window](size_t i) { return Value(window * static_cast<double>(i)); }},
  };
  const auto at = [&per_rank](size_t k, size_t i) {
    return i < per_rank[k].ex_per_s.size() ? per_rank[k].ex_per_s[i] : NAN;
  };
  if (!many) {
    for (size_t k = 0; k < per_rank.size(); ++k)
      cols.push_back({{fmt::format("rank{}_ex_s", per_rank[k].rank), fmt::format("rank {} ex/s", per_rank[k].rank),
                       "ex/s", fmtcol::fixed(1)},
                      [at, k](size_t i) {
                        const double v = at(k, i);
                        return std::isfinite(v) ? Value(v) : Value();
                      }});
  } else {
    const auto over = [at, n = per_rank.size()](size_t i, double q) -> Value {
      std::vector<double> v;
      for (size_t k = 0; k < n; ++k)
        if (std::isfinite(at(k, i))) v.push_back(at(k, i));
      if (v.empty()) return {};
      return Value(percentile(v, q));
    };
    cols.push_back({{"min_ex_s", "min ex/s", "ex/s", fmtcol::fixed(1)}, [over](size_t i) { return over(i, 0); }});
    cols.push_back(
        {{"median_ex_s", "median ex/s", "ex/s", fmtcol::fixed(1)}, [over](size_t i) { return over(i, 50); }});
    cols.push_back({{"max_ex_s", "max ex/s", "ex/s", fmtcol::fixed(1)}, [over](size_t i) { return over(i, 100); }});
  }
  Table t = make_table(
      "burn_in",
      fmt::format("Burn-in: {}, {}, batch {} per rank, {}: ex/s per rank per {:g} s window over {:g} s", r.model,
                  r.label, r.batch_per_rank, device, window, b.duration_s.value_or(0)),
      {{"model", r.model}, {"device", device}, {"world_size", static_cast<long long>(r.world_size)}}, cols, idx);
  const double thr = b.drift_threshold_pct.value_or(kDriftThresholdPct);
  std::vector<std::string> all;
  std::vector<std::pair<double, std::string>> flagged;  // |change|, words
  int n = 0;
  for (const BurnInDrift& d : b.drift) {
    ++n;
    const std::string s =
        fmt::format("rank {} {:+.1f}% ({:.1f} -> {:.1f} ex/s{})", d.rank, d.change_pct, d.first_ex_per_s,
                    d.last_ex_per_s, d.resolution_pct > 0 ? fmt::format(", resolution {:.1f}%", d.resolution_pct) : "");
    all.push_back(s + (d.flagged ? " DRIFT" : ""));
    if (d.flagged) flagged.emplace_back(std::isfinite(d.change_pct) ? std::abs(d.change_pct) : 0, s);
  }
  // Many ranks: the largest changes first, at most kBurnInRankColumns of them named.
  std::stable_sort(flagged.begin(), flagged.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> named;
  for (size_t i = 0; i < flagged.size() && i < kBurnInRankColumns; ++i) named.push_back(flagged[i].second);
  if (flagged.size() > named.size()) named.push_back(fmt::format("and {} more", flagged.size() - named.size()));
  t.notes.push_back(fmt::format(
      "drift = (last window - first window) / first window; DRIFT when throughput fell by more than {:g}% plus the "
      "rank's resolution (two steps' share of a window: a window holds whole steps, so a smaller change can be "
      "rounding)",
      thr));
  if (n <= static_cast<int>(kBurnInRankColumns)) {
    if (!all.empty()) t.notes.push_back(fmt::format("drift: {}", fmt::join(all, "; ")));
  } else {
    t.notes.push_back(
        flagged.empty() ? fmt::format("drift: none of the {} ranks fell by more than {:g}% plus its resolution", n, thr)
                        : fmt::format("drift flagged on {} of {} ranks, largest first: {}", flagged.size(), n,
                                      fmt::join(named, "; ")));
  }
  for (const auto& w : r.warnings)
    if (w.code == "throughput_drift") t.notes.push_back(fmt::format("{}: {}", w.code, w.message));
  return t;
}

// `comm --pairs`: the summary's table (core/analysis/pairs.hpp pairs_table: one line per pair, the
// reference and the named slow nodes and links); a file without the summary gets the rows.
Table pairs_tab(const ClusterFile& c) {
  if (c.comm_pairs.is_object() && c.comm_pairs.contains("pairs") && c.comm_pairs.contains("participants")) {
    Table t = pairs_table(c.comm_pairs);
    t.title = fmt::format("Pair bandwidth (comm --pairs): {}, {}, {} ({})", t.title, c.device, c.label, c.source);
    return t;
  }
  std::vector<CommResult> rows = c.pair_rows;
  const auto round_of = [](const CommResult& x) { return int_at(x.extra, "round"); };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const CommResult& a, const CommResult& b) { return round_of(a) < round_of(b); });
  const auto name = [](const CommResult& x, size_t i) -> std::string {
    const auto& p = x.extra["pair"];
    return p.is_array() && p.size() > i && p[i].is_string() ? p[i].get<std::string>() : "?";
  };
  const std::vector<Col<CommResult>> cols = {
      {{"round", "round", "", fmtcol::plain()}, [&](const CommResult& x) { return Value(round_of(x)); }},
      {{"host_a", "host A", "", fmtcol::plain()}, [&](const CommResult& x) { return Value(name(x, 0)); }},
      {{"host_b", "host B", "", fmtcol::plain()}, [&](const CommResult& x) { return Value(name(x, 1)); }},
      {{"collective", "collective", "", fmtcol::plain()},
       [&](const CommResult& x) {
         const std::string dir = json_str_or(x.extra, "direction");
         if (dir == "a->b") return Value(x.collective + " A->B");
         if (dir == "b->a") return Value(x.collective + " B->A");
         return Value(x.collective);
       }},
      {{"size_bytes", "size", "bytes", fmtcol::bytes()}, [](const CommResult& x) { return Value(x.bytes); }},
      {{"time_us", "time us", "us", fmtcol::fixed(1)}, [](const CommResult& x) { return Value(x.time_us); }},
      {{"busbw_gbps", "GB/s", "GB/s", fmtcol::fixed(3)}, [](const CommResult& x) { return Value(x.busbw_gbps); }},
  };
  Table t = make_table("pairs", fmt::format("Pair bandwidth (comm --pairs): {}, {} ({})", c.device, c.label, c.source),
                       {{"device", c.device}, {"source", c.source}}, cols, rows);
  t.notes.push_back(
      "GB/s = busbw (1e9 bytes/s): sendrecv one direction at a time (bytes / receiver's time), "
      "allreduce on the two ranks (busbw = algbw for 2 ranks); pairs of one round ran at the same time");
  return t;
}

Table max_batch_tab(const ClusterFile& c) {
  const auto& m = c.max_batch;
  std::vector<nlohmann::json> trials;
  if (m.contains("trials") && m["trials"].is_array()) trials.assign(m["trials"].begin(), m["trials"].end());
  const std::vector<Col<nlohmann::json>> cols = {
      {{"trial", "trial", "", fmtcol::plain()},
       [&trials](const nlohmann::json& x) { return Value(static_cast<long long>(&x - trials.data()) + 1); }},
      {{"batch", "batch/rank", "examples", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(int_at(x, "batch")); }},
      {{"fits", "fits", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(std::string(json_true(x, "fits") ? "yes" : "no")); }},
      {{"peak_memory_bytes", "peak memory", "bytes", fmtcol::bytes()},
       [](const nlohmann::json& x) { return num_or_na(json_num_opt(x, "peak_memory_bytes")); }},
      {{"seconds", "time s", "s", fmtcol::fixed(2)},
       [](const nlohmann::json& x) { return num_or_na(json_num_opt(x, "seconds")); }},
      {{"error", "error", "", fmtcol::plain()}, [](const nlohmann::json& x) { return Value(json_str_or(x, "error")); }},
  };
  Table t = make_table("max_batch",
                       fmt::format("find-max-bs: {}, {}, {}, {}x{} images: trials in order",
                                   json_str_or(m, "model", "?"), json_str_or(m, "precision", "?"),
                                   json_str_or(m, "device", "?"), int_at(m, "image_size"), int_at(m, "image_size")),
                       {{"source", c.source}, {"model", json_str_or(m, "model")}}, cols, trials);
  t.notes.push_back(max_batch_sentence(m));
  if (const auto lim = json_num_opt(m, "memory_limit_bytes"); lim && *lim > 0)
    t.notes.push_back(fmt::format("memory limit {}", fmtcol::bytes()(Value(*lim))));
  t.notes.push_back(
      "grow by doubling until a batch fails, then bisect between the last that fit and the first that "
      "failed; recommended = largest that fits x (1 - margin), rounded down");
  return t;
}

}  // namespace

Table comm_table(const CommTable& c) {
  const bool cpu = c.device.rfind("CPU", 0) == 0;
  const std::string u = cpu ? "rank" : "GPU";
  Table t = ddpbench::comm_table(fmt::format("Collective {}: {} {}{} ({}), {}, {}", c.collective, c.world_size, u,
                                             c.world_size == 1 ? "" : "s", c.label, c.device, c.source),
                                 c.rows);
  t.context = {{"device", c.device},
               {"source", c.source},
               {"collective", c.collective},
               {"world_size", static_cast<long long>(c.world_size)},
               {"nodes", static_cast<long long>(c.nodes)}};
  t.notes.push_back(
      "nccl-tests' columns (doc/PERFORMANCE.md): time = mean per operation, averaged over ranks; algbw = size / time; "
      "busbw = algbw x the collective's bus factor (docs/METHODOLOGY.md); #wrong = elements that differed from the "
      "expected result");
  std::set<std::pair<int, int>> runs;
  for (const auto& x : c.rows) runs.emplace(x.warmup, x.iters);
  if (runs.size() == 1)
    t.notes.push_back(
        fmt::format("{} warm-up and {} timed iterations per size", runs.begin()->first, runs.begin()->second));
  long long wrong = 0;
  for (const auto& x : c.rows)
    if (x.wrong > 0) wrong += x.wrong;
  if (wrong > 0) t.notes.push_back(fmt::format("WRONG RESULTS: {} elements differed from the expected values", wrong));
  return t;
}

// The result files and their labels: the appendix every row's "file" column points into.
Table files_tab(const std::vector<nlohmann::json>& files) {
  const auto str = [](const char* key) {
    return [key](const nlohmann::json& f) { return Value(json_str_or(f, key, "")); };
  };
  const auto num = [](const char* key) {
    return [key](const nlohmann::json& f) -> Value {
      const auto v = json_num_opt(f, key);
      return v ? Value(static_cast<long long>(*v)) : Value();
    };
  };
  const std::vector<Col<nlohmann::json>> cols = {
      {{"label", "file", "", fmtcol::plain()}, str("label")},
      {{"name", "path", "", fmtcol::plain()}, str("name")},
      {{"kind", "kind", "", fmtcol::plain()}, str("kind")},
      {{"device", "device", "", fmtcol::plain()}, str("device")},
      {{"created_utc", "created", "", fmtcol::plain()}, str("created_utc")},
      {{"torch", "torch", "", fmtcol::plain()}, str("torch")},
      {{"cuda", "CUDA", "", fmtcol::plain()}, str("cuda")},
      {{"nccl", "NCCL", "", fmtcol::plain()}, str("nccl")},
      {{"driver", "driver", "", fmtcol::plain()}, str("driver")},
      {{"backend", "backend", "", fmtcol::plain()}, str("backend")},
      {{"world_size", "ranks", "", fmtcol::plain()}, num("world_size")},
      {{"hosts", "hosts", "", fmtcol::plain()}, num("hosts")},
      {{"rows", "rows", "", fmtcol::plain()}, num("rows")},
  };
  Table t = make_table("files", "Result files", {}, cols, files);
  t.notes.push_back("file: the label every row's \"file\" column uses for the launch its numbers come from (Definitions)");
  for (const auto& f : files)
    if (f.contains("repeats") && f["repeats"].is_array())
      for (const auto& x : f["repeats"])
        t.notes.push_back(fmt::format("{} repeats {} ({}): counted once", json_str_or(f, "label", "?"),
                                      json_str_or(x, "of", "?"), json_str_or(x, "why", "?")));
  return t;
}

// The command line of each launch, one line per file.
Table commands_tab(const std::vector<nlohmann::json>& files) {
  const std::vector<Col<nlohmann::json>> cols = {
      {{"label", "file", "", fmtcol::plain()},
       [](const nlohmann::json& f) { return Value(json_str_or(f, "label", "")); }},
      {{"argv", "command", "", fmtcol::plain()},
       [](const nlohmann::json& f) {
         std::string cmd;
         if (f.contains("argv") && f["argv"].is_array())
           for (const auto& a : f["argv"])
             if (a.is_string()) cmd += (cmd.empty() ? "" : " ") + a.get<std::string>();
         return Value(cmd.empty() ? std::string("(not recorded)") : cmd);
       }},
      {{"cpu_model", "CPU", "", fmtcol::plain()},
       [](const nlohmann::json& f) { return Value(json_str_or(f, "cpu_model", "")); }},
  };
  Table t = make_table("commands", "What ran: the command and CPU of each launch", {}, cols, files);
  t.text_line = [](const std::vector<std::string>& c) { return fmt::format("{}: {} (CPU: {})", c[0], c[1], c[2]); };
  return t;
}

// Every node of each launch (environment.nodes, schema 1.6), one line per file: the first node's
// environment and the fields in which the nodes differ (node_differences), so thousands of
// alike nodes take one line and a node that differs is named.
Table nodes_tab(const std::vector<nlohmann::json>& files) {
  std::vector<const nlohmann::json*> with;
  for (const auto& f : files)
    if (f.contains("nodes") && f["nodes"].is_array() && !f["nodes"].empty()) with.push_back(&f);
  const auto text = [](const nlohmann::json& n, const char* k) {
    return n.contains(k) ? (n[k].is_string() ? n[k].get<std::string>() : n[k].dump()) : std::string("?");
  };
  const std::vector<Col<const nlohmann::json*>> cols = {
      {{"label", "file", "", fmtcol::plain()},
       [](const nlohmann::json* f) { return Value(json_str_or(*f, "label", "")); }},
      {{"hosts", "nodes", "", fmtcol::plain()},
       [](const nlohmann::json* f) { return Value(static_cast<long long>((*f)["nodes"].size())); }},
      {{"node", "first node", "", fmtcol::plain()},
       [text](const nlohmann::json* f) {
         const auto& n = (*f)["nodes"][0];
         size_t gpus = n.contains("gpus") && n["gpus"].is_array() ? n["gpus"].size() : 0;
         std::string gpu_names;
         if (gpus > 0 && n["gpus"][0].is_object()) gpu_names = " x " + json_str_or(n["gpus"][0], "name", "?");
         return Value(fmt::format("{}: {} ({} CPUs), {} GPU{}{}, driver {}, kernel {}, torch {}, CUDA {}, NCCL {}",
                                  text(n, "host"), text(n, "cpu_model"), text(n, "cpus"), gpus, gpus == 1 ? "" : "s",
                                  gpu_names, text(n, "driver"), text(n, "kernel"), text(n, "torch"), text(n, "cuda"),
                                  text(n, "nccl")));
       }},
      {{"differences", "the nodes differ in", "", fmtcol::plain()},
       [](const nlohmann::json* f) {
         const auto lines = node_difference_lines(node_differences((*f)["nodes"]));
         return Value(lines.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(lines, "; ")));
       }},
  };
  Table t = make_table("nodes", "The nodes of each launch", {}, cols, with);
  t.text_line = [](const std::vector<std::string>& c) {
    return fmt::format("{}: {} node{}; {}; the nodes differ in: {}", c[0], c[1], c[1] == "1" ? "" : "s", c[2], c[3]);
  };
  t.notes.push_back(
      "the first node's environment in full; the fields compared across nodes (driver, GPU model and count, "
      "topology, CUDA, NCCL, cuDNN, torch, kernel, CPU, environment variables) name the hosts that differ "
      "(`ddpbench env` prints one node in full)");
  return t;
}

// "Scope", "Targets", "resnet50", "Data quality", "Not measured": the topic a headline line opens with.
std::string headline_topic(const std::string& line) {
  const size_t colon = line.find(": ");
  return colon == std::string::npos ? "" : line.substr(0, colon);
}

Table headline_table(const Headline& h) {
  Table t;
  t.kind = "headline";
  t.title = "Headline";
  t.columns = {{"topic", "topic", "", fmtcol::plain()}, {"line", "headline", "", fmtcol::plain()}};
  for (const auto& line : headline_lines(h)) t.rows.push_back({headline_topic(line), line});
  t.text_line = [](const std::vector<std::string>& c) { return "- " + c[1]; };
  return t;
}

// The executive summary: the headline, targets with their verdicts, findings, recommendations.
std::vector<Table> summary_tabs(const Report& r) {
  std::vector<Table> out;
  const ExecutiveSummary& s = r.summary;
  if (Table h = headline_table(s.headline); !h.rows.empty()) out.push_back(std::move(h));
  if (!s.checks.empty() || !s.notes.empty()) {
    const auto count = [](int n, const std::string& unit) {
      return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s");
    };
    const std::vector<Col<SummaryCheck>> cols = {
        {{"status", "status", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.status); }},
        {{"metric", "target", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.metric); }},
        {{"required", "required", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.target); }},
        {{"measured", "measured", "", fmtcol::plain()},
         [](const SummaryCheck& c) { return c.measured.empty() ? Value() : Value(c.measured); }},
        // "16 GPUs", "4 ranks" on CPUs, "2 ranks on 1 GPU" where ranks shared a GPU.
        {{"size", "on", "", fmtcol::plain()},
         [count](const SummaryCheck& c) {
           if (c.gpus <= 0 || c.unit == "rank") return Value(count(c.ranks, "rank"));
           if (c.gpus == c.ranks) return Value(count(c.gpus, c.unit));
           return Value(count(c.ranks, "rank") + " on " + count(c.gpus, c.unit));
         }},
        {{"configuration", "configuration", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.what); }},
        {{"from", "from", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.from); }},
        {{"gpus", "GPUs", "", fmtcol::plain(), false},
         [](const SummaryCheck& c) { return c.gpus > 0 ? Value(static_cast<long long>(c.gpus)) : Value(); }},
        {{"ranks", "ranks", "", fmtcol::plain(), false},
         [](const SummaryCheck& c) { return Value(static_cast<long long>(c.ranks)); }},
        {{"void_warning", "voided by", "", fmtcol::plain()},
         [](const SummaryCheck& c) { return c.void_warning.empty() ? Value() : Value(c.void_warning); }},
    };
    Table t = make_table("summary", "Targets", {}, cols, s.checks);
    // status, target, required, measured, on, configuration, from, (GPUs, ranks: not in text), voided by
    t.text_line = [](const std::vector<std::string>& c) {
      std::string line =
          fmt::format("{:<6} {} {} (required {}) on {}: {} [{}]", c[0], c[1], c[3], c[2], c[4], c[5], c[6]);
      if (c.size() > 7 && c.back() != "n/a") line += " voided by " + c.back();
      return line;
    };
    t.notes = s.notes;
    out.push_back(std::move(t));
  }
  if (!r.findings.empty()) {
    Table f;
    f.kind = "findings";
    f.title = "Findings";
    f.columns = {{"finding", "finding", "", fmtcol::plain()}};
    for (const auto& h : r.findings) f.rows.push_back({h});
    f.text_line = [](const std::vector<std::string>& c) { return "- " + c[0]; };
    out.push_back(std::move(f));
  }
  if (!s.recommendations.empty()) {
    const std::vector<Col<Recommendation>> cols = {
        {{"topic", "topic", "", fmtcol::plain()}, [](const Recommendation& x) { return Value(x.topic); }},
        {{"recommendation", "recommendation", "", fmtcol::plain()},
         [](const Recommendation& x) { return Value(x.text); }},
        {{"from", "from", "", fmtcol::plain()}, [](const Recommendation& x) { return Value(x.from); }},
    };
    Table t = make_table("recommendations", "Recommendations", {}, cols, s.recommendations);
    t.text_line = [](const std::vector<std::string>& c) { return fmt::format("- {}: {} [{}]", c[0], c[1], c[2]); };
    t.notes.push_back(
        "Each recommendation comes from a rule of docs/METHODOLOGY.md \"Executive summary and recommendations\"; "
        "\"from\" names the table and the launches (file labels, listed in the appendix) its numbers come from");
    out.push_back(std::move(t));
  }
  return out;
}

// The terms the report's tables use, each defined once (the tables point here): only those
// that some table of this report shows.
Table definitions_tab(const Report& r) {
  std::vector<std::pair<std::string, std::string>> d;
  const bool weak = !r.weak.empty(), strong = !r.strong.empty();
  bool breakdown = false, shared = false, several = false, repeats = !r.repeats.empty();
  std::vector<bool> metric_shown(row_metrics().size(), false);
  const auto facts = [&](const RowFacts& f, const RowLaunch& l, bool sh, bool bd) {
    for (size_t i = 0; i < metric_shown.size(); ++i)
      metric_shown[i] = metric_shown[i] || (row_metrics()[i].used_in(kInReportTables) && f.metric_at(i).has_value());
    several = several || l.launches > 1;
    shared = shared || sh;
    breakdown = breakdown || bd;
  };
  for (const auto& w : r.weak)
    for (const auto& x : w.rows) facts(x.facts, x.launch, x.shared_gpu, x.exposed_comm.has_value());
  for (const auto& t : r.strong)
    for (const auto& x : t.rows) facts(x.facts, x.launch, x.shared_gpu, x.exposed_comm.has_value());
  const std::string u = [&] {
    for (const auto& w : r.weak)
      if (unit_word(w.key) == "GPU") return std::string("GPU");
    for (const auto& t : r.strong)
      if (unit_word(t.key) == "GPU") return std::string("GPU");
    return std::string(weak || strong ? "rank" : "GPU");
  }();
  const bool gpu = u == "GPU";
  if (weak || strong) {
    d.push_back({"per-" + u + " ex/s, aggregate ex/s",
                 "examples of one optimizer step of a rank (batch per rank x grad accum) x ranks / the p50 step "
                 "time: aggregate for the whole group, per " +
                     u + (gpu ? " divided by the distinct GPUs of the row's ranks (ranks sharing a GPU count once)"
                              : " divided by the ranks")});
    d.push_back({"p50, p5, p95 s/iter", "percentiles of every rank's measured step times pooled (numpy's linear "
                                        "interpolation, as PyTorch's benchmark.py)"});
    d.push_back({"DDP overhead vs no-DDP",
                 "1 - per-" + u + " ex/s / the no-DDP row's ex/s, both at p50: every cost DDP adds to a step, "
                 "communication included; with one rank per " + u + " and as many examples per step this is "
                 "(t_DDP - t_noDDP) / t_DDP" +
                     std::string(gpu ? ", and where ranks shared a GPU it compares what the GPU delivered" : "")});
  }
  if (weak)
    d.push_back({"efficiency (weak scaling)",
                 "per-" + u + " ex/s / per-" + u + " ex/s of the table's baseline row (the 1-" + u +
                     " DDP row, else the no-DDP row, else the smallest group, named under each table)"});
  if (strong)
    d.push_back({"speedup, efficiency (strong scaling)",
                 "speedup = t(first row) / t(N) x the first row's " + u + "s, at p50 per global step; efficiency = "
                 "speedup / N " + u + "s"});
  if (breakdown)
    d.push_back({"exposed comm, other DDP overhead",
                 std::string(find_row_metric("exposed_comm")->definition) +
                     "; other DDP overhead = DDP overhead vs no-DDP - exposed comm (bucket copies, buffer broadcast, "
                     "Reducer work)"});
  else if (weak || strong)
    d.push_back({"exposed comm, other DDP overhead",
                 "not shown: they need the per-step breakdown (ddpbench run --breakdown; result files of schema 1.5 "
                 "and later)"});
  // MFU, with the peaks in use: rows of different peaks are not ranked by MFU.
  std::vector<std::pair<MfuPeak, std::vector<std::string>>> peaks;
  for (const auto& w : r.weak)
    for (const auto& x : w.rows) {
      if (!x.mfu) continue;
      auto it = std::find_if(peaks.begin(), peaks.end(), [&](const auto& p) { return p.first.same_as(x.mfu_peak); });
      if (it == peaks.end()) it = peaks.insert(peaks.end(), {x.mfu_peak, {}});
      if (std::find(it->second.begin(), it->second.end(), x.launch.file) == it->second.end())
        it->second.push_back(x.launch.file);
    }
  if (!peaks.empty()) {
    std::vector<std::string> named;
    for (const auto& [p, files] : peaks)
      named.push_back(fmt::format("{} ({}: {})", p.short_label().empty() ? "unknown" : p.short_label(),
                                  p.basis.empty() ? "not recorded" : p.basis, fmt::join(files, ", ")));
    d.push_back({"TFLOP/s/" + u + ", MFU",
                 fmt::format("achieved training TFLOP/s = 6 x forward multiply-adds per example x per-{} ex/s / "
                             "10^12; MFU = that / the dense peak of the fastest unit the row's math allows, named "
                             "per row in \"MFU peak\". Peaks here: {}.{}",
                             u, fmt::join(named, "; "),
                             peaks.size() > 1 ? " MFUs of different peaks are not comparable and are never ranked: "
                                                "compare those rows by ex/s"
                                              : "")});
  }
  for (size_t i = 0; i < metric_shown.size(); ++i)
    if (metric_shown[i]) {
      // "peak mem = the largest ..." reads "the largest ..." under its term.
      const std::string term = row_metrics()[i].header, def = row_metrics()[i].definition;
      d.push_back({term, def.rfind(term + " = ", 0) == 0 ? def.substr(term.size() + 3) : def});
    }
  if (std::any_of(r.weak.begin(), r.weak.end(), [](const WeakTable& w) { return !w.breakdown.empty(); }) ||
      std::any_of(r.strong.begin(), r.strong.end(), [](const StrongTable& x) { return !x.breakdown.empty(); }))
    d.push_back({"step breakdown (ms)",
                 "mean over ranks of each rank's mean time per step; forward + bwd compute + exposed comm + optimizer "
                 "+ other = step; exposed comm = bwd comm - overlap; allreduce MiB/step = gradient bytes per step / "
                 "2^20; eff. busbw = those bytes / bwd comm time x 2(n-1)/n, as run recorded it"});
  if (!r.impact.empty())
    d.push_back({"optimization impact",
                 "measured rows only; baseline = the run with every DDP knob at PyTorch's default (bucket cap 25 MiB, "
                 "first bucket 1 MiB, buffer broadcast, no gradient as bucket view, no static graph, no find unused "
                 "parameters, no comm hook, grad accum 1); speedup = aggregate ex/s / the baseline's (= t_base / t at "
                 "p50 when both accumulate as many micro-steps); exposed comm = breakdown mean over ranks per "
                 "optimizer step; change = exposed comm - the baseline's, and as a fraction of the baseline's"});
  if (!r.strategy.empty()) {
    const std::string su = unit_word(r.strategy.front().key), sus = su + "s";
    d.push_back({"strategy comparison",
                 fmt::format("measured rows only; throughput = {} x batch per {} x grad accum / step p50; efficiency "
                             "= throughput / ({} x the throughput of the same strategy, checkpointing and precision "
                             "on 1 {}, else of the no-DDP row of that precision and batch); exposed comm = breakdown "
                             "mean over ranks / step",
                             sus, su, sus, su)});
    d.push_back({"peak memory, model state",
                 fmt::format("max over {} of each {}'s peak over the measured steps: on GPUs the CUDA caching "
                             "allocator's allocated and reserved bytes, on CPUs the process's peak RSS (VmHWM), which "
                             "also counts libraries and allocator caches; model state = parameters + gradients + "
                             "optimizer state that {} 0 holds between steps, counted from the tensors",
                             sus, su, su)});
  }
  if (!r.memory.empty()) {
    d.push_back({"memory optimization",
                 "each technique against the fp32 DDP row (no checkpointing) of the same model, size and batch in "
                 "these files; saved = the fp32 DDP row's peak - the technique's, and as a fraction of fp32 DDP's "
                 "(negative: it costs memory); time paid = step p50 / fp32 DDP's step p50 - 1 (negative: faster)"});
    if (std::any_of(r.memory.begin(), r.memory.end(), [](const MemoryTable& m) { return m.peak_kind == "peak RSS"; }))
      d.push_back({"peak RSS", "on CPUs the peak is the process's resident set (VmHWM): an upper bound on the "
                               "model's memory that also counts libraries and freed memory the allocator keeps, so "
                               "savings look smaller than on a GPU"});
  }
  if (!r.inference.empty()) {
    const std::string iu = unit_word(r.inference.front().key);
    d.push_back({"inference", fmt::format("every {} of a group runs forward passes of its own batch at the same time "
                                          "(no_grad, eval mode, autocast for bf16/fp16); throughput = {}s x batch / "
                                          "p50; latency = the per-batch forward time, pooled over the {}s",
                                          iu, iu, iu)});
  }
  if (!r.cost.empty())
    d.push_back({"USD per 1M samples, time h, cost USD",
                 "at the mean step time (the statistic of epoch time, so epochs x epoch time is the time priced): "
                 "USD per 1M samples = price x " + u + "s x mean s/step / examples per step x 10^6 / 3600; time h = "
                 "epochs x steps per epoch (ceil(dataset size / examples per step)) x mean s/step / 3600; cost = "
                 "time h x " + u + "s x price" + (gpu ? "; rows whose ranks shared a GPU are not priced" : "")});
  if (shared)
    d.push_back({"ranks sharing a GPU",
                 "ranks reporting the same GPU UUID (else host and bus id) count as one GPU: the row measures "
                 "sharing, not scaling, so it has no efficiency or speedup, is not plotted as scaling and is not "
                 "priced; its DDP overhead is by throughput"});
  if (d.empty() && r.impact.empty() && r.strategy.empty() && r.memory.empty() && r.inference.empty())
    return Table{};  // no table of rows to define terms for (collectives, pairs, find-max-bs files)
  if (!r.files.empty())
    d.push_back({"file, launches",
                 std::string("file: the label of the result file (one launch) every number of a row comes from, "
                             "listed in the appendix.") +
                     (several || repeats
                          ? " Where several launches measured one configuration the row is the launch with the "
                            "median p50, of an even count the slower middle one (the conservative choice), never a "
                            "mix; spread = (slowest - fastest p50) / the chosen launch's p50. A launch given twice "
                            "(the same content, or the same job id and start time) counts once."
                          : "")});
  Table t;
  t.kind = "definitions";
  t.title = "Definitions";
  t.columns = {{"term", "term", "", fmtcol::plain()}, {"definition", "definition", "", fmtcol::plain()}};
  for (auto& [term, def] : d) t.rows.push_back({term, def});
  t.text_line = [](const std::vector<std::string>& c) { return fmt::format("{}: {}", c[0], c[1]); };
  t.notes.push_back("every formula with its source: docs/METHODOLOGY.md");
  return t;
}

std::string report_section(const std::string& kind) {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> kSections = {
      {{"headline", "summary", "findings", "recommendations"}, "Executive summary"},
      {{"definitions"}, "Definitions"},
      {{"weak", "strong"}, "Throughput scaling"},
      {{"breakdown"}, "Where the time goes"},
      {{"impact"}, "Optimization impact"},
      {{"strategy", "memory"}, "Strategies and memory"},
      {{"inference"}, "Inference"},
      {{"comm", "pairs"}, "Communication"},
      {{"telemetry", "stragglers", "rank_telemetry", "burn_in"}, "Hardware utilization and stragglers"},
      {{"max_batch"}, "Largest batch"},
      {{"comparison"}, "Comparison across devices or files"},
      {{"cost"}, "Cost"},
      {{"files", "commands", "nodes"}, "Appendix: what ran"},
  };
  for (const auto& [kinds, name] : kSections)
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) return name;
  return "Time to accuracy";  // the convergence tables (core/render/report_convergence)
}


std::vector<Table> report_tables(const Report& r) {
  std::vector<Table> out = summary_tabs(r);
  const auto scaling_what = [](const ConfigKey& k, const std::string& batch) {
    return fmt::format("{}, {}, {}, {} scaling, {}, {}x{} images", k.model, k.setup_label(), k.device, k.scaling, batch,
                       k.image_size, k.image_size);
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
                      {"tables", nlohmann::json::array()},
                      {"files", r.files},
                      {"findings", r.findings}};
  for (const auto& t : tables) j["tables"].push_back(table_json(t));
  return j.dump(2) + "\n";
}

}  // namespace ddpbench
