#include "core/analysis/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "core/analysis/diff.hpp"
#include "core/analysis/report.hpp"
#include "core/analysis/report_detail.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/row_metrics.hpp"
#include "core/stats/straggler.hpp"
#include "core/util/table.hpp"

namespace ddpbench {
namespace {

using report_detail::num_at;
using report_detail::straggler_what;

std::string pct(double f) { return fmt::format("{:.1f}%", 100.0 * f); }

// The noise floor a comparison of two rows must beat: kMinKnobGain, each row's launch-to-launch
// spread where several launches measured it, else the spread measured on the device type
// (measured_launch_spread, the floor `diff` uses for one launch per side).
double noise_floor(const ConfigKey& k, std::initializer_list<const RowLaunch*> rows) {
  double f = kMinKnobGain;
  for (const RowLaunch* l : rows)
    f = std::max(f, l->launches > 1 ? l->spread.value_or(0.0) : measured_launch_spread(k.device).spread);
  return f;
}

// "resnet50, fp32 (cuDNN TF32), batch 32 per GPU, 224 px, NVIDIA H100 80GB HBM3".
std::string what_of(const ConfigKey& k, long long batch, bool global = false) {
  return fmt::format("{}, {}, {} {}{}, {} px, {}", k.model, k.setup_label(), global ? "global batch" : "batch", batch,
                     global ? "" : " per " + unit_word(k), k.image_size, k.device);
}

// "F2", or "F2 vs F1" when the row's number also rests on another launch's row.
std::string launches(const std::string& row, const std::string& base) {
  return base.empty() || base == row ? row : row + " vs " + base;
}

// The first warning of `rows` that voids `metric` ("" when none does).
std::string voided(const std::vector<const WeakRow*>& rows, const std::string& metric) {
  for (const WeakRow* r : rows)
    if (const RowWarning* w = undermining_warning(r->facts.warnings, metric)) return w->code;
  return "";
}

// Whether a row's number `metric` can carry a recommendation: its self-check did not fail and
// no warning voids the number.
bool trusted(const RowFacts& f, const std::string& metric) {
  return f.self_check_passed != false && !undermining_warning(f.warnings, metric);
}

// Efficiency measures scaling only against the 1-rank DDP row or the no-DDP row; against the
// smallest group (weak_table's last resort) that group is 100% by definition.
bool real_baseline(const WeakTable& w) { return w.baseline_kind != WeakTable::Baseline::smallest_group; }

// The launches behind a row's efficiency: its own, and its baseline's (the first row's, or the
// file of the no-DDP row).
std::string efficiency_from(const WeakTable& w, const WeakRow& row) {
  return launches(row.launch.file,
                  w.baseline_kind == WeakTable::Baseline::no_ddp ? row.baseline_file : w.rows.front().launch.file);
}

// The rows whose warnings bear on a row's efficiency (the no-DDP baseline's are not in the table).
std::vector<const WeakRow*> efficiency_rows(const WeakTable& w, const WeakRow& row) {
  if (w.baseline_kind == WeakTable::Baseline::no_ddp) return {&row};
  return {&row, &w.rows.front()};
}

// PASS / FAIL / WARN (<code>) / FAIL (self-check failed) of one value against a bound.
std::string verdict(bool met, const std::string& warning, bool self_check_failed) {
  if (self_check_failed) return "FAIL (self-check failed)";
  if (!met) return "FAIL";
  return warning.empty() ? "PASS" : "WARN (" + warning + ")";
}

// The weak tables the summary reads: those with DDP's default knobs, and a variant only where
// its configuration has no table with the defaults.
std::vector<const WeakTable*> summary_tables(const Report& r) {
  std::vector<const WeakTable*> out;
  for (const auto& w : r.weak) {
    if (w.rows.empty()) continue;
    const bool variant = !w.key.knob_label().empty();
    const bool has_plain = std::any_of(r.weak.begin(), r.weak.end(), [&](const WeakTable& o) {
      return o.key.knob_label().empty() &&
             same_on(o.key, w.key.with_default_knobs(),
                     all_fields() & ~fields({ConfigField::world_size, ConfigField::global_batch}));
    });
    if (!variant || !has_plain) out.push_back(&w);
  }
  return out;
}

void scaling_targets(const Report& r, const SummaryTargets& t, ExecutiveSummary& s) {
  int one_device = 0;
  const auto tables = summary_tables(r);
  if (tables.empty() && t.pinned.empty()) return;  // no training rows (comm, pairs, find-max-bs files): no targets
  for (const WeakTable* wp : tables) {
    const WeakTable& w = *wp;
    const WeakRow& last = w.rows.back();  // rows are sorted by world size
    const std::string what = what_of(w.key, w.key.batch_per_rank);
    const bool bad = last.facts.self_check_passed == false;
    const std::string unit = unit_word(w.key);
    if (t.min_per_gpu_ex_s) {
      s.checks.push_back({what, last.devices, last.world_size, unit, "per-" + unit + " ex/s",
                          fmt::format(">= {:.1f}", *t.min_per_gpu_ex_s), fmt::format("{:.1f}", last.per_gpu_ex_s),
                          verdict(last.per_gpu_ex_s >= *t.min_per_gpu_ex_s, voided({&last}, "ex_per_s_per_gpu"), bad),
                          "weak scaling, " + last.launch.file});
    }
    if (last.devices <= 1) {
      ++one_device;
      continue;
    }
    if (real_baseline(w))
      s.checks.push_back({what, last.devices, last.world_size, unit, "weak-scaling efficiency",
                          ">= " + pct(t.min_efficiency), pct(last.efficiency),
                          verdict(last.efficiency >= t.min_efficiency,
                                  voided(efficiency_rows(w, last), "weak_scaling_efficiency"), bad),
                          "weak scaling, " + efficiency_from(w, last)});
    else
      s.checks.push_back({what, last.devices, last.world_size, unit, "weak-scaling efficiency",
                          ">= " + pct(t.min_efficiency), "", "not measured (no 1-GPU or no-DDP baseline)",
                          "weak scaling, " + last.launch.file});
    SummaryCheck comm{what,
                      last.devices,
                      last.world_size,
                      unit,
                      "exposed comm",
                      "< " + pct(t.max_exposed_comm),
                      "",
                      "",
                      "weak scaling, " + last.launch.file};
    if (last.exposed_comm) {
      comm.measured = pct(*last.exposed_comm);
      comm.status = verdict(*last.exposed_comm < t.max_exposed_comm, voided({&last}, "exposed_comm"), bad);
    } else {
      comm.status = "not measured (run --breakdown)";
    }
    s.checks.push_back(std::move(comm));
  }
  // "GPU", "rank" (CPU rows only), or both when the files mix them.
  std::string u;
  for (const WeakTable* w : tables) {
    const std::string x = unit_word(w->key);
    u = u.empty() || u == x ? x : "GPU (rank on CPUs)";
  }
  if (u.empty()) u = unit_word(ConfigKey{});
  s.notes.push_back(fmt::format(
      "Targets: weak-scaling efficiency >= {} and exposed communication < {} of the step at each weak-scaling "
      "table's largest {} count{}{} (defaults 85% and 15%: --target-efficiency, --target-comm, --target-ex-s, "
      "--targets FILE); PASS needs a row without a warning that voids the number (WARN otherwise)",
      pct(t.min_efficiency), pct(t.max_exposed_comm), u,
      t.min_per_gpu_ex_s ? fmt::format(", per-{} ex/s >= {:.1f}", u, *t.min_per_gpu_ex_s) : "",
      t.pinned_source.empty() ? "" : fmt::format("; the entries of {}", t.pinned_source)));
  if (tables.empty())
    s.notes.push_back("No weak-scaling DDP rows in these files: nothing is held to the scaling targets.");
  else if (one_device > 0)
    s.notes.push_back(
        fmt::format("{} of {} weak-scaling table{} measured one {} only: efficiency and communication "
                    "targets need two or more, so they are not evaluated there",
                    one_device, tables.size(), tables.size() == 1 ? "" : "s", u));
  if (tables.size() < r.weak.size())
    s.notes.push_back(
        fmt::format("{} weak-scaling table{} of DDP settings other than the defaults: held to no "
                    "target here, compared in the optimization-impact tables",
                    r.weak.size() - tables.size(), r.weak.size() - tables.size() == 1 ? "" : "s"));
}

void pinned_targets(const std::vector<NamedResult>& files, const SummaryTargets& t, ExecutiveSummary& s) {
  if (t.pinned.empty()) return;
  std::vector<bool> found(t.pinned.size(), false), applied(t.pinned.size(), false);
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const ResultFile& f = files[fi].file;
    if (f.kind != "run") continue;
    for (size_t e = 0; e < t.pinned.size(); ++e) {
      int skipped = 0;
      const auto rows = check_against(f, {t.pinned[e]}, skipped);
      if (rows.empty()) continue;  // an entry for another device
      applied[e] = true;
      const CheckRow& c = rows.front();
      if (!c.row) continue;
      found[e] = true;
      const std::string unit = c.ref.unit.empty() ? "" : " " + c.ref.unit;
      s.checks.push_back({what_of(*c.row, c.row->batch_per_rank), 0, c.row->world_size, unit_word(*c.row), c.ref.metric,
                          allowed_range_text(c) + unit, c.measured ? metric_text(c.ref.metric, *c.measured) + unit : "",
                          c.status, fmt::format("{} entry {}, {}", t.pinned_source, e, file_label(fi))});
    }
  }
  for (size_t e = 0; e < t.pinned.size(); ++e) {
    const ReferenceEntry& ref = t.pinned[e];
    if (found[e]) continue;
    s.checks.push_back({fmt::format("{}, {}, batch {} per rank, {} px, {}", ref.model, ref.setup.precision,
                                    ref.batch_per_rank, ref.image_size, ref.device),
                        0, ref.world_size, "GPU", ref.metric, "", "",
                        applied[e] ? "MISSING" : "MISSING (no file of its device)",
                        fmt::format("{} entry {}", t.pinned_source, e)});
  }
}

// World size: the largest GPU count whose efficiency meets the target.
void world_size_rule(const Report& r, const SummaryTargets& t, ExecutiveSummary& s) {
  for (const WeakTable* wp : summary_tables(r)) {
    const WeakTable& w = *wp;
    if (w.rows.back().devices <= 1) continue;
    const WeakRow& last = w.rows.back();
    if (!real_baseline(w) || !voided(efficiency_rows(w, last), "weak_scaling_efficiency").empty() ||
        last.facts.self_check_passed == false)
      continue;
    const std::string what = what_of(w.key, w.key.batch_per_rank);
    const std::string u = unit_word(w.key) + "s";
    if (last.efficiency >= t.min_efficiency) {
      s.recommendations.push_back(
          {"world size",
           fmt::format("{}: scaling holds to {} {}, the largest size measured: weak-scaling efficiency is {} there, "
                       "meeting the {} target.",
                       what, last.devices, u, pct(last.efficiency), pct(t.min_efficiency)),
           "weak scaling, " + efficiency_from(w, last)});
      continue;
    }
    const WeakRow* ok = nullptr;  // the largest size above one device that meets the target, trusted
    for (const auto& row : w.rows)
      if (row.devices > 1 && row.efficiency >= t.min_efficiency && trusted(row.facts, "weak_scaling_efficiency"))
        ok = &row;
    if (ok && ok->facts.self_check_passed != false)
      s.recommendations.push_back(
          {"world size",
           fmt::format("{}: run jobs on at most {} {}: efficiency is {} at {} but {} at {}, below the {} target.", what,
                       ok->devices, u, pct(ok->efficiency), ok->devices, pct(last.efficiency), last.devices,
                       pct(t.min_efficiency)),
           "weak scaling, " + (ok->launch.file == last.launch.file ? last.launch.file
                                                                   : ok->launch.file + " and " + last.launch.file)});
    else
      s.recommendations.push_back(
          {"world size",
           fmt::format("{}: no size above 1 {} meets the {} efficiency target ({} at {} {}); {}.", what,
                       unit_word(w.key), pct(t.min_efficiency), pct(last.efficiency), last.devices, u,
                       last.exposed_comm ? fmt::format("exposed communication is {} of that step (where the time "
                                                       "goes)",
                                                       pct(*last.exposed_comm))
                                         : "measure where the time goes (run --breakdown) before scaling out"),
           "weak scaling, " + efficiency_from(w, last)});
  }
}

// DDP setting: the fastest variant of an optimization-impact table, when it beats the defaults by
// more than kMinKnobGain and the launch-to-launch spread of both rows.
void knob_rule(const Report& r, ExecutiveSummary& s) {
  for (const auto& m : r.impact) {
    if (!m.has_baseline) continue;
    const ImpactRow* base = nullptr;
    const ImpactRow* best = nullptr;
    for (const auto& row : m.rows) {
      if (row.baseline) base = &row;
      else if (row.speedup && (!best || *row.speedup > *best->speedup)) best = &row;
    }
    if (!base || !best) continue;
    if (!trusted(base->facts, "ex_per_s_total") || !trusted(best->facts, "ex_per_s_total")) continue;
    const double noise = noise_floor(m.key, {&base->launch, &best->launch});
    const double gain = *best->speedup - 1;
    // Ranks, not GPUs: the impact table does not count devices.
    const std::string what = fmt::format("{} on {} ranks", what_of(m.key, m.key.batch_per_rank), m.key.world_size);
    const std::string from = "optimization impact, " + launches(best->launch.file, base->launch.file);
    if (gain > noise)
      s.recommendations.push_back(
          {"DDP setting",
           fmt::format("{}: set {}: {:.1f} against {:.1f} aggregate ex/s with DDP's defaults ({:+.1f}%, beyond the "
                       "{} noise floor).",
                       what, best->technique, best->aggregate_ex_s, base->aggregate_ex_s, 100 * gain, pct(noise)),
           from});
    else
      s.recommendations.push_back(
          {"DDP setting",
           fmt::format("{}: keep DDP's defaults: no setting measured was more than {} faster (best: {}, {:+.1f}%).",
                       what, pct(noise), best->technique, 100 * gain),
           from});
  }
}

// Setup: per strategy table and world size with two or more lines, the fastest setup (strategy,
// checkpointing, precision) against the slowest, when the gap beats the noise floor.
void setup_rule(const Report& r, ExecutiveSummary& s) {
  const auto name = [](const StrategyRow& x) {
    return fmt::format("{}{}, {}", x.strategy, x.activation_checkpointing ? " with activation checkpointing" : "",
                       x.precision);
  };
  for (const auto& m : r.strategy) {
    std::set<int> sizes;
    for (const auto& row : m.rows) sizes.insert(row.world_size);
    for (int n : sizes) {
      const StrategyRow *fast = nullptr, *slow = nullptr;
      int count = 0;
      for (const auto& row : m.rows) {
        if (row.world_size != n || !(row.aggregate_ex_s > 0) || !trusted(row.facts, "ex_per_s_total")) continue;
        ++count;
        if (!fast || row.aggregate_ex_s > fast->aggregate_ex_s) fast = &row;
        if (!slow || row.aggregate_ex_s < slow->aggregate_ex_s) slow = &row;
      }
      if (count < 2) continue;
      const double noise = noise_floor(m.key, {&fast->launch, &slow->launch});
      const double gain = fast->aggregate_ex_s / slow->aggregate_ex_s - 1;
      const std::string what = fmt::format(
          "{}{}, batch {} per {}, {} px, {} on {} {}{}", m.key.model, m.key.channels_last ? ", channels_last" : "",
          m.key.batch_per_rank, unit_word(m.key), m.key.image_size, m.key.device, n, "rank", n == 1 ? "" : "s");
      if (gain > noise)
        s.recommendations.push_back(
            {"setup",
             fmt::format("{}: the fastest setup measured is {}: {:.1f} aggregate ex/s, {:+.1f}% over {} ({:.1f} ex/s, "
                         "beyond the {} noise floor); its memory is in the strategy and memory tables.",
                         what, name(*fast), fast->aggregate_ex_s, 100 * gain, name(*slow), slow->aggregate_ex_s,
                         pct(noise)),
             "strategy comparison, " + launches(fast->launch.file, slow->launch.file)});
      else
        s.recommendations.push_back(
            {"setup",
             fmt::format("{}: the {} setups measured are within {} of each other ({} fastest at {:.1f} ex/s); choose "
                         "by memory.",
                         what, count, pct(noise), name(*fast), fast->aggregate_ex_s),
             "strategy comparison, " + launches(fast->launch.file, slow->launch.file)});
    }
  }
}

// Memory: the technique that saves the most peak memory per rank, and the step time it costs.
void memory_rule(const Report& r, ExecutiveSummary& s) {
  const auto bytes = fmtcol::bytes();
  for (const auto& m : r.memory) {
    std::vector<int> sizes;
    for (const auto& row : m.rows)
      if (std::find(sizes.begin(), sizes.end(), row.world_size) == sizes.end()) sizes.push_back(row.world_size);
    for (int n : sizes) {
      const MemoryRow* best = nullptr;
      for (const auto& row : m.rows)
        if (row.world_size == n && row.saved > 0 && (!best || row.saved > best->saved)) best = &row;
      const std::string what =
          fmt::format("{} on {} rank{}", what_of(m.key, m.key.batch_per_rank), n, n == 1 ? "" : "s");
      if (!best) {
        s.recommendations.push_back(
            {"memory", fmt::format("{}: no technique measured lowered the {} per rank.", what, m.peak_kind),
             "memory optimization"});
        continue;
      }
      s.recommendations.push_back(
          {"memory",
           fmt::format("{}: to fit a larger batch or model, use {}: it cuts the {} per rank by {} ({} to {}) for "
                       "{:+.1f}% step time.",
                       what, best->technique, m.peak_kind, pct(best->saved), bytes(Value(best->baseline_peak_bytes)),
                       bytes(Value(best->peak_bytes)), 100 * best->time_paid),
           "memory optimization, " + launches(best->launch.file, best->baseline_file)});
    }
  }
}

// Cost: the most cost-efficient size of each priced table with two or more GPU counts.
void cost_rule(const Report& r, ExecutiveSummary& s) {
  for (const auto& c : r.cost) {
    // Two or more GPU counts to choose between (ranks that shared one GPU are one count).
    std::set<int> sizes;
    for (const auto& row : c.rows) sizes.insert(row.world_size);
    if (sizes.size() < 2) continue;
    // The cheapest row (rows of one GPU count can differ when ranks shared a GPU).
    const auto best = std::min_element(c.rows.begin(), c.rows.end(), [](const CostRow& a, const CostRow& b) {
      return a.usd_per_million < b.usd_per_million;
    });
    const std::string u = unit_word(c.key);
    s.recommendations.push_back(
        {"cost",
         fmt::format("{}: {} {}{} is the most cost-efficient size measured: {:.4f} USD per 1M samples; {} epochs of "
                     "{} samples take {} and cost {:.2f} USD at {:.2f} USD per {}-hour.",
                     what_of(c.key, c.batch, c.key.scaling == "strong"), best->world_size, u,
                     best->world_size == 1 ? "" : "s", best->usd_per_million, c.epochs, with_thousands(c.dataset_size),
                     fmtcol::duration()(Value(best->hours * 3600)), best->usd, c.gpu_hour_usd, u),
         "cost, " + best->file});
  }
}

// Node: a named straggler's host, a slow node of `comm --pairs`.
void node_rule(const Report& r, ExecutiveSummary& s) {
  for (const auto& c : r.cluster) {
    for (const auto& e : c.stragglers) {
      if (!e.is_object() || !e.contains("ranks") || !e["ranks"].is_array() || e["ranks"].empty()) continue;
      const double thr = num_at(e, {"threshold"}).value_or(0.95);
      for (const auto& x : e["ranks"]) {
        const auto score = num_at(x, {"score"});
        if (!score || !x.contains("straggler") || !x["straggler"].is_boolean() || !x["straggler"].get<bool>()) continue;
        s.recommendations.push_back(
            {"node",
             fmt::format("Inspect {} before opening the cluster to users: it scored {:.3g}, below the {:g} "
                         "straggler threshold ({}).",
                         straggler_rank_words(x), *score, thr, straggler_what(e)),
             "stragglers, " + c.label});
      }
    }
    if (c.comm_pairs.contains("slow_nodes") && c.comm_pairs["slow_nodes"].is_array())
      for (const auto& n : c.comm_pairs["slow_nodes"])
        if (n.is_object() && n.contains("message") && n["message"].is_string())
          s.recommendations.push_back({"node",
                                       fmt::format("Inspect the node's links before opening the cluster to users: {}.",
                                                   n["message"].get<std::string>()),
                                       "pair bandwidth, " + c.label});
  }
}

}  // namespace

ExecutiveSummary executive_summary(const Report& r, const std::vector<NamedResult>& files, const SummaryTargets& t) {
  ExecutiveSummary s;
  scaling_targets(r, t, s);
  pinned_targets(files, t, s);
  world_size_rule(r, t, s);
  knob_rule(r, s);
  setup_rule(r, s);
  memory_rule(r, s);
  cost_rule(r, s);
  node_rule(r, s);
  return s;
}

}  // namespace ddpbench
