#include "core/analysis/summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/analysis/diff.hpp"
#include "core/analysis/report_analysis.hpp"
#include "core/analysis/report_detail.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/row_metrics.hpp"
#include "core/stats/straggler.hpp"
#include "core/util/errors.hpp"
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

// The first warning of `rows` that voids `metric` (nullptr when none does).
const RowWarning* voiding(const std::vector<const WeakRow*>& rows, const std::string& metric) {
  for (const WeakRow* r : rows)
    if (const RowWarning* w = undermining_warning(r->facts.warnings, metric)) return w;
  return nullptr;
}

// Its code ("" when none does).
std::string voided(const std::vector<const WeakRow*>& rows, const std::string& metric) {
  const RowWarning* w = voiding(rows, metric);
  return w ? w->code : "";
}

// The row a table's targets and world-size rule read: the largest size whose ranks did not
// share a GPU (a shared row measures sharing, not scaling); the last row when all did.
const WeakRow& largest_scaling_row(const WeakTable& w) {
  for (auto it = w.rows.rbegin(); it != w.rows.rend(); ++it)
    if (!it->shared_gpu) return *it;
  return w.rows.back();
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

// PASS / FAIL / VOID (<code>) / FAIL (self-check failed) of one value against a bound: a value a
// warning of its row voids is neither PASS nor FAIL, whichever side of the bound it fell.
std::string verdict(bool met, const std::string& warning, bool self_check_failed) {
  if (self_check_failed) return "FAIL (self-check failed)";
  if (!warning.empty()) return "VOID (" + warning + ")";
  return met ? "PASS" : "FAIL";
}

// "oversubscribed: 4 threads ... share 2 CPUs" of a voiding warning ("" for none).
std::string warning_words(const RowWarning* w) { return w ? w->code + ": " + w->message : ""; }

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
    const WeakRow& last = largest_scaling_row(w);  // rows are sorted by world size
    const std::string what = what_of(w.key, w.key.batch_per_rank);
    const bool bad = last.facts.self_check_passed == false;
    const std::string unit = unit_word(w.key);
    const AppliedTargets a = targets_for(t, w.key.model);
    if (a.min_per_gpu_ex_s) {
      const RowWarning* v = voiding({&last}, "ex_per_s_per_gpu");
      s.checks.push_back({what, last.devices, last.world_size, unit, "per-" + unit + " ex/s",
                          fmt::format(">= {:.1f}", *a.min_per_gpu_ex_s), fmt::format("{:.1f}", last.per_gpu_ex_s),
                          verdict(last.per_gpu_ex_s >= *a.min_per_gpu_ex_s, v ? v->code : "", bad),
                          "weak scaling, " + last.launch.file, bad ? "" : warning_words(v)});
    }
    if (last.devices <= 1) {
      ++one_device;
      continue;
    }
    if (real_baseline(w)) {
      const RowWarning* v = voiding(efficiency_rows(w, last), "weak_scaling_efficiency");
      s.checks.push_back({what, last.devices, last.world_size, unit, "weak-scaling efficiency",
                          ">= " + pct(a.min_efficiency), pct(last.efficiency),
                          verdict(last.efficiency >= a.min_efficiency, v ? v->code : "", bad),
                          "weak scaling, " + efficiency_from(w, last), bad ? "" : warning_words(v)});
    } else {
      s.checks.push_back({what, last.devices, last.world_size, unit, "weak-scaling efficiency",
                          ">= " + pct(a.min_efficiency), "", "not measured (no 1-GPU or no-DDP baseline)",
                          "weak scaling, " + last.launch.file, ""});
    }
    SummaryCheck comm{what,
                      last.devices,
                      last.world_size,
                      unit,
                      "exposed comm",
                      "< " + pct(a.max_exposed_comm),
                      "",
                      "",
                      "weak scaling, " + last.launch.file,
                      ""};
    if (last.exposed_comm) {
      const RowWarning* v = voiding({&last}, "exposed_comm");
      comm.measured = pct(*last.exposed_comm);
      comm.status = verdict(*last.exposed_comm < a.max_exposed_comm, v ? v->code : "", bad);
      if (!bad) comm.void_warning = warning_words(v);
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
      "--targets FILE); a number that a warning of its row voids is VOID, neither PASS nor FAIL",
      pct(t.min_efficiency), pct(t.max_exposed_comm), u,
      t.min_per_gpu_ex_s ? fmt::format(", per-{} ex/s >= {:.1f}", u, *t.min_per_gpu_ex_s) : "",
      t.pinned_source.empty() ? "" : fmt::format("; the entries of {}", t.pinned_source)));
  // The models held to their own targets (--target-for), with every value that applies to them.
  for (const auto& [model, own] : t.per_model) {
    std::string mu;  // the model's unit: "GPU", "rank", or both
    for (const WeakTable* w : tables)
      if (w->key.model == model) {
        const std::string x = unit_word(w->key);
        mu = mu.empty() || mu == x ? x : "GPU (rank on CPUs)";
      }
    if (mu.empty()) continue;  // no table of the model: the CLI warns about the name
    const AppliedTargets a = targets_for(t, model);
    s.notes.push_back(fmt::format(
        "Targets of {} (--target-for): weak-scaling efficiency >= {}{}, exposed communication < {}{}{}", model,
        pct(a.min_efficiency), own.min_efficiency ? "" : " (global)", pct(a.max_exposed_comm),
        own.max_exposed_comm ? "" : " (global)",
        a.min_per_gpu_ex_s
            ? fmt::format(", per-{} ex/s >= {:.1f}{}", mu, *a.min_per_gpu_ex_s, own.min_per_gpu_ex_s ? "" : " (global)")
            : ""));
  }
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
      // check's WARN (in range, voided) and a FAIL on a voided number are VOID here; a row the
      // run declared invalid stays FAIL.
      const bool void_ = !c.untrusted.empty() && c.invalid.empty() && c.measured.has_value();
      s.checks.push_back({what_of(*c.row, c.row->batch_per_rank), 0, c.row->world_size, unit_word(*c.row), c.ref.metric,
                          allowed_range_text(c) + unit, c.measured ? metric_text(c.ref.metric, *c.measured) + unit : "",
                          void_ ? "VOID (" + c.untrusted + ")" : c.status,
                          fmt::format("{} entry {}, {}", t.pinned_source, e, file_label(fi)),
                          void_ ? c.untrusted : ""});
    }
  }
  for (size_t e = 0; e < t.pinned.size(); ++e) {
    const ReferenceEntry& ref = t.pinned[e];
    if (found[e]) continue;
    s.checks.push_back({fmt::format("{}, {}, batch {} per rank, {} px, {}", ref.model, ref.setup.precision,
                                    ref.batch_per_rank, ref.image_size, ref.device),
                        0, ref.world_size, "GPU", ref.metric, "", "",
                        applied[e] ? "MISSING" : "MISSING (no file of its device)",
                        fmt::format("{} entry {}", t.pinned_source, e), ""});
  }
}

