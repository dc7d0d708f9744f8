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

// "1 GPU", "4 ranks".
std::string count_of(int n, const std::string& unit) { return count_words(n, unit); }

// "resnet50, fp32 (cuDNN TF32), batch 32 per GPU, 224 px, NVIDIA H100 80GB HBM3".
std::string what_of(const ConfigKey& k, long long batch, bool global = false) {
  return fmt::format("{}, {}, {} {}{}, {}, {}", k.model, k.setup_label(), global ? "global batch" : "batch", batch,
                     global ? "" : " per " + unit_word(k), k.input_size(), k.device);
}

// "F2", or "F2 vs F1" when the row's number also rests on another launch's row.
std::string launches(const std::string& row, const std::string& base) {
  return base.empty() || base == row ? row : row + " vs " + base;
}

// The codes of a row's warnings (recomputed from its data for every schema at intake:
// core/result/row_warnings), "shared_gpu" first where its ranks shared a GPU.
std::vector<std::string> codes_of(const RowFacts& f, bool shared = false) {
  std::vector<std::string> out;
  if (shared) out.push_back("shared_gpu");
  for (const auto& w : f.warnings)
    if (std::find(out.begin(), out.end(), w.code) == out.end()) out.push_back(w.code);
  return out;
}

// The union of several rows' warning codes, in first-seen order.
std::vector<std::string> union_of(std::initializer_list<std::vector<std::string>> lists) {
  std::vector<std::string> out;
  for (const auto& l : lists)
    for (const auto& c : l)
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}

// The chosen launch of a table row, as a claim names it.
ClaimRow row_of(const RowLaunch& l, const std::string& role) { return {l.source, l.file, l.row, role}; }

// The row and, where several launches measured its configuration, every launch (role "launch").
void add_rows(std::vector<ClaimRow>& out, const RowLaunch& l, const std::string& role) {
  out.push_back(row_of(l, role));
  if (l.refs.size() > 1)
    for (const auto& x : l.refs) out.push_back({x.source, x.label, x.row, "launch of " + l.file});
}

// The first warning of the rows whose facts are `rows` that voids `metric` (nullptr when none does).
const RowWarning* voiding(const std::vector<const RowFacts*>& rows, const std::string& metric) {
  for (const RowFacts* f : rows)
    if (const RowWarning* w = undermining_warning(f->warnings, metric)) return w;
  return nullptr;
}

// Its code ("" when none does).
std::string voided(const std::vector<const RowFacts*>& rows, const std::string& metric) {
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

// The facts of the rows a row's efficiency rests on: the row's, and its baseline's (the table's
// 1-rank row, or the row's no-DDP row, which is not in the table).
std::vector<const RowFacts*> efficiency_rows(const WeakTable& w, const WeakRow& row) {
  if (w.baseline_kind == WeakTable::Baseline::no_ddp) return {&row.facts, &row.baseline_facts};
  return {&row.facts, &w.rows.front().facts};
}

// The rows an efficiency rests on, as a claim names them: the row, and its baseline (the
// table's 1-rank row, or the row's no-DDP row).
std::vector<ClaimRow> efficiency_claim_rows(const WeakTable& w, const WeakRow& row) {
  std::vector<ClaimRow> out;
  add_rows(out, row.launch, "measured");
  if (w.baseline_kind == WeakTable::Baseline::no_ddp)
    out.push_back({row.baseline_source, row.baseline_file, row.baseline_row, "baseline"});
  else
    add_rows(out, w.rows.front().launch, "baseline");
  return out;
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

// The size a check names: "16 GPUs", "4 ranks" on CPUs, "2 ranks on 1 GPU" where ranks shared one.
std::string size_of(const SummaryCheck& c) {
  if (c.gpus <= 0 || c.unit == "rank") return count_of(c.ranks, "rank");
  if (c.gpus == c.ranks) return count_of(c.gpus, c.unit);
  return count_of(c.ranks, "rank") + " on " + count_of(c.gpus, c.unit);
}

// The check's claim (kind "target"): its fields, the numbers, the rows and their warnings.
void finish_check(SummaryCheck& c, std::optional<double> measured, std::optional<double> threshold,
                  const std::string& unit, const std::string& comparison, std::vector<ClaimRow> rows,
                  std::vector<std::string> warnings, const std::string& table) {
  Claim k;
  k.kind = "target";
  k.subject = c.what;
  k.verdict = c.status;
  if (measured) k.num("measured", *measured, unit);
  if (threshold) k.num("threshold", *threshold, unit);
  k.num("gpus", c.gpus, "count").num("ranks", c.ranks, "count");
  k.word("metric", c.metric)
      .word("comparison", comparison)
      .word("required", c.target)
      .word("measured", c.measured)
      .word("size", size_of(c))
      .word("from", c.from)
      .word("table", table);
  if (!c.void_warning.empty()) k.word("void_warning", c.void_warning);
  k.rows = std::move(rows);
  k.warnings = std::move(warnings);
  c.claim = finish_claim(std::move(k));
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
    const WeakRow& last = largest_scaling_row(w);  // rows are sorted by world size
    const std::string what = what_of(w.key, w.key.batch_per_rank);
    const bool bad = last.facts.self_check_passed == false;
    const std::string unit = unit_word(w.key);
    const AppliedTargets a = targets_for(t, w.key.model);
    std::vector<ClaimRow> last_rows;
    add_rows(last_rows, last.launch, "measured");
    const std::vector<std::string> last_codes = codes_of(last.facts, last.shared_gpu);
    if (a.min_per_gpu_ex_s) {
      const RowWarning* v = voiding({&last.facts}, "ex_per_s_per_gpu");
      SummaryCheck c{what,
                     last.devices,
                     last.world_size,
                     unit,
                     "per-" + unit + " ex/s",
                     fmt::format(">= {:.1f}", *a.min_per_gpu_ex_s),
                     fmt::format("{:.1f}", last.per_gpu_ex_s),
                     verdict(last.per_gpu_ex_s >= *a.min_per_gpu_ex_s, v ? v->code : "", bad),
                     "weak scaling, " + last.launch.file,
                     bad ? "" : warning_words(v), {}};
      finish_check(c, last.per_gpu_ex_s, *a.min_per_gpu_ex_s, "ex/s", ">=", last_rows, last_codes, "weak");
      s.checks.push_back(std::move(c));
    }
    if (last.devices <= 1) {
      // Efficiency and exposed comm need two or more devices: both counted as not evaluated.
      ++one_device;
      for (const std::string metric : {"weak-scaling efficiency", "exposed comm"}) {
        SummaryCheck c{what,
                       last.devices,
                       last.world_size,
                       unit,
                       metric,
                       metric == "exposed comm" ? "< " + pct(a.max_exposed_comm) : ">= " + pct(a.min_efficiency),
                       "",
                       fmt::format("not measured (1 {} only)", unit),
                       "weak scaling, " + last.launch.file,
                       "", {}};
        finish_check(c, std::nullopt, metric == "exposed comm" ? a.max_exposed_comm : a.min_efficiency, "fraction",
                     metric == "exposed comm" ? "<" : ">=", last_rows, last_codes, "weak");
        s.checks.push_back(std::move(c));
      }
      continue;
    }
    if (real_baseline(w)) {
      const RowWarning* v = voiding(efficiency_rows(w, last), "weak_scaling_efficiency");
      SummaryCheck c{what,
                     last.devices,
                     last.world_size,
                     unit,
                     "weak-scaling efficiency",
                     ">= " + pct(a.min_efficiency),
                     pct(last.efficiency),
                     verdict(last.efficiency >= a.min_efficiency, v ? v->code : "", bad),
                     "weak scaling, " + efficiency_from(w, last),
                     bad ? "" : warning_words(v), {}};
      const std::vector<std::string> codes = union_of({last_codes, codes_of(*efficiency_rows(w, last)[1])});
      finish_check(c, last.efficiency, a.min_efficiency, "fraction", ">=", efficiency_claim_rows(w, last), codes,
                   "weak");
      s.checks.push_back(std::move(c));
    } else {
      SummaryCheck c{what,
                     last.devices,
                     last.world_size,
                     unit,
                     "weak-scaling efficiency",
                     ">= " + pct(a.min_efficiency),
                     "",
                     "not measured (no 1-GPU or no-DDP baseline)",
                     "weak scaling, " + last.launch.file,
                     "", {}};
      finish_check(c, std::nullopt, a.min_efficiency, "fraction", ">=", last_rows, last_codes, "weak");
      s.checks.push_back(std::move(c));
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
                      "", {}};
    if (last.exposed_comm) {
      const RowWarning* v = voiding({&last.facts}, "exposed_comm");
      comm.measured = pct(*last.exposed_comm);
      comm.status = verdict(*last.exposed_comm < a.max_exposed_comm, v ? v->code : "", bad);
      if (!bad) comm.void_warning = warning_words(v);
    } else {
      comm.status = "not measured (run --breakdown)";
    }
    finish_check(comm, last.exposed_comm, a.max_exposed_comm, "fraction", "<", last_rows, last_codes, "weak");
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
                    "targets need two or more, so they are not evaluated there ({} targets)",
                    one_device, tables.size(), tables.size() == 1 ? "" : "s", u, 2 * one_device));
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
      SummaryCheck sc{what_of(*c.row, c.row->batch_per_rank),
                      0,
                      c.row->world_size,
                      unit_word(*c.row),
                      c.ref.metric,
                      allowed_range_text(c) + unit,
                      c.measured ? metric_text(c.ref.metric, *c.measured) + unit : "",
                      void_ ? "VOID (" + c.untrusted + ")" : c.status,
                      fmt::format("{} entry {}, {}", t.pinned_source, e, file_label(fi)),
                      void_ ? c.untrusted : "", {}};
      // The row the entry matched, by its index in the file.
      std::vector<ClaimRow> rows_of;
      std::vector<std::string> codes;
      for (const auto& br : f.results)
        if (ConfigKey::of(f, br) == *c.row) {
          rows_of.push_back({files[fi].name, file_label(fi), br.index_in_file, "measured"});
          for (const auto& w : br.warnings) codes.push_back(w.code);
          break;
        }
      finish_check(sc, c.measured, std::nullopt, c.ref.unit, "in", rows_of, codes, "summary");
      s.checks.push_back(std::move(sc));
    }
  }
  for (size_t e = 0; e < t.pinned.size(); ++e) {
    const ReferenceEntry& ref = t.pinned[e];
    if (found[e]) continue;
    SummaryCheck sc{fmt::format("{}, {}, batch {} per rank, {} px, {}", ref.model, ref.setup.precision,
                                ref.batch_per_rank, ref.image_size, ref.device),
                    0,
                    ref.world_size,
                    "GPU",
                    ref.metric,
                    "",
                    "",
                    applied[e] ? "MISSING" : "MISSING (no file of its device)",
                    fmt::format("{} entry {}", t.pinned_source, e),
                    "", {}};
    finish_check(sc, std::nullopt, std::nullopt, ref.unit, "in", {}, {}, "summary");
    s.checks.push_back(std::move(sc));
  }
}

// A recommendation from its claim: the topic, the table and launches it cites.
Recommendation recommend(const std::string& topic, Claim c, const std::string& from) {
  c.word("from", from);
  Claim done = finish_claim(std::move(c));
  return {topic, done.text, from, std::move(done)};
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
    const double target = targets_for(t, w.key.model).min_efficiency;
    Claim c;
    c.kind = "world_size";
    c.subject = what_of(w.key, w.key.batch_per_rank);
    c.word("units", unit_word(w.key) + "s").word("unit", unit_word(w.key)).word("table", "weak");
    c.num("efficiency", last.efficiency, "fraction")
        .num("devices", last.devices, "count")
        .num("target", target, "fraction");
    c.rows = efficiency_claim_rows(w, last);
    c.warnings = union_of({codes_of(last.facts), codes_of(*efficiency_rows(w, last)[1])});
    if (last.efficiency >= target) {
      c.verdict = "holds";
      s.recommendations.push_back(recommend("world size", std::move(c), "weak scaling, " + efficiency_from(w, last)));
      continue;
    }
    const WeakRow* ok = nullptr;  // the largest size above one device that meets the target, trusted
    for (const auto& row : w.rows)
      if (row.devices > 1 && !row.shared_gpu && row.world_size <= last.world_size && row.efficiency >= target &&
          row.facts.self_check_passed != false && voided(efficiency_rows(w, row), "weak_scaling_efficiency").empty())
        ok = &row;
    if (ok && ok->facts.self_check_passed != false) {
      c.verdict = "at_most";
      c.num("ok_efficiency", ok->efficiency, "fraction").num("ok_devices", ok->devices, "count");
      for (auto& x : efficiency_claim_rows(w, *ok)) {
        x.role = x.role == "measured" ? "meets target" : x.role;
        c.rows.push_back(x);
      }
      s.recommendations.push_back(recommend(
          "world size", std::move(c),
          "weak scaling, " +
              (ok->launch.file == last.launch.file ? last.launch.file : ok->launch.file + " and " + last.launch.file)));
    } else {
      c.verdict = "none";
      if (last.exposed_comm) c.num("exposed_comm", *last.exposed_comm, "fraction");
      s.recommendations.push_back(recommend("world size", std::move(c), "weak scaling, " + efficiency_from(w, last)));
    }
  }
}

// ------------------------------------------------------------------ noise floors

// How far apart two rows are in throughput, and whether that is beyond noise
// (docs/METHODOLOGY.md "Noise floors"): `fast` measured at least as many ex/s as `slow`.
struct Gap {
  double gap = 0;        // fast / slow - 1 (fraction of the slower's ex/s)
  std::string verdict;   // "within noise", "beyond noise", "unmeasured"
  std::string basis;     // "ci" (the rows' own 95% CIs overlap) or "launches"
  std::optional<double> floor;  // the launch-to-launch spread it was held to
};

// The launch-to-launch spread measured for a configuration: its launches' spread when two or
// more launches measured it, nullopt otherwise (never another configuration's).
std::optional<double> spread_of(const RowLaunch& l) {
  if (l.launches >= 2 && l.spread) return *l.spread;
  return std::nullopt;
}