// World size: the largest GPU count whose efficiency meets the target.
void world_size_rule(const Report& r, const SummaryTargets& t, ExecutiveSummary& s) {
  for (const WeakTable* wp : summary_tables(r)) {
    const WeakTable& w = *wp;
    const WeakRow& last = largest_scaling_row(w);
    if (last.devices <= 1) continue;
    if (!real_baseline(w) || !voided(efficiency_rows(w, last), "weak_scaling_efficiency").empty() ||
        last.facts.self_check_passed == false)
      continue;
    const std::string what = what_of(w.key, w.key.batch_per_rank);
    const std::string u = unit_word(w.key) + "s";
    const double target = targets_for(t, w.key.model).min_efficiency;
    if (last.efficiency >= target) {
      s.recommendations.push_back(
          {"world size",
           fmt::format("{}: scaling holds to {} {}, the largest size measured: weak-scaling efficiency is {} there, "
                       "meeting the {} target.",
                       what, last.devices, u, pct(last.efficiency), pct(target)),
           "weak scaling, " + efficiency_from(w, last)});
      continue;
    }
    const WeakRow* ok = nullptr;  // the largest size above one device that meets the target, trusted
    for (const auto& row : w.rows)
      if (row.devices > 1 && !row.shared_gpu && row.world_size <= last.world_size && row.efficiency >= target &&
          trusted(row.facts, "weak_scaling_efficiency"))
        ok = &row;
    if (ok && ok->facts.self_check_passed != false)
      s.recommendations.push_back(
          {"world size",
           fmt::format("{}: run jobs on at most {} {}: efficiency is {} at {} but {} at {}, below the {} target.", what,
                       ok->devices, u, pct(ok->efficiency), ok->devices, pct(last.efficiency), last.devices,
                       pct(target)),
           "weak scaling, " + (ok->launch.file == last.launch.file ? last.launch.file
                                                                   : ok->launch.file + " and " + last.launch.file)});
    else
      s.recommendations.push_back(
          {"world size",
           fmt::format("{}: no size above 1 {} meets the {} efficiency target ({} at {} {}); {}.", what,
                       unit_word(w.key), pct(target), pct(last.efficiency), last.devices, u,
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

// ------------------------------------------------------------------ the headline

// "1 GPU", "4 ranks".
std::string count_of(int n, const std::string& unit) { return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s"); }

// The `ddpbench run` flags that reproduce a configuration's setup: model, precision (by the
// math that ran), channels_last, cuDNN benchmark, a non-default backend, batch per rank and a
// non-default image size (224 on GPUs, 64 on CPUs: run's defaults).
std::string run_flags(const ConfigKey& k, long long batch_per_rank) {
  const bool cpu = unit_word(k) == "rank";
  std::string f = "--model " + k.model;
  if (k.precision == "fp16" || k.precision == "bf16") f += " --precision " + k.precision;
  else if (k.math == "no-tf32") f += " --precision fp32-strict";
  else if (k.math == "tf32") f += " --precision tf32";
  if (k.channels_last) f += " --channels-last";
  if (k.cudnn_benchmark == "off") f += " --no-cudnn-benchmark";
  if (!k.backend.empty() && k.backend != (cpu ? "gloo" : "nccl")) f += " --backend " + k.backend;
  f += fmt::format(" --batch-size {}", batch_per_rank);
  if (k.image_size != (cpu ? 64 : 224)) f += fmt::format(" --image-size {}", k.image_size);
  return f;
}

// "ddpbench run FLAGS --nproc-per-node 8" on one node; "srun -N2 --ntasks-per-node 8
// --gpus-per-task 1 ddpbench run FLAGS" across nodes (docs/guide/cluster-validation.md, the launchers).
std::string launch_command(const std::string& sub, const std::string& flags, int ranks, int nodes, bool gpu) {
  if (nodes <= 1) return fmt::format("ddpbench {}{} --nproc-per-node {}", sub, flags, ranks);
  return fmt::format("srun -N{} --ntasks-per-node {}{} ddpbench {}{}", nodes, std::max(1, ranks / nodes),
                     gpu ? " --gpus-per-task 1" : "", sub, flags);
}

// "fp16, channels_last, batch 256 per GPU" of a weak table; "fp32, global batch 32" of a strong one.
std::string setup_words(const ConfigKey& k, long long batch, bool global) {
  return fmt::format("{}, {} {}{}", k.setup_label(), global ? "global batch" : "batch", batch,
                     global ? "" : " per " + unit_word(k));
}

// A row of a weak or strong table as the headline reads it.
struct ShownRow {
  const ConfigKey* key;
  std::string setup;  // setup_words
  int world_size, devices;
  bool shared;
  double per_gpu_ex_s;
  const RowLaunch* launch;
  const RowFacts* facts;
};

std::vector<ShownRow> shown_rows(const Report& r) {
  std::vector<ShownRow> out;
  for (const auto& w : r.weak)
    for (const auto& x : w.rows)
      out.push_back({&w.key, setup_words(w.key, w.key.batch_per_rank, false), x.world_size, x.devices, x.shared_gpu,
                     x.per_gpu_ex_s, &x.launch, &x.facts});
  for (const auto& t : r.strong)
    for (const auto& x : t.rows)
      out.push_back({&t.key, setup_words(t.key, t.global_batch, true), x.world_size, x.devices, x.shared_gpu,
                     x.aggregate_ex_s / x.devices, &x.launch, &x.facts});
  return out;
}

Headline build_headline(const Report& r, const std::vector<NamedResult>& files, const ExecutiveSummary& s) {
  Headline h;
  // Scope: the files (a repeat counts once), the largest group, devices, versions and dates.
  h.files = static_cast<int>(r.files.size());
  h.launches = h.files - static_cast<int>(r.repeated_files.size());
  const std::vector<ShownRow> rows = shown_rows(r);
  for (size_t i = 0; i < files.size() && i < r.files.size(); ++i) {  // files every row of which repeats another's
    const std::string label = file_label(i);
    if (std::find(r.repeated_files.begin(), r.repeated_files.end(), label) != r.repeated_files.end()) continue;
    const bool repeats = std::any_of(r.repeats.begin(), r.repeats.end(), [&](const RepeatedLaunch& x) {
      return x.file == label;
    });
    if (!repeats) continue;
    bool own = false;  // a row of its own in some table
    for (const auto& x : rows)
      own = own || std::find(x.launch->all.begin(), x.launch->all.end(), label) != x.launch->all.end();
    if (!own) --h.launches;
  }
  const auto add = [](std::vector<std::string>& v, const std::string& x) {
    if (!x.empty() && x != "none" && std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  bool all_cpu = true;
  for (const auto& f : r.files) {
    if (std::find(r.repeated_files.begin(), r.repeated_files.end(), f.value("label", "")) != r.repeated_files.end())
      continue;
    const std::string dev = f.value("device", "");
    add(h.devices, dev);
    all_cpu = all_cpu && dev.rfind("CPU", 0) == 0;
    add(h.torch, f.value("torch", ""));
    add(h.cuda, f.value("cuda", ""));
    add(h.nccl, f.value("nccl", ""));
    add(h.backends, f.value("backend", ""));
    const std::string day = f.value("created_utc", "").substr(0, 10);
    if (day.size() == 10) {
      if (h.first_date.empty() || day < h.first_date) h.first_date = day;
      if (h.last_date.empty() || day > h.last_date) h.last_date = day;
    }
    h.ranks = std::max<int>(h.ranks, static_cast<int>(f.value("world_size", 0LL)));
    h.nodes = std::max<int>(h.nodes, static_cast<int>(f.value("hosts", 0ULL)));
  }
  h.unit = all_cpu && !h.devices.empty() ? "rank" : "GPU";
  for (const auto& x : rows) h.gpus = std::max(h.gpus, x.devices);
  for (const auto& w : r.weak)
    for (const auto& x : w.rows) h.nodes = std::max(h.nodes, x.nodes);
  for (const auto& t : r.strong)
    for (const auto& x : t.rows) h.nodes = std::max(h.nodes, x.nodes);
  if (h.gpus == 0) h.gpus = h.ranks;

  // Verdicts: every check, and the two scaling targets of each table measured on one device.
  std::map<std::string, int> not_evaluated;  // reason -> count, in first-seen order below
  std::vector<std::string> order;
  const auto note_reason = [&](const std::string& why, int n) {
    if (!not_evaluated.count(why)) order.push_back(why);
    not_evaluated[why] += n;
  };
  for (const auto& c : s.checks) {
    const std::string v = verdict_class(c.status);
    if (v == "PASS") ++h.pass;
    else if (v == "FAIL") ++h.fail;
    else if (v == "VOID") {
      ++h.void_count;
      const size_t colon = c.void_warning.find(':');
      h.void_reasons.push_back(fmt::format("{} {} on {}: {}", c.metric, c.measured,
                                           c.unit == "rank" || c.gpus <= 0 ? count_of(c.ranks, "rank")
                                                                           : count_of(c.gpus, c.unit),
                                           c.void_warning.substr(0, colon)));
    } else {
      ++h.not_evaluated;
      note_reason(c.metric + " " + c.status, 1);
    }
  }
  int one_device = 0;
  for (const WeakTable* w : summary_tables(r))
    if (largest_scaling_row(*w).devices <= 1) ++one_device;
  if (one_device > 0) {
    h.not_evaluated += 2 * one_device;
    h.not_evaluated_reasons.push_back(fmt::format("{} ran on 1 {} only: efficiency and exposed comm need 2 or more",
                                                  count_of(one_device, "table"), h.unit));
  }
  for (const auto& why : order)
    h.not_evaluated_reasons.push_back(not_evaluated[why] > 1 ? fmt::format("{} in {} tables", why, not_evaluated[why])
                                                             : why);

  // One line per model, in the order of the tables.
  std::vector<std::string> models;
  for (const auto& x : rows)
    if (std::find(models.begin(), models.end(), x.key->model) == models.end()) models.push_back(x.key->model);
  std::map<std::string, const ShownRow*> best_row;
  for (const auto& m : models) {
    HeadlineModel hm;
    hm.model = m;
    const ShownRow* best = nullptr;
    const auto clean = [](const ShownRow& x) {
      return x.facts->self_check_passed != false && !undermining_warning(x.facts->warnings, "ex_per_s_per_gpu");
    };
    for (const auto& x : rows) {
      if (x.key->model != m || x.shared) continue;
      if (!best || (clean(x) && !clean(*best)) ||
          (clean(x) == clean(*best) && x.per_gpu_ex_s > best->per_gpu_ex_s))
        best = &x;
    }
    if (best) {
      hm.unit = unit_word(*best->key);
      hm.best_per_gpu_ex_s = best->per_gpu_ex_s;
      hm.best_setup = best->setup;
      hm.best_file = best->launch->file;
      hm.best_gpus = best->devices;
      best_row[m] = best;
    }
    // Efficiency at the largest size of the model's target tables.
    const WeakTable* et = nullptr;
    const WeakRow* er = nullptr;
    for (const WeakTable* w : summary_tables(r)) {
      if (w->key.model != m || !real_baseline(*w)) continue;
      const WeakRow& last = largest_scaling_row(*w);
      if (last.devices <= 1) continue;
      const bool v = !voided(efficiency_rows(*w, last), "weak_scaling_efficiency").empty();
      const bool ev = er && !voided(efficiency_rows(*et, *er), "weak_scaling_efficiency").empty();
      if (!er || last.devices > er->devices || (last.devices == er->devices && ((ev && !v) || (ev == v && last.efficiency > er->efficiency)))) {
        et = w;
        er = &last;
      }
    }
    if (er) {
      hm.efficiency = er->efficiency;
      hm.efficiency_gpus = er->devices;
      hm.efficiency_void = voided(efficiency_rows(*et, *er), "weak_scaling_efficiency");
      hm.efficiency_file = efficiency_from(*et, *er);
      hm.efficiency_device = et->key.device;
      hm.exposed_comm = er->exposed_comm;
      if (!hm.efficiency_void.empty())
        for (const auto& x : et->rows)
          if (x.devices > 1 && !x.shared_gpu && x.world_size < er->world_size &&
              voided(efficiency_rows(*et, x), "weak_scaling_efficiency").empty()) {
            hm.trusted_efficiency = x.efficiency;
            hm.trusted_gpus = x.devices;
          }
    }
    for (const auto& c : r.cost)
      if (c.key.model == m)
        for (const auto& x : c.rows)
          if (!hm.usd_per_million || x.usd_per_million < *hm.usd_per_million) {
            hm.usd_per_million = x.usd_per_million;
            hm.usd_gpus = x.world_size;
            hm.usd_file = x.file;
          }
    h.models.push_back(std::move(hm));
  }
  if (h.devices.size() > 1)  // several device types: each number names its own
    for (size_t i = 0; i < h.models.size(); ++i) {
      HeadlineModel& hm = h.models[i];
      if (best_row.count(hm.model)) hm.best_setup += ", " + best_row[hm.model]->key->device;
      if (!hm.efficiency_device.empty()) hm.efficiency_file = hm.efficiency_device + ", " + hm.efficiency_file;
    }

  // Data quality of the rows shown.
  double worst_cv = 0;
  std::vector<std::string> capped, voided_rows, shared_rows;
  for (const auto& x : rows) {
    ++h.rows;
    const auto& warnings = x.facts->warnings;
    if (std::any_of(warnings.begin(), warnings.end(), [](const RowWarning& w) { return w.code == "noisy"; })) {
      ++h.noisy;
      if (h.worst_noisy.empty() || x.facts->cv > worst_cv) {
        worst_cv = x.facts->cv;
        h.worst_noisy = x.facts->cv > 0
                            ? fmt::format("{} {}, cv {:.1f}%", x.key->model, x.launch->file, 100 * x.facts->cv)
                            : fmt::format("{} {}", x.key->model, x.launch->file);
      }
    }
    const Stopping& st = x.facts->stopping;
    if (st.mode == "auto" && (st.reason == "max_iters" || st.reason == "max_time")) {
      ++h.capped;
      capped.push_back(fmt::format("{} at --{}, CI {:.2f}% of the mean against {:.2f}%", x.launch->file,
                                   st.reason == "max_iters" ? "max-iters" : "max-time", st.achieved_ci_pct,
                                   st.target_ci_pct));
    }
    if (const RowWarning* w = undermining_warning(warnings, "ex_per_s_per_gpu")) {
      ++h.voided;
      voided_rows.push_back(fmt::format("{} at {}: {}", x.launch->file,
                                        count_of(x.world_size, x.devices == x.world_size ? unit_word(*x.key) : "rank"),
                                        w->code));
    }
    if (x.shared) {
      ++h.shared;
      shared_rows.push_back(
          fmt::format("{} ({} ranks on {})", x.launch->file, x.world_size, count_of(x.devices, unit_word(*x.key))));
    }
    if (x.launch->spread && (!h.max_spread || *x.launch->spread > *h.max_spread)) {
      h.max_spread = x.launch->spread;
      h.spread_what = fmt::format("{}: {}", x.key->model, fmt::join(x.launch->all, ", "));
    }
  }
  h.capped_rows = fmt::format("{}", fmt::join(capped, "; "));
  h.voided_rows = fmt::format("{}", fmt::join(voided_rows, "; "));
  h.shared_rows = fmt::format("{}", fmt::join(shared_rows, "; "));
  for (const auto& x : r.repeats) {
    ++h.repeated_launches;
    h.repeats.push_back(fmt::format("{} repeats {} ({})", x.file, x.of, x.why));
  }

  // Sections not measured, with the command that fills each.
  const bool scaled =
      std::any_of(rows.begin(), rows.end(), [](const ShownRow& x) { return x.devices > 1 && !x.shared; });
  if (!rows.empty() && !scaled) {
    // The model measured in the most tables, at its fastest setup.
    std::string m = models.front();
    size_t most = 0;
    for (const auto& name : models) {
      const size_t n = static_cast<size_t>(
          std::count_if(r.weak.begin(), r.weak.end(), [&](const WeakTable& w) { return w.key.model == name; }));
      if (n > most) most = n, m = name;
    }
    const ShownRow* b = best_row.count(m) ? best_row[m] : &rows.front();
    const bool cpu = h.unit == "rank";
    const int n = cpu ? 4 : 8;
    h.not_measured.push_back(
        {"Scaling beyond one " + h.unit, fmt::format("every table ran on 1 {}", h.unit),
         launch_command("run", " " + run_flags(*b->key, b->key->batch_per_rank), n, 1, !cpu) +
             " --breakdown --json weak.json"});
  } else {
    // The largest multi-device row of a target table without a breakdown.
    const WeakTable* wt = nullptr;
    const WeakRow* wr = nullptr;
    for (const WeakTable* w : summary_tables(r)) {
      const WeakRow& last = largest_scaling_row(*w);
      if (last.devices > 1 && !last.exposed_comm && (!wr || last.world_size > wr->world_size)) wt = w, wr = &last;
    }
    if (wr)
      h.not_measured.push_back(
          {"Where the time goes",
           fmt::format("no row on {} has the per-step breakdown (exposed communication)",
                       count_of(wr->devices, unit_word(wt->key))),
           launch_command("run", " " + run_flags(wt->key, wt->key.batch_per_rank), wr->world_size, wr->nodes,
                          unit_word(wt->key) == "GPU") +
               " --breakdown --json weak.json"});
  }
  if (!rows.empty() && r.cost.empty()) {
    std::vector<std::string> names;
    for (const auto& f : r.files) names.push_back(f.value("name", ""));
    h.not_measured.push_back(
        {"Cost", "no GPU-hour price was given",
         fmt::format("ddpbench report {} --gpu-hour-cost <USD per {}-hour>",
                     names.size() <= 3 ? fmt::format("{}", fmt::join(names, " ")) : std::string("<the same files>"),
                     h.unit)});
  }
  const bool comm = !r.comm.empty() || std::any_of(r.cluster.begin(), r.cluster.end(), [](const ClusterFile& c) {
    return !c.pair_rows.empty();
  });
  if (!rows.empty() && !comm) {
    const int n = std::max(2, scaled ? h.ranks : (h.unit == "rank" ? 4 : 8));
    // Across nodes the pair test (one task per node) names the slow node or link.
    h.not_measured.push_back(
        {"Communication", "no collective or pair-bandwidth result",
         scaled && h.nodes > 1
             ? fmt::format("srun -N{} --ntasks-per-node 1 ddpbench comm --pairs --json pairs.json", h.nodes)
             : launch_command("comm", "", n, 1, h.unit == "GPU") + " --json comm.json"});
  }
  return h;
}

}  // namespace

namespace {

// A --target-for metric's field of ModelTargets (nullptr: no such metric).
std::optional<double> ModelTargets::*model_target_field(const std::string& metric) {
  if (metric == "efficiency") return &ModelTargets::min_efficiency;
  if (metric == "comm") return &ModelTargets::max_exposed_comm;
  if (metric == "ex-s") return &ModelTargets::min_per_gpu_ex_s;
  return nullptr;
}

// What is wrong with `v` as a --target-for `metric` value, "" when nothing (NaN and infinities
// fail every range). The ranges and units are those of --target-efficiency, --target-comm and
// --target-ex-s.
std::string model_target_range_error(const std::string& metric, const std::string& value, double v) {
  if (metric == "efficiency")
    return v > 0 && v <= 1 ? "" : fmt::format("efficiency {} must be a fraction in (0, 1] (0.9 for 90%)", value);
  if (metric == "comm")
    return v >= 0 && v <= 1 ? "" : fmt::format("comm {} must be a fraction in [0, 1] (0.1 for 10%)", value);
  return v > 0 && std::isfinite(v) ? "" : fmt::format("ex-s {} must be a positive number of ex/s per GPU", value);
}

}  // namespace

AppliedTargets targets_for(const SummaryTargets& t, const std::string& model) {
  AppliedTargets a{t.min_efficiency, t.max_exposed_comm, t.min_per_gpu_ex_s, false};
  const auto it = t.per_model.find(model);
  if (it == t.per_model.end()) return a;
  const ModelTargets& m = it->second;
  a.per_model = true;
  if (m.min_efficiency) a.min_efficiency = *m.min_efficiency;
  if (m.max_exposed_comm) a.max_exposed_comm = *m.max_exposed_comm;
  if (m.min_per_gpu_ex_s) a.min_per_gpu_ex_s = m.min_per_gpu_ex_s;
  return a;
}

void add_model_target(SummaryTargets& t, const std::string& text) {
  const size_t colon = text.find(':');
  const size_t eq = colon == std::string::npos ? std::string::npos : text.find('=', colon);
  if (colon == std::string::npos || colon == 0 || eq == std::string::npos)
    throw UsageError(
        fmt::format("--target-for '{}' is not MODEL:METRIC=VALUE; write e.g. resnet50:efficiency=0.9 "
                    "(METRIC: efficiency, comm or ex-s)",
                    text));
  const std::string model = text.substr(0, colon), metric = text.substr(colon + 1, eq - colon - 1),
                    value = text.substr(eq + 1);
  const auto field = model_target_field(metric);
  if (!field)
    throw UsageError(
        fmt::format("--target-for '{}': metric '{}' is unknown; use efficiency, comm or ex-s", text, metric));
  // The whole value a number (strtod skips leading blanks and stops at the first other character);
  // an overflow reads as infinity, which the range refuses.
  char* end = nullptr;
  const double v = value.empty() || std::isspace(static_cast<unsigned char>(value.front()))
                       ? std::nan("")
                       : std::strtod(value.c_str(), &end);
  if (!end || end != value.c_str() + value.size())
    throw UsageError(fmt::format("--target-for '{}': '{}' is not a number; write e.g. {}:{}={}", text, value, model,
                                 metric,
                                 metric == "efficiency" ? "0.9"
                                 : metric == "comm"     ? "0.1"
                                                        : "700"));
  if (const std::string why = model_target_range_error(metric, value, v); !why.empty())
    throw UsageError(fmt::format("--target-for '{}': {}", text, why));
  t.per_model[model].*field = v;
}

void check_model_targets(const SummaryTargets& t) {
  for (const auto& [model, m] : t.per_model)
    for (const char* metric : {"efficiency", "comm", "ex-s"})
      if (const auto& v = m.*model_target_field(metric)) {
        const std::string value = fmt::format("{:g}", *v);
        if (const std::string why = model_target_range_error(metric, value, *v); !why.empty())
          throw UsageError(fmt::format("--target-for '{}:{}={}': {}", model, metric, value, why));
      }
}

std::vector<std::string> absent_target_models(const SummaryTargets& t, const std::vector<NamedResult>& files) {
  std::vector<std::string> out;
  for (const auto& entry : t.per_model) {
    const std::string& model = entry.first;  // a name, not a structured binding: lambdas capture it (clang 14)
    const bool measured = std::any_of(files.begin(), files.end(), [&](const NamedResult& f) {
      return std::any_of(f.file.results.begin(), f.file.results.end(),
                         [&](const BenchResult& r) { return r.model == model; });
    });
    if (!measured) out.push_back(model);
  }
  return out;
}

std::string verdict_class(const std::string& status) {
  for (const char* v : {"PASS", "FAIL", "VOID"})
    if (status.rfind(v, 0) == 0) return v;
  return "not evaluated";
}

std::vector<std::string> headline_lines(const Headline& h) {
  std::vector<std::string> out;
  // No training row and no target (collectives, pairs or find-max-bs files alone): no headline,
  // as there is no summary of targets.
  if (h.rows == 0 && h.models.empty() && h.pass + h.fail + h.void_count + h.not_evaluated == 0) return out;
  const auto list = [](const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ", ")); };
  // Scope.
  {
    std::string launches = fmt::format("{} launch{}", h.launches, h.launches == 1 ? "" : "es");
    if (h.launches != h.files) launches += fmt::format(" ({} files)", h.files);
    std::string where;
    const std::string nodes = count_of(std::max(1, h.nodes), "node");
    if (h.devices.size() > 1)
      where = fmt::format("up to {} and {} in a row, of {}", nodes, count_of(h.gpus, "device"), list(h.devices));
    else if (h.unit == "rank")
      where = fmt::format("{} with up to {} of {}", nodes, count_of(h.ranks, "rank"), list(h.devices));
    else
      where = fmt::format("{} with {} x {}{}", nodes, h.gpus, list(h.devices),
                          h.ranks > h.gpus ? fmt::format(" (up to {} ranks)", h.ranks) : "");
    std::vector<std::string> sw;
    if (!h.torch.empty()) sw.push_back("torch " + list(h.torch));
    sw.push_back(h.cuda.empty() ? "no CUDA" : "CUDA " + list(h.cuda));
    if (!h.nccl.empty()) sw.push_back("NCCL " + list(h.nccl));
    if (!h.backends.empty()) sw.push_back("backend " + list(h.backends));
    std::string dates = h.first_date.empty()       ? ""
                        : h.first_date == h.last_date ? "; launched " + h.first_date
                                                      : "; launched " + h.first_date + " to " + h.last_date;
    out.push_back(fmt::format("Scope: {} on {}; {}{}.", launches, where, fmt::join(sw, ", "), dates));
  }
  // Verdicts.
  {
    std::string v = fmt::format("Targets: {} PASS, {} FAIL, {} VOID", h.pass, h.fail, h.void_count);
    if (!h.void_reasons.empty()) v += " (" + fmt::format("{}", fmt::join(h.void_reasons, "; ")) + ")";
    v += fmt::format(", {} not evaluated", h.not_evaluated);
    if (!h.not_evaluated_reasons.empty()) v += " (" + fmt::format("{}", fmt::join(h.not_evaluated_reasons, "; ")) + ")";
    out.push_back(v + ".");
  }
  for (const auto& m : h.models) {
    std::vector<std::string> parts;
    if (m.best_per_gpu_ex_s)
      parts.push_back(fmt::format("best {:.1f} ex/s per {} ({}, {}, {})", *m.best_per_gpu_ex_s, m.unit, m.best_setup,
                                  count_of(m.best_gpus, m.unit), m.best_file));
    if (m.efficiency) {
      std::string e =
          m.efficiency_void.empty()
              ? fmt::format("efficiency {:.1f}% at {} ({})", 100 * *m.efficiency, count_of(m.efficiency_gpus, m.unit),
                            m.efficiency_file)
              : fmt::format("efficiency VOID at {} ({:.1f}%, {}; {})", count_of(m.efficiency_gpus, m.unit),
                            100 * *m.efficiency, m.efficiency_void, m.efficiency_file);
      if (m.trusted_efficiency)
        e += fmt::format(", {:.1f}% at {}", 100 * *m.trusted_efficiency, count_of(m.trusted_gpus, m.unit));
      parts.push_back(e);
      parts.push_back(m.exposed_comm ? fmt::format("exposed comm {:.1f}% there", 100 * *m.exposed_comm)
                                     : "exposed comm not measured");
    } else {
      parts.push_back(fmt::format("scaling not measured (1 {} only)", m.unit));
    }
    if (m.usd_per_million)
      parts.push_back(fmt::format("cheapest {:.4f} USD per 1M samples ({}, {})", *m.usd_per_million,
                                  count_of(m.usd_gpus, m.unit), m.usd_file));
    out.push_back(fmt::format("{}: {}.", m.model, fmt::join(parts, "; ")));
  }
  // Data quality.
  if (h.rows > 0 || !h.repeats.empty()) {
    std::vector<std::string> q;
    // Rows by their file label (the tables and the appendix say the rest), so the line stays short.
    q.push_back(h.noisy ? fmt::format("{} of {} rows noisy (worst {})", h.noisy, h.rows, h.worst_noisy)
                        : fmt::format("no noisy row among {}", count_of(h.rows, "row")));
    if (h.capped) q.push_back(fmt::format("{} stopped before its CI target ({})", h.capped, h.capped_rows));
    if (h.voided) q.push_back(fmt::format("{} voided by a warning ({})", h.voided, h.voided_rows));
    if (h.shared) q.push_back(fmt::format("ranks sharing a GPU, not scaling: {}", h.shared_rows));
    if (h.max_spread)
      q.push_back(fmt::format("launches of one setup spread up to {:.1f}% ({})", 100 * *h.max_spread, h.spread_what));
    for (const auto& x : h.repeats) q.push_back(x + ", counted once");
    out.push_back(fmt::format("Data quality: {}.", fmt::join(q, "; ")));
  }
  for (const auto& n : h.not_measured)
    out.push_back(fmt::format("Not measured: {} ({}): {}", n.section, n.why, n.command));
  return out;
}

nlohmann::json headline_json(const Headline& h) {
  nlohmann::json models = nlohmann::json::array();
  const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  for (const auto& m : h.models)
    models.push_back({{"model", m.model},
                      {"unit", m.unit},
                      {"best_per_gpu_ex_s", opt(m.best_per_gpu_ex_s)},
                      {"best_setup", m.best_setup},
                      {"best_file", m.best_file},
                      {"best_gpus", m.best_gpus},
                      {"efficiency", opt(m.efficiency)},
                      {"efficiency_gpus", m.efficiency_gpus},
                      {"efficiency_void", m.efficiency_void},
                      {"efficiency_file", m.efficiency_file},
                      {"efficiency_device", m.efficiency_device},
                      {"trusted_efficiency", opt(m.trusted_efficiency)},
                      {"trusted_gpus", m.trusted_gpus},
                      {"exposed_comm", opt(m.exposed_comm)},
                      {"usd_per_million", opt(m.usd_per_million)},
                      {"usd_gpus", m.usd_gpus},
                      {"usd_file", m.usd_file}});
  nlohmann::json missing = nlohmann::json::array();
  for (const auto& n : h.not_measured)
    missing.push_back({{"section", n.section}, {"why", n.why}, {"command", n.command}});
  return {{"scope",
           {{"files", h.files},
            {"launches", h.launches},
            {"nodes", h.nodes},
            {"gpus", h.gpus},
            {"ranks", h.ranks},
            {"unit", h.unit},
            {"devices", h.devices},
            {"torch", h.torch},
            {"cuda", h.cuda},
            {"nccl", h.nccl},
            {"backends", h.backends},
            {"first_date", h.first_date},
            {"last_date", h.last_date}}},
          {"verdicts",
           {{"pass", h.pass},
            {"fail", h.fail},
            {"void", h.void_count},
            {"not_evaluated", h.not_evaluated},
            {"void_reasons", h.void_reasons},
            {"not_evaluated_reasons", h.not_evaluated_reasons}}},
          {"models", models},
          {"data_quality",
           {{"rows", h.rows},
            {"noisy", h.noisy},
            {"worst_noisy", h.worst_noisy},
            {"capped", h.capped},
            {"capped_rows", h.capped_rows},
            {"voided", h.voided},
            {"voided_rows", h.voided_rows},
            {"shared", h.shared},
            {"shared_rows", h.shared_rows},
            {"max_spread", opt(h.max_spread)},
            {"spread_what", h.spread_what},
            {"repeats", h.repeats}}},
          {"not_measured", missing},
          {"lines", headline_lines(h)}};
}

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
  s.headline = build_headline(r, files, s);
  return s;
}

}  // namespace ddpbench