Gap compare_rows(double fast_ex, const RowLaunch& fl, const RowFacts& ff, double slow_ex, const RowLaunch& sl,
                 const RowFacts& sf) {
  Gap g;
  g.gap = fast_ex / slow_ex - 1;
  for (const auto& sp : {spread_of(fl), spread_of(sl)})
    if (sp) g.floor = std::max(g.floor.value_or(0.0), *sp);
  // The rows' own 95% CIs of the mean step time, as fractions: they overlap when the gap is
  // within their sum (a gap the launches themselves cannot resolve).
  if (g.gap <= ff.ci + sf.ci) {
    g.verdict = "within noise";
    g.basis = "ci";
  } else if (g.floor) {
    g.verdict = g.gap > *g.floor ? "beyond noise" : "within noise";
    g.basis = "launches";
  } else {
    g.verdict = "unmeasured";
    g.basis = "launches";
  }
  return g;
}

// The launches the widest spread of `ls` was measured on: "F3, F4, F5"; "" when none has one.
std::string floor_from(std::initializer_list<const RowLaunch*> ls) {
  const RowLaunch* widest = nullptr;
  for (const RowLaunch* l : ls)
    if (spread_of(*l) && (!widest || *spread_of(*l) > *spread_of(*widest))) widest = l;
  return widest ? fmt::format("{}", fmt::join(widest->all, ", ")) : "";
}

// One compared row as a claim item: its name, ex/s, launches, CI, rows and warnings.
ClaimItem item_of(const std::string& name, double ex_s, const RowLaunch& l, const RowFacts& f) {
  ClaimItem it;
  it.name = name;
  it.numbers = {{"aggregate_ex_s", ex_s, "ex/s"},
                {"launches", static_cast<double>(l.launches), "count"},
                {"ci", f.ci, "fraction"}};
  if (const auto sp = spread_of(l)) it.numbers.push_back({"spread", *sp, "fraction"});
  add_rows(it.rows, l, "compared");
  it.warnings = codes_of(f);
  return it;
}

// DDP setting: the fastest variant of an optimization-impact table, when it beats the defaults by
// more than kMinKnobGain and the noise of both rows.
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
    const double gain = *best->speedup - 1;
    Claim c;
    c.kind = "ddp_setting";
    // Ranks, not GPUs: the impact table does not count devices.
    c.subject = fmt::format("{} on {} ranks", what_of(m.key, m.key.batch_per_rank), m.key.world_size);
    c.word("technique", best->technique).word("table", "impact");
    c.num("gain", gain, "fraction")
        .num("best_ex_s", best->aggregate_ex_s, "ex/s")
        .num("base_ex_s", base->aggregate_ex_s, "ex/s")
        .num("min_gain", kMinKnobGain, "fraction");
    ClaimItem bi = item_of("DDP's defaults", base->aggregate_ex_s, base->launch, base->facts);
    bi.verdict = "baseline";
    c.items.push_back(bi);
    ClaimItem ti = item_of(best->technique, best->aggregate_ex_s, best->launch, best->facts);
    // The faster of the two against the slower: the best setting may be slower than the defaults.
    const Gap g = gain >= 0 ? compare_rows(best->aggregate_ex_s, best->launch, best->facts, base->aggregate_ex_s,
                                           base->launch, base->facts)
                            : compare_rows(base->aggregate_ex_s, base->launch, base->facts, best->aggregate_ex_s,
                                           best->launch, best->facts);
    ti.verdict = g.verdict;
    ti.numbers.push_back({"gap", gain, "fraction"});
    c.items.push_back(ti);
    if (g.floor) c.num("noise_floor", *g.floor, "fraction").word("floor_from", floor_from({&best->launch, &base->launch}));
    c.word("basis", g.basis);
    if (gain < 0) c.items.back().verdict = g.verdict;  // of the defaults against it: its gap says it is slower
    if (gain <= kMinKnobGain) c.verdict = "below_gain";
    else if (g.verdict == "within noise") c.verdict = "within_noise";
    else if (g.verdict == "beyond noise") c.verdict = "set";
    else {
      c.verdict = "unmeasured";
      c.items.back().verdict = "unmeasured";
      c.items.front().verdict = base->launch.launches >= 2 ? "baseline" : "unmeasured";
      // Name only the configurations measured once.
      if (best->launch.launches >= 2) c.items.back().verdict = "measured";
    }
    c.warnings = union_of({codes_of(base->facts), codes_of(best->facts)});
    for (const auto* x : {base, best}) add_rows(c.rows, x->launch, x == base ? "baseline" : "compared");
    s.recommendations.push_back(
        recommend("DDP setting", std::move(c), "optimization impact, " + launches(best->launch.file, base->launch.file)));
  }
}

// Setup: per strategy table and world size with two or more lines, the fastest setup (strategy,
// checkpointing, precision) and every other one against it: within noise, beyond it, or with its
// launch-to-launch noise unmeasured.
void setup_rule(const Report& r, ExecutiveSummary& s) {
  const auto name = [](const StrategyRow& x) {
    return fmt::format("{}{}, {}", x.strategy, x.activation_checkpointing ? " with activation checkpointing" : "",
                       x.precision);
  };
  for (const auto& m : r.strategy) {
    std::set<int> sizes;
    for (const auto& row : m.rows) sizes.insert(row.world_size);
    for (int n : sizes) {
      std::vector<const StrategyRow*> lines;
      for (const auto& row : m.rows)
        if (row.world_size == n && row.aggregate_ex_s > 0 && trusted(row.facts, "ex_per_s_total")) lines.push_back(&row);
      if (lines.size() < 2) continue;
      const StrategyRow* fast = *std::max_element(lines.begin(), lines.end(), [](const StrategyRow* a, const StrategyRow* b) {
        return a->aggregate_ex_s < b->aggregate_ex_s;
      });
      Claim c;
      c.kind = "setup";
      c.subject = fmt::format("{}{}, batch {} per {}, {} px, {} on {} {}{}", m.key.model,
                              m.key.channels_last ? ", channels_last" : "", m.key.batch_per_rank, unit_word(m.key),
                              m.key.image_size, m.key.device, n, "rank", n == 1 ? "" : "s");
      c.word("unit", unit_word(m.key)).word("table", "strategy");
      std::optional<double> floor;
      std::string within_basis;
      bool all_within = true, any_unmeasured = false;
      ClaimItem fi = item_of(name(*fast), fast->aggregate_ex_s, fast->launch, fast->facts);
      fi.verdict = "fastest";
      if (fast->peak_memory_bytes) fi.numbers.push_back({"peak_memory_bytes", *fast->peak_memory_bytes, "bytes"});
      c.items.push_back(fi);
      for (const StrategyRow* x : lines) {
        if (x == fast) continue;
        const Gap g = compare_rows(fast->aggregate_ex_s, fast->launch, fast->facts, x->aggregate_ex_s, x->launch, x->facts);
        ClaimItem it = item_of(name(*x), x->aggregate_ex_s, x->launch, x->facts);
        it.verdict = g.verdict;
        it.numbers.push_back({"gap", g.gap, "fraction"});  // fastest / this - 1
        if (g.floor) it.numbers.push_back({"pair_floor", *g.floor, "fraction"});
        if (x->peak_memory_bytes) it.numbers.push_back({"peak_memory_bytes", *x->peak_memory_bytes, "bytes"});
        c.items.push_back(it);
        if (g.floor) floor = std::max(floor.value_or(0.0), *g.floor);
        if (g.verdict == "within noise" && within_basis != "launches") within_basis = g.basis;
        all_within = all_within && g.verdict == "within noise";
        any_unmeasured = any_unmeasured || g.verdict == "unmeasured";
      }
      if (floor) {
        // The floor is the widest spread measured among the setups compared: name its launches.
        c.num("noise_floor", *floor, "fraction");
        for (const StrategyRow* x : lines)
          if (spread_of(x->launch) && *spread_of(x->launch) == *floor) {
            c.word("floor_from", fmt::format("{}", fmt::join(x->launch.all, ", ")));
            break;
          }
      }
      c.word("within_basis", within_basis.empty() ? "launches" : within_basis);
      const bool memory = std::all_of(lines.begin(), lines.end(), [](const StrategyRow* x) { return x->peak_memory_bytes.has_value(); });
      c.word("choose_by_memory", all_within && memory ? "yes" : "no");
      c.verdict = any_unmeasured ? "noise unmeasured" : all_within ? "within noise" : "fastest";
      std::vector<std::vector<std::string>> codes;
      for (const StrategyRow* x : lines) {
        add_rows(c.rows, x->launch, x == fast ? "fastest" : "compared");
        for (const auto& code : codes_of(x->facts))
          if (std::find(c.warnings.begin(), c.warnings.end(), code) == c.warnings.end()) c.warnings.push_back(code);
      }
      const StrategyRow* slow = *std::min_element(lines.begin(), lines.end(), [](const StrategyRow* a, const StrategyRow* b) {
        return a->aggregate_ex_s < b->aggregate_ex_s;
      });
      s.recommendations.push_back(
          recommend("setup", std::move(c), "strategy comparison, " + launches(fast->launch.file, slow->launch.file)));
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
      Claim c;
      c.kind = "memory";
      c.subject = fmt::format("{} on {} rank{}", what_of(m.key, m.key.batch_per_rank), n, n == 1 ? "" : "s");
      c.word("peak_kind", m.peak_kind).word("table", "memory");
      for (const auto& row : m.rows)
        if (row.world_size == n) {
          ClaimItem it;
          it.name = row.technique;
          it.verdict = &row == best ? "saves the most" : row.saved > 0 ? "saves" : "saves nothing";
          it.numbers = {{"peak_bytes", row.peak_bytes, "bytes"},
                        {"baseline_peak_bytes", row.baseline_peak_bytes, "bytes"},
                        {"saved", row.saved, "fraction"}};
          add_rows(it.rows, row.launch, "technique");
          it.rows.push_back({row.baseline_source, row.baseline_file, row.baseline_row, "baseline"});
          c.items.push_back(it);
        }
      if (!best) {
        c.verdict = "none";
        s.recommendations.push_back(recommend("memory", std::move(c), "memory optimization"));
        continue;
      }
      c.verdict = "use";
      c.word("technique", best->technique)
          .word("baseline_peak", bytes(Value(best->baseline_peak_bytes)))
          .word("peak", bytes(Value(best->peak_bytes)));
      c.num("saved", best->saved, "fraction")
          .num("peak_bytes", best->peak_bytes, "bytes")
          .num("baseline_peak_bytes", best->baseline_peak_bytes, "bytes")
          .num("time_paid", best->time_paid, "fraction");
      add_rows(c.rows, best->launch, "technique");
      c.rows.push_back({best->baseline_source, best->baseline_file, best->baseline_row, "baseline"});
      s.recommendations.push_back(
          recommend("memory", std::move(c), "memory optimization, " + launches(best->launch.file, best->baseline_file)));
    }
  }
}

// Cost: the most cost-efficient row of each model's cost table that holds two or more rows
// (setups or GPU counts to choose between).
void cost_rule(const Report& r, ExecutiveSummary& s) {
  for (const auto& c : r.cost) {
    if (c.rows.size() < 2) continue;
    const CostRow& best = c.rows[c.best];
    const std::string u = unit_word(c.key);
    Claim k;
    k.kind = "cost";
    k.verdict = "cheapest";
    const bool one_device = std::all_of(c.rows.begin(), c.rows.end(), [&](const CostRow& x) { return x.key.device == c.key.device; });
    k.subject = one_device ? fmt::format("{}, {} px, {}", c.model, c.key.image_size, c.key.device)
                           : fmt::format("{}, {} px, across device types", c.model, c.key.image_size);
    k.word("setup", best.setup)
        .word("size", count_of(best.world_size, u))
        .word("unit", u)
        .word("dataset", with_thousands(c.dataset_size))
        .word("hours", fmtcol::duration()(Value(best.hours * 3600)))
        .word("table", "cost");
    k.num("usd_per_million", best.usd_per_million, "USD")
        .num("epochs", c.epochs, "count")
        .num("dataset_size", static_cast<double>(c.dataset_size), "count")
        .num("usd", best.usd, "USD")
        .num("gpu_hour_usd", c.gpu_hour_usd, "USD")
        .num("world_size", best.world_size, "count");
    for (const auto& row : c.rows) {
      ClaimItem it;
      it.name = row.setup + " on " + count_of(row.world_size, u);
      it.verdict = &row == &best ? "cheapest" : "costlier";
      it.numbers = {{"usd_per_million", row.usd_per_million, "USD"},
                    {"relative", row.relative, "fraction"},
                    {"mean_step_s", row.mean_step_s, "s"},
                    {"devices", static_cast<double>(row.world_size), "count"},
                    {"ex_s_mean_step", row.ex_s_mean_step, "ex/s"}};
      it.rows.push_back({row.source, row.file, row.row, "priced"});
      k.items.push_back(it);
    }
    k.rows.push_back({best.source, best.file, best.row, "cheapest"});
    for (const auto& w : r.weak)
      for (const auto& x : w.rows)
        if (x.launch.source == best.source && x.launch.row == best.row) k.warnings = codes_of(x.facts, x.shared_gpu);
    for (const auto& t : r.strong)
      for (const auto& x : t.rows)
        if (x.launch.source == best.source && x.launch.row == best.row) k.warnings = codes_of(x.facts, x.shared_gpu);
    s.recommendations.push_back(recommend("cost", std::move(k), "cost, " + best.file));
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
        Claim k;
        k.kind = "straggler";
        k.verdict = "straggler";
        k.subject = straggler_what(e);
        k.word("rank", straggler_rank_words(x)).word("model", e.value("model", "")).word("table", "findings");
        k.num("score", *score, "fraction").num("threshold", thr, "fraction");
        if (const auto rk = num_at(x, {"rank"})) k.num("rank", *rk, "count");
        k.rows.push_back({c.source, c.label, -1, "stragglers"});
        s.recommendations.push_back(recommend("node", std::move(k), "findings (stragglers), " + c.label));
      }
    }
    if (c.comm_pairs.contains("slow_nodes") && c.comm_pairs["slow_nodes"].is_array())
      for (const auto& n : c.comm_pairs["slow_nodes"])
        if (n.is_object() && n.contains("message") && n["message"].is_string()) {
          Claim k;
          k.kind = "slow_node";
          k.verdict = "slow";
          k.subject = n.value("host", std::string());
          k.word("message", n["message"].get<std::string>()).word("table", "pairs");
          k.rows.push_back({c.source, c.label, -1, "comm_pairs"});
          s.recommendations.push_back(recommend("node", std::move(k), "pair bandwidth, " + c.label));
        }
  }
}

// ------------------------------------------------------------------ the headline

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

// The verdicts of some checks counted by class, with why each VOID voided and why the others
// were not evaluated.
struct TallyCounts {
  int pass = 0, fail = 0, void_count = 0, not_evaluated = 0;
  std::vector<std::string> void_reasons, not_evaluated_reasons;
};

TallyCounts tally_counts(const std::vector<SummaryCheck>& checks, const std::string& unit) {
  TallyCounts t;
  std::map<std::string, int> not_evaluated;  // reason -> count, in first-seen order below
  std::vector<std::string> order;
  std::set<std::string> one_device_tables;
  for (const auto& c : checks) {
    const std::string v = verdict_class(c.status);
    if (v == "PASS") ++t.pass;
    else if (v == "FAIL") ++t.fail;
    else if (v == "VOID") {
      ++t.void_count;
      const size_t colon = c.void_warning.find(':');
      t.void_reasons.push_back(fmt::format("{} {} on {}: {}", c.metric, c.measured,
                                           c.unit == "rank" || c.gpus <= 0 ? count_of(c.ranks, "rank")
                                                                           : count_of(c.gpus, c.unit),
                                           c.void_warning.substr(0, colon)));
    } else {
      ++t.not_evaluated;
      if (c.status.rfind("not measured (1 ", 0) == 0) {
        one_device_tables.insert(c.what + "|" + c.from);
        continue;
      }
      // validate's own checks name their step and why (its detail); targets their metric and status.
      const std::string why = c.claim.kind == "validate_check" ? c.from + " " + c.metric + ": " + c.measured
                                                                : c.metric + " " + c.status;
      if (!not_evaluated.count(why)) order.push_back(why);
      ++not_evaluated[why];
    }
  }
  if (!one_device_tables.empty())
    t.not_evaluated_reasons.push_back(fmt::format("{} ran on 1 {} only: efficiency and exposed comm need 2 or more",
                                                  count_of(static_cast<int>(one_device_tables.size()), "table"), unit));
  for (const auto& why : order)
    t.not_evaluated_reasons.push_back(not_evaluated[why] > 1 ? fmt::format("{} in {} tables", why, not_evaluated[why])
                                                             : why);
  return t;
}

// The tally of some checks as claim items: each FAIL and VOID by its target, measured value,
// threshold, size, model and launch (its warnings are the item's).
std::vector<ClaimItem> tally_items(const std::vector<SummaryCheck>& checks) {
  std::vector<ClaimItem> out;
  for (const auto& c : checks) {
    const std::string v = verdict_class(c.status);
    if (v != "FAIL" && v != "VOID") continue;
    ClaimItem it;
    it.verdict = v;
    if (c.claim.kind == "validate_check") {  // validate's own: its step, what it checks and why
      it.name = fmt::format("{} {}: {}", c.from, c.metric, c.measured);
      it.rows = c.claim.rows;
      out.push_back(std::move(it));
      continue;
    }
    const std::string model = c.what.substr(0, c.what.find(','));
    it.name = fmt::format("{} {} (required {}) on {}, {} [{}]{}", c.metric, c.measured.empty() ? "n/a" : c.measured,
                          c.target, size_of(c), model, c.from,
                          v == "FAIL" && c.status != "FAIL" ? " " + c.status.substr(5) : "");
    it.numbers = c.claim.numbers;
    it.rows = c.claim.rows;
    it.warnings = c.claim.warnings;
    if (v == "VOID") {  // the voiding warning first (render_tally names it)
      const std::string code = c.status.substr(6, c.status.size() - 7);
      it.warnings.erase(std::remove(it.warnings.begin(), it.warnings.end(), code), it.warnings.end());
      it.warnings.insert(it.warnings.begin(), code);
    }
    out.push_back(std::move(it));
  }
  return out;
}

// The headline's sentences as claims, in print order (headline_lines prints their texts).
void headline_claims(Headline& h, const Report& r, const ExecutiveSummary& s) {
  // No training row and no target (collectives, pairs or find-max-bs files alone): no headline,
  // as there is no summary of targets.
  if (h.rows == 0 && h.models.empty() && h.pass + h.fail + h.void_count + h.not_evaluated == 0) return;
  const auto list = [](const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ", ")); };
  {
    Claim c;
    c.kind = "scope";
    c.verdict = "scope";
    c.subject = "the result files";
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
    const std::string dates = h.first_date.empty()          ? ""
                              : h.first_date == h.last_date ? "; launched " + h.first_date
                                                            : "; launched " + h.first_date + " to " + h.last_date;
    c.word("launches", launches).word("where", where).word("software", fmt::format("{}", fmt::join(sw, ", ")));
    c.word("dates", dates);
    c.num("files", h.files, "count")
        .num("launches", h.launches, "count")
        .num("nodes", h.nodes, "count")
        .num("gpus", h.gpus, "count")
        .num("ranks", h.ranks, "count");
    for (const auto& f : r.files) c.rows.push_back({f.value("name", ""), f.value("label", ""), -1, "file"});
    h.claims.push_back(finish_claim(std::move(c)));
  }
  h.claims.push_back(tally_claim(s.checks, "Targets", h.unit));
  for (const auto& m : h.models) {
    Claim c;
    c.kind = "model";
    c.subject = m.model;
    c.verdict = m.efficiency          ? (m.efficiency_void.empty() ? "measured" : "VOID")
                : m.strong_efficiency ? "strong scaling only"
                                      : "one device";
    c.word("unit", m.unit);
    if (m.best_per_gpu_ex_s) {
      c.num("best_per_gpu_ex_s", *m.best_per_gpu_ex_s, "ex/s").num("best_gpus", m.best_gpus, "count");
      c.word("best_setup", m.best_setup).word("best_file", m.best_file);
      c.word("best_warnings", fmt::format("{}", fmt::join(m.best_warnings, ", ")));
    }
    if (m.efficiency) {
      c.num("efficiency", *m.efficiency, "fraction").num("efficiency_gpus", m.efficiency_gpus, "count");
      c.word("efficiency_file", m.efficiency_file).word("efficiency_void", m.efficiency_void);
      if (m.trusted_efficiency)
        c.num("trusted_efficiency", *m.trusted_efficiency, "fraction").num("trusted_gpus", m.trusted_gpus, "count");
      if (m.exposed_comm) c.num("exposed_comm", *m.exposed_comm, "fraction");
    } else if (m.strong_efficiency) {
      c.num("strong_efficiency", *m.strong_efficiency, "fraction").num("strong_gpus", m.strong_gpus, "count");
      c.word("strong_file", m.strong_file);
    }
    if (m.usd_per_million) {
      c.num("usd_per_million", *m.usd_per_million, "USD").num("usd_gpus", m.usd_gpus, "count");
      c.word("usd_file", m.usd_file);
    }
    c.rows = m.rows;
    for (const auto& w : m.best_warnings) c.warnings.push_back(w.substr(0, w.find(':')));
    h.claims.push_back(finish_claim(std::move(c)));
  }
  if (h.rows > 0 || !h.repeats.empty()) {
    Claim c;
    c.kind = "data_quality";
    c.subject = "the rows of the scaling tables";
    c.verdict = h.noisy || h.voided || h.capped || h.few_samples ? "warnings" : "clean";
    c.num("rows", h.rows, "count")
        .num("noisy", h.noisy, "count")
        .num("few_samples", h.few_samples, "count")
        .num("capped", h.capped, "count")
        .num("voided", h.voided, "count")
        .num("shared", h.shared, "count");
    c.num("baseline_rows", h.baseline_rows, "count").num("baseline_noisy", h.baseline_noisy, "count");
    if (h.max_spread) c.num("max_spread", *h.max_spread, "fraction");
    c.word("baseline_noisy_rows", h.baseline_noisy_rows);
    c.word("worst_noisy", h.worst_noisy)
        .word("few_rows", h.few_rows)
        .word("capped_rows", h.capped_rows)
        .word("voided_rows", h.voided_rows)
        .word("shared_rows", h.shared_rows)
        .word("spread_what", h.spread_what);
    std::vector<std::string> reps;
    for (const auto& x : h.repeats) reps.push_back(x + ", counted once");
    c.word("repeats", fmt::format("{}", fmt::join(reps, "; ")));
    for (const auto& x : shown_rows(r)) {
      ClaimItem it;
      it.name = fmt::format("{} {} at {}", x.key->model, x.launch->file, count_of(x.world_size, "rank"));
      it.verdict = x.shared ? "shared" : "shown";
      it.numbers = {{"cv", x.facts->cv, "fraction"}, {"iterations", static_cast<double>(x.facts->iterations), "count"}};
      it.rows.push_back(row_of(*x.launch, "shown"));
      it.warnings = codes_of(*x.facts);
      c.items.push_back(std::move(it));
    }
    std::set<std::pair<std::string, int>> seen;
    for (const auto& w : r.weak)
      for (const auto& x : w.rows) {
        if (x.baseline_row < 0 || !seen.insert({x.baseline_source, x.baseline_row}).second) continue;
        ClaimItem it;
        it.name = fmt::format("{} {} no-DDP baseline", w.key.model, x.baseline_file);
        it.verdict = "baseline";
        it.numbers = {{"cv", x.baseline_facts.cv, "fraction"},
                      {"iterations", static_cast<double>(x.baseline_facts.iterations), "count"}};
        it.rows.push_back({x.baseline_source, x.baseline_file, x.baseline_row, "baseline"});
        it.warnings = codes_of(x.baseline_facts);
        c.items.push_back(std::move(it));
      }
    h.claims.push_back(finish_claim(std::move(c)));
  }
  for (const auto& n : h.not_measured) {
    Claim c;
    c.kind = "not_measured";
    c.verdict = "not measured";
    c.subject = n.section;
    c.word("section", n.section).word("why", n.why).word("command", n.command);
    for (const auto& f : r.files) c.rows.push_back({f.value("name", ""), f.value("label", ""), -1, "file"});
    h.claims.push_back(finish_claim(std::move(c)));
  }
}

// Whether a launch repeats another file's launch (a repeat the report names).
bool repeats_a_launch(const Report& r, const std::string& label) {
  for (const auto& x : r.repeats)
    if (x.file == label) return true;
  return false;
}

// The headline's file and launch counts: each file, less the repeated files and the files every
// row of which repeats another's (no row of its own in some table).
void count_launches(Headline& h, const Report& r, const std::vector<NamedResult>& files,
                    const std::vector<ShownRow>& rows) {
  h.files = static_cast<int>(r.files.size());
  h.launches = h.files - static_cast<int>(r.repeated_files.size());
  for (size_t i = 0; i < files.size() && i < r.files.size(); ++i) {  // files every row of which repeats another's
    const std::string label = file_label(i);
    if (std::find(r.repeated_files.begin(), r.repeated_files.end(), label) != r.repeated_files.end()) continue;
    if (!repeats_a_launch(r, label)) continue;
    bool own = false;  // a row of its own in some table
    for (const auto& x : rows)
      own = own || std::find(x.launch->all.begin(), x.launch->all.end(), label) != x.launch->all.end();
    if (!own) --h.launches;
  }
}

// Appends a version or device name to a list once ("" and "none" are no name).
void add_once(std::vector<std::string>& v, const std::string& x) {
  if (!x.empty() && x != "none" && std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// The scope named by the files that are no repeat: device types, torch, CUDA, NCCL and backend
// versions, first and last launch day, most ranks and hosts, and the unit ("rank" on CPUs alone).
void scope_of_files(Headline& h, const Report& r) {
  bool all_cpu = true;
  for (const auto& f : r.files) {
    if (std::find(r.repeated_files.begin(), r.repeated_files.end(), f.value("label", "")) != r.repeated_files.end())
      continue;
    const std::string dev = f.value("device", "");
    add_once(h.devices, dev);
    all_cpu = all_cpu && dev.rfind("CPU", 0) == 0;
    add_once(h.torch, f.value("torch", ""));
    add_once(h.cuda, f.value("cuda", ""));
    add_once(h.nccl, f.value("nccl", ""));
    add_once(h.backends, f.value("backend", ""));
    const std::string day = f.value("created_utc", "").substr(0, 10);
    if (day.size() == 10) {
      if (h.first_date.empty() || day < h.first_date) h.first_date = day;
      if (h.last_date.empty() || day > h.last_date) h.last_date = day;
    }
    h.ranks = std::max<int>(h.ranks, static_cast<int>(f.value("world_size", 0LL)));
    h.nodes = std::max<int>(h.nodes, static_cast<int>(f.value("hosts", 0ULL)));
  }
  h.unit = all_cpu && !h.devices.empty() ? "rank" : "GPU";
}

// The largest group of the tables: most devices in a row (the most ranks where no row has a
// device count) and most nodes.
void scope_sizes(Headline& h, const Report& r, const std::vector<ShownRow>& rows) {
  for (const auto& x : rows) h.gpus = std::max(h.gpus, x.devices);
  for (const auto& w : r.weak)
    for (const auto& x : w.rows) h.nodes = std::max(h.nodes, x.nodes);
  for (const auto& t : r.strong)
    for (const auto& x : t.rows) h.nodes = std::max(h.nodes, x.nodes);
  if (h.gpus == 0) h.gpus = h.ranks;
}

// The headline's tally of every check: PASS, FAIL, VOID and not-evaluated counts, with the reasons.
void count_verdicts(Headline& h, const ExecutiveSummary& s) {
  const TallyCounts counts = tally_counts(s.checks, h.unit);
  h.pass = counts.pass;
  h.fail = counts.fail;
  h.void_count = counts.void_count;
  h.not_evaluated = counts.not_evaluated;
  h.void_reasons = counts.void_reasons;
  h.not_evaluated_reasons = counts.not_evaluated_reasons;
}

// The models of the rows shown, in the order of the tables, and each one's fastest row.
struct ModelPicks {
  std::vector<std::string> models;
  std::map<std::string, const ShownRow*> best_row;
};

// Whether a row's per-GPU throughput stands: its self-check did not fail and no warning
// undermines ex_per_s_per_gpu.
bool clean_row(const ShownRow& x) {
  return x.facts->self_check_passed != false && !undermining_warning(x.facts->warnings, "ex_per_s_per_gpu");
}

// A model's fastest row on devices of its own by per-GPU ex/s, a clean row before any other
// (nullptr: none).
const ShownRow* best_shown_row(const std::vector<ShownRow>& rows, const std::string& m) {
  const ShownRow* best = nullptr;
  for (const auto& x : rows) {
    if (x.key->model != m || x.shared) continue;
    if (!best || (clean_row(x) && !clean_row(*best)) ||
        (clean_row(x) == clean_row(*best) && x.per_gpu_ex_s > best->per_gpu_ex_s))
      best = &x;
  }
  return best;
}

// A model's best-row fields: unit, per-GPU ex/s, setup, file, device count, warnings (noisy with
// its cv in %, few_samples with its iterations) and the row itself.
void set_best(HeadlineModel& hm, const ShownRow* best) {
  hm.unit = unit_word(*best->key);
  hm.best_per_gpu_ex_s = best->per_gpu_ex_s;
  hm.best_setup = best->setup;
  hm.best_file = best->launch->file;
  hm.best_gpus = best->devices;
  for (const auto& w : best->facts->warnings) {
    if (w.code == "noisy") hm.best_warnings.push_back(fmt::format("noisy: cv {:.1f}%", 100 * best->facts->cv));
    else if (w.code == "few_samples")
      hm.best_warnings.push_back(fmt::format("few_samples: {} iterations", best->facts->iterations));
    else hm.best_warnings.push_back(w.code);
  }
  add_rows(hm.rows, *best->launch, "best");
}

// Efficiency at the largest size of the model's target tables (weak scaling, a fraction), its
// exposed communication, and where it is voided the last smaller size that is not. False: no
// such table above one device.
bool set_weak_efficiency(HeadlineModel& hm, const Report& r, const std::string& m) {
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
  if (!er) return false;
  hm.efficiency = er->efficiency;
  hm.efficiency_gpus = er->devices;
  hm.efficiency_void = voided(efficiency_rows(*et, *er), "weak_scaling_efficiency");
  hm.efficiency_file = efficiency_from(*et, *er);
  hm.efficiency_device = et->key.device;
  hm.exposed_comm = er->exposed_comm;
  for (auto x : efficiency_claim_rows(*et, *er)) {
    x.role = x.role == "measured" ? "efficiency" : "efficiency " + x.role;
    hm.rows.push_back(x);
  }
  if (!hm.efficiency_void.empty()) {
    const WeakRow* trusted_row = nullptr;
    for (const auto& x : et->rows)
      if (x.devices > 1 && !x.shared_gpu && x.world_size < er->world_size &&
          voided(efficiency_rows(*et, x), "weak_scaling_efficiency").empty()) {
        hm.trusted_efficiency = x.efficiency;
        hm.trusted_gpus = x.devices;
        trusted_row = &x;
      }
    if (trusted_row)
      for (auto x : efficiency_claim_rows(*et, *trusted_row)) {
        x.role = x.role == "measured" ? "trusted efficiency" : "trusted efficiency " + x.role;
        hm.rows.push_back(x);
      }
  }
  return true;
}

// No weak-scaling table above one device: a strong-scaling one's efficiency (a fraction) at its
// largest size, with its file and rows.
void set_strong_efficiency(HeadlineModel& hm, const Report& r, const std::string& m) {
  const StrongTable* st = nullptr;
  const StrongRow* sr = nullptr;
  for (const auto& t : r.strong) {
    if (t.key.model != m) continue;
    for (const auto& x : t.rows)
      if (x.devices > 1 && !x.shared_gpu && (!sr || x.devices > sr->devices)) st = &t, sr = &x;
  }
  if (sr) {
    hm.strong_efficiency = sr->efficiency;
    hm.strong_gpus = sr->devices;
    hm.strong_file = launches(sr->launch.file, st->rows.front().launch.file);
    add_rows(hm.rows, sr->launch, "strong efficiency");
    add_rows(hm.rows, st->rows.front().launch, "strong efficiency baseline");
  }
}

// A model's cost per million examples (USD) at the cheapest row of its cost table (the last
// such table), with its rank count, file and row.
void set_cheapest(HeadlineModel& hm, const Report& r, const std::string& m) {
  for (const auto& c : r.cost)
    if (c.model == m && !c.rows.empty()) {
      const CostRow& x = c.rows[c.best];
      hm.usd_per_million = x.usd_per_million;
      hm.usd_gpus = x.world_size;
      hm.usd_file = x.file;
      hm.rows.push_back({x.source, x.file, x.row, "cheapest"});
    }
}

// The headline's line per model (h.models): fastest row, scaling efficiency and cost, each
// naming its device type where the files have several. Returns the models and their best rows.
ModelPicks headline_models(Headline& h, const Report& r, const std::vector<ShownRow>& rows) {
  ModelPicks p;
  for (const auto& x : rows)
    if (std::find(p.models.begin(), p.models.end(), x.key->model) == p.models.end()) p.models.push_back(x.key->model);
  for (const auto& m : p.models) {
    HeadlineModel hm;
    hm.model = m;
    const ShownRow* best = best_shown_row(rows, m);
    if (best) {
      set_best(hm, best);
      p.best_row[m] = best;
    }
    if (!set_weak_efficiency(hm, r, m)) set_strong_efficiency(hm, r, m);
    set_cheapest(hm, r, m);
    h.models.push_back(std::move(hm));
  }
  if (h.devices.size() > 1)  // several device types: each number names its own
    for (size_t i = 0; i < h.models.size(); ++i) {
      HeadlineModel& hm = h.models[i];
      if (p.best_row.count(hm.model)) hm.best_setup += ", " + p.best_row.at(hm.model)->key->device;
      if (!hm.efficiency_device.empty()) hm.efficiency_file = hm.efficiency_device + ", " + hm.efficiency_file;
    }
  return p;
}

// Data quality of the rows shown: counts of the rows, few-sample, noisy, capped, voided and
// shared ones, the noisiest row (cv in %), the largest spread of repeats, and each kind's rows as text.
void shown_row_quality(Headline& h, const std::vector<ShownRow>& rows) {
  double worst_cv = 0;
  std::vector<std::string> capped, voided_rows, shared_rows, few_rows;
  for (const auto& x : rows) {
    ++h.rows;
    const auto& warnings = x.facts->warnings;
    if (std::any_of(warnings.begin(), warnings.end(), [](const RowWarning& w) { return w.code == "few_samples"; })) {
      ++h.few_samples;
      const std::string knobs = x.key->knob_label();  // what tells a sweep's rows of one size apart
      few_rows.push_back(fmt::format("{} {} at {}{}: {}", x.key->model, x.launch->file,
                                     count_of(x.world_size, x.devices == x.world_size ? unit_word(*x.key) : "rank"),
                                     knobs.empty() ? "" : " (" + knobs + ")", x.facts->iterations));
    }
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
  h.few_rows = fmt::format("{}", fmt::join(few_rows, "; "));
  h.voided_rows = fmt::format("{}", fmt::join(voided_rows, "; "));
  h.shared_rows = fmt::format("{}", fmt::join(shared_rows, "; "));
}

// The no-DDP baselines: not rows of the tables, but every DDP overhead (and a no-DDP
// efficiency) rests on one, and a target lists its warnings. Counts them and the noisy ones,
// and names the noisiest (cv in %).
void baseline_quality(Headline& h, const Report& r) {
  std::set<std::pair<std::string, int>> seen;
  double worst = -1;
  for (const auto& w : r.weak)
    for (const auto& x : w.rows) {
      if (x.baseline_row < 0 || !seen.insert({x.baseline_source, x.baseline_row}).second) continue;
      ++h.baseline_rows;
      const auto& ws = x.baseline_facts.warnings;
      if (std::any_of(ws.begin(), ws.end(), [](const RowWarning& v) { return v.code == "noisy"; })) {
        ++h.baseline_noisy;
        if (x.baseline_facts.cv > worst) {
          worst = x.baseline_facts.cv;
          h.baseline_noisy_rows = fmt::format("{} {}, cv {:.1f}%", w.key.model, x.baseline_file, 100 * worst);
        }
      }
    }
}

// How many weak-scaling tables measure a model.
size_t weak_tables_of(const Report& r, const std::string& model) {
  size_t n = 0;
  for (const auto& w : r.weak)
    if (w.key.model == model) ++n;
  return n;
}

// "Scaling beyond one GPU" not measured (every table ran on one device): the command that runs
// the model measured in the most tables, at its fastest setup, on 8 GPUs (4 ranks on CPUs).
void scaling_gap(Headline& h, const Report& r, const std::vector<ShownRow>& rows, const ModelPicks& p) {
  // The model measured in the most tables, at its fastest setup.
  std::string m = p.models.front();
  size_t most = 0;
  for (const auto& name : p.models) {
    const size_t n = weak_tables_of(r, name);
    if (n > most) most = n, m = name;
  }
  const ShownRow* b = p.best_row.count(m) ? p.best_row.at(m) : &rows.front();
  const bool cpu = h.unit == "rank";
  const int n = cpu ? 4 : 8;
  h.not_measured.push_back(
      {"Scaling beyond one " + h.unit, fmt::format("every table ran on 1 {}", h.unit),
       launch_command("run", " " + run_flags(*b->key, b->key->batch_per_rank), n, 1, !cpu) +
           " --breakdown --json weak.json"});
}

// "Where the time goes" not measured: the command that reruns the largest multi-device row of a
// target table without a breakdown, with one.
void breakdown_gap(Headline& h, const Report& r) {
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

// "Cost" not measured (no GPU-hour price): the report command with --gpu-hour-cost.
void cost_gap(Headline& h, const Report& r) {
  std::vector<std::string> names;
  for (const auto& f : r.files) names.push_back(f.value("name", ""));
  h.not_measured.push_back(
      {"Cost", "no GPU-hour price was given",
       fmt::format("ddpbench report {} --gpu-hour-cost <USD per {}-hour>",
                   names.size() <= 3 ? fmt::format("{}", fmt::join(names, " ")) : std::string("<the same files>"),
                   h.unit)});
}

// "Communication" not measured (rows, but no collective or pair-bandwidth result): the comm
// command at the largest size, or across nodes the pair test.
void comm_gap(Headline& h, const Report& r, const std::vector<ShownRow>& rows, bool scaled) {
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
}

// The sections not measured (h.not_measured), each with the command that fills it: scaling or
// the per-step breakdown, then cost, then communication.
void not_measured_sections(Headline& h, const Report& r, const std::vector<ShownRow>& rows, const ModelPicks& p) {
  const bool scaled =
      std::any_of(rows.begin(), rows.end(), [](const ShownRow& x) { return x.devices > 1 && !x.shared; });
  if (!rows.empty() && !scaled) scaling_gap(h, r, rows, p);
  else breakdown_gap(h, r);
  if (!rows.empty() && r.cost.empty()) cost_gap(h, r);
  comm_gap(h, r, rows, scaled);
}

Headline build_headline(const Report& r, const std::vector<NamedResult>& files, const ExecutiveSummary& s) {
  Headline h;
  // Scope: the files (a repeat counts once), the largest group, devices, versions and dates.
  const std::vector<ShownRow> rows = shown_rows(r);
  count_launches(h, r, files, rows);
  scope_of_files(h, r);
  scope_sizes(h, r, rows);

  // Verdicts: every check (the two scaling targets of a table measured on one device are checks
  // too, "not measured (1 GPU only)"), so every tally of the report counts the same checks.
  count_verdicts(h, s);

  // One line per model, in the order of the tables.
  const ModelPicks picks = headline_models(h, r, rows);

  // Data quality of the rows shown, then of the no-DDP baselines, then the repeated launches.
  shown_row_quality(h, rows);
  baseline_quality(h, r);
  for (const auto& x : r.repeats) {
    ++h.repeated_launches;
    h.repeats.push_back(fmt::format("{} repeats {} ({})", x.file, x.of, x.why));
  }

  // Sections not measured, with the command that fills each.
  not_measured_sections(h, r, rows, picks);
  headline_claims(h, r, s);
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

Claim tally_claim(const std::vector<SummaryCheck>& checks, const std::string& lead, const std::string& unit) {
  const TallyCounts t = tally_counts(checks, unit);
  Claim c;
  c.kind = lead == "Targets" ? "tally" : "validate_tally";
  c.subject = lead == "Targets" ? "the report's targets" : "the validation";
  c.verdict = t.fail ? "FAIL" : t.void_count ? "VOID" : t.pass ? "PASS" : "not evaluated";
  c.word("lead", lead);
  if (lead != "Targets") c.word("end", "none");
  c.num("pass", t.pass, "count").num("fail", t.fail, "count").num("void", t.void_count, "count");
  c.num("not_evaluated", t.not_evaluated, "count");
  c.word("not_evaluated_reasons", fmt::format("{}", fmt::join(t.not_evaluated_reasons, "; ")));
  c.items = tally_items(checks);
  return finish_claim(std::move(c));
}

std::string verdict_class(const std::string& status) {
  for (const char* v : {"PASS", "FAIL", "VOID"})
    if (status.rfind(v, 0) == 0) return v;
  return "not evaluated";
}

std::vector<std::string> headline_lines(const Headline& h) {
  std::vector<std::string> out;
  for (const auto& c : h.claims) out.push_back(c.text);
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
                      {"usd_file", m.usd_file},
                      {"best_warnings", m.best_warnings}});
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
            {"few_samples", h.few_samples},
            {"few_rows", h.few_rows},
            {"capped", h.capped},
            {"capped_rows", h.capped_rows},
            {"voided", h.voided},
            {"voided_rows", h.voided_rows},
            {"shared", h.shared},
            {"shared_rows", h.shared_rows},
            {"baseline_rows", h.baseline_rows},
            {"baseline_noisy", h.baseline_noisy},
            {"baseline_noisy_rows", h.baseline_noisy_rows},
            {"max_spread", opt(h.max_spread)},
            {"spread_what", h.spread_what},
            {"repeats", h.repeats}}},
          {"not_measured", missing},
          {"lines", headline_lines(h)},
          {"claims", claims_json(h.claims)}};
}

ExecutiveSummary executive_summary(const Report& r, const std::vector<NamedResult>& files, const SummaryTargets& t) {
  ExecutiveSummary s;
  scaling_targets(r, t, s);
  pinned_targets(files, t, s);
  for (const auto& c : t.external) s.checks.push_back(c);
  world_size_rule(r, t, s);
  knob_rule(r, s);
  setup_rule(r, s);
  memory_rule(r, s);
  cost_rule(r, s);
  node_rule(r, s);
  s.headline = build_headline(r, files, s);
  return s;
}

std::vector<Claim> ExecutiveSummary::claims() const {
  std::vector<Claim> out = headline.claims;
  for (const auto& c : checks) out.push_back(c.claim);
  for (const auto& x : recommendations) out.push_back(x.claim);
  return out;
}

}  // namespace ddpbench
