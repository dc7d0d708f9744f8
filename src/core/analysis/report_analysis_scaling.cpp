// `ddpbench report`'s analysis of scaling: no-DDP baselines and DDP overhead, weak and strong
// scaling tables with their breakdowns, the comparison across devices or files, cost and the
// optimization impact of DDP's knobs. Torch-free.
#include "core/analysis/report_analysis_internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "core/result/row_metrics.hpp"
#include "core/stats/gpu_peaks.hpp"

namespace ddpbench::report_analysis_internal {

namespace {

// The fields a no-DDP baseline shares with a DDP row: all but the group size and what
// only DDP has (its batch per rank is the row's, so strong scaling finds one per size).
FieldSet baseline_fields() {
  // The strategy too: a zero2 or fsdp row's no-DDP baseline is the plain one ("ddp", ddp false).
  return all_fields() &
         ~fields({ConfigField::world_size, ConfigField::global_batch, ConfigField::ddp, ConfigField::strategy}) &
         ~ddp_only_fields();
}

// Per-device examples per second of a row at its p50: examples of one optimizer step over all
// its ranks / p50 / its distinct devices (a no-DDP row: rank 0's series on its own device).
double per_device_ex_s(const Point& p) {
  const int ranks = p.key.ddp ? p.key.world_size : 1;
  const int devices = p.key.ddp ? p.devices : 1;
  return examples_per_step(p.key) * ranks / devices / p.summary.p50_s;
}

std::optional<double> ddp_overhead(const std::vector<Point>& all, const Point& p) {
  const Point* q = no_ddp_baseline(all, p);
  if (!q) return std::nullopt;
  return ddp_overhead_by_throughput(per_device_ex_s(p), per_device_ex_s(*q));
}

// Ranks that shared a device: the row measures sharing, not scaling.
bool shares_device(const Point& p) { return p.devices < p.key.world_size; }

// The peak a row's MFU divides by: the row's recorded basis and TFLOP/s, else mfu_basis of its
// precision and the math in effect (files of schema < 1.3 record the TFLOP/s alone). The unit is
// the one the recorded basis names; only without one is it the math's.
MfuPeak mfu_peak_of(const Point& p) {
  MfuPeak m;
  m.tflops = p.facts.peak_tflops;
  m.basis = p.facts.peak_basis;
  const ConfigKey& k = p.key;
  std::optional<PeakBasis> b;
  if (k.precision == "fp16" || k.precision == "bf16") b = mfu_basis(k.precision, false, false);
  else if (k.math == "no-tf32") b = mfu_basis("fp32", false, false);
  else if (k.math == "cudnn-tf32") b = mfu_basis("fp32", true, false);
  else if (k.math == "tf32") b = mfu_basis("tf32", true, true);
  else if (k.math == "cublas-tf32") b = mfu_basis("fp32", false, true);
  // The unit the recorded basis names ("FP32 peak (TF32 off)"), else the one the math implies.
  for (const char* u : {"FP32", "TF32", "FP16", "BF16"})
    if (m.basis.rfind(u, 0) == 0) m.unit = u;
  if (b && m.unit.empty() && m.basis.empty())
    for (const char c : b->unit) m.unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (b && m.basis.empty()) m.basis = b->label;
  return m;
}

// The overhead split: {exposed comm, overhead - exposed comm}, each absent when unknown. Where
// ranks shared a device the overhead is by throughput and holds the sharing: no split.
std::pair<std::optional<double>, std::optional<double>> split_overhead(const std::optional<double>& overhead,
                                                                       const Point& p) {
  const auto exposed = exposed_fraction(p);
  if (!overhead || !exposed || shares_device(p)) return {exposed, std::nullopt};
  return {exposed, *overhead - *exposed};
}

// The breakdown table of a scaling group: the no-DDP baseline of its first row, then its
// rows; empty when none of them has a breakdown.
std::vector<BreakdownRow> breakdown_rows(const std::vector<Point>& all, const std::vector<const Point*>& rows) {
  std::vector<BreakdownRow> out;
  const auto of = [](const Point& p) {
    BreakdownRow b = p.breakdown;
    b.file = p.launch.file;
    return b;
  };
  if (const Point* nd = no_ddp_baseline(all, *rows.front())) out.push_back(of(*nd));
  for (const Point* p : rows) out.push_back(of(*p));
  if (std::none_of(out.begin(), out.end(), [](const BreakdownRow& b) { return b.mean_s.has_value(); })) out.clear();
  return out;
}

}  // namespace

// The no-DDP row of the same configuration: from the same file when there is one (the
// same launch), else from any file measuring it.
const Point* no_ddp_baseline(const std::vector<Point>& all, const Point& p) {
  const Point* found = nullptr;
  for (const auto& q : all) {
    if (q.key.ddp || !same_on(q.key, p.key, baseline_fields())) continue;
    if (q.source == p.source) return &q;
    if (!found) found = &q;
  }
  return found;
}

// The label of the file whose no-DDP row ddp_overhead uses for `p`; "" when none.
std::string baseline_file(const std::vector<Point>& all, const Point& p) {
  const Point* q = no_ddp_baseline(all, p);
  return q ? q->launch.file : "";
}

// Exposed communication as a fraction of the step, both from the row's breakdown (mean over
// ranks): exposed_comm_s / step_s.
std::optional<double> exposed_fraction(const Point& p) { return p.facts.metric("exposed_comm"); }

// DDP rows grouped on `on`, each group sorted by world size, groups by their first key.
std::vector<std::vector<const Point*>> ddp_groups(const std::vector<Point>& pts, const std::string& scaling,
                                                  const FieldSet& on) {
  std::vector<std::vector<const Point*>> groups;
  for (const auto& p : pts) {
    if (!p.key.ddp || p.key.scaling != scaling) continue;
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& grp) { return same_on(grp.front()->key, p.key, on); });
    if (g == groups.end()) groups.push_back({&p});
    else g->push_back(&p);
  }
  for (auto& g : groups)
    std::sort(g.begin(), g.end(), [](const Point* a, const Point* b) { return a->key.world_size < b->key.world_size; });
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front()->key < b.front()->key; });
  return groups;
}

WeakTable weak_table(const std::vector<Point>& all, const std::vector<const Point*>& rows) {
  WeakTable t;
  const Point* base = rows.front();
  t.key = base->key;
  const std::string unit = unit_word(t.key);
  if (const Point* nd = no_ddp_baseline(all, *base)) t.no_ddp_p50_s = nd->summary.p50_s;
  if (base->key.world_size == 1) {
    t.baseline_per_gpu_ex_s = examples_per_step(base->key) / base->summary.p50_s;  // one rank, one device
    t.baseline = "1-" + unit + " DDP";
    t.baseline_kind = WeakTable::Baseline::one_rank;
  } else if (t.no_ddp_p50_s) {
    t.baseline_per_gpu_ex_s = examples_per_step(t.key) / *t.no_ddp_p50_s;
    t.baseline = "no-DDP";
    t.baseline_kind = WeakTable::Baseline::no_ddp;
  } else {
    t.baseline_per_gpu_ex_s = examples_per_step(base->key) * base->key.world_size / base->devices / base->summary.p50_s;
    t.baseline = fmt::format("{}-{} DDP", base->devices, unit);
    t.baseline_kind = WeakTable::Baseline::smallest_group;
  }
  for (const Point* p : rows) {
    WeakRow w;
    w.world_size = p->key.world_size;
    w.nodes = p->nodes;
    w.devices = p->devices;
    w.shared_gpu = shares_device(*p);
    w.aggregate_ex_s = examples_per_step(p->key) * p->key.world_size / p->summary.p50_s;
    w.per_gpu_ex_s = w.aggregate_ex_s / p->devices;
    w.efficiency = w.per_gpu_ex_s / t.baseline_per_gpu_ex_s;
    w.launch = p->launch;
    w.baseline_file = baseline_file(all, *p);
    if (const Point* nd = no_ddp_baseline(all, *p)) {
      w.baseline_source = nd->launch.source;
      w.baseline_row = nd->launch.row;
      w.baseline_ex_s = per_device_ex_s(*nd);
      w.baseline_facts = nd->facts;
    }
    w.ddp_overhead = ddp_overhead(all, *p);
    std::tie(w.exposed_comm, w.other_overhead) = split_overhead(w.ddp_overhead, *p);
    w.tflops_per_gpu = p->tflops_per_gpu;
    w.mfu = p->mfu;
    if (w.mfu) w.mfu_peak = mfu_peak_of(*p);
    w.p5_s = p->p5_s;
    w.p50_s = p->summary.p50_s;
    w.p95_s = p->summary.p95_s;
    w.mean_s = duration_step_s(p->summary);
    w.facts = p->facts;
    t.rows.push_back(std::move(w));
  }
  t.breakdown = breakdown_rows(all, rows);
  return t;
}

StrongTable strong_table(const std::vector<Point>& all, const std::vector<const Point*>& rows) {
  StrongTable t;
  const Point* base = rows.front();  // t(1) when the 1-GPU row exists (see METHODOLOGY.md)
  t.key = base->key;
  t.global_batch = base->key.global_batch;
  for (const Point* p : rows) {
    StrongRow s;
    s.world_size = p->key.world_size;
    s.nodes = p->nodes;
    s.devices = p->devices;
    s.shared_gpu = shares_device(*p);
    s.batch_per_rank = p->key.batch_per_rank;
    s.step_s = p->summary.p50_s;
    s.speedup = base->summary.p50_s / p->summary.p50_s * base->devices;
    s.efficiency = s.speedup / p->devices;
    s.aggregate_ex_s = static_cast<double>(p->key.global_batch) * p->key.grad_accum / p->summary.p50_s;
    s.launch = p->launch;
    s.baseline_file = baseline_file(all, *p);
    s.ddp_overhead = ddp_overhead(all, *p);
    std::tie(s.exposed_comm, s.other_overhead) = split_overhead(s.ddp_overhead, *p);
    s.p5_s = p->p5_s;
    s.p95_s = p->summary.p95_s;
    s.mean_s = duration_step_s(p->summary);
    s.facts = p->facts;
    t.rows.push_back(std::move(s));
  }
  t.breakdown = breakdown_rows(all, rows);
  return t;
}

// By device type when the files hold several, else by file: per-GPU ex/s of every
// configuration (all ConfigKey fields but the device) that at least two groups measured.
Comparison comparison(const std::vector<Point>& all, const std::vector<Point>& best) {
  Comparison c;
  if (all.empty()) return c;  // collective results only (`ddpbench comm` files)
  std::set<std::string> devices;
  for (const auto& p : all) devices.insert(p.key.device);
  const bool by_device = devices.size() > 1;
  c.by = by_device ? "device type" : "file";

  const std::vector<Point>& source = by_device ? best : all;
  std::vector<std::string> groups;
  std::map<ConfigKey, std::vector<std::optional<double>>> cells;
  for (const auto& p : source) {
    if (!p.key.ddp) continue;
    const std::string g = by_device ? p.key.device : p.launch.file;  // files by their label (the appendix lists them)
    auto gi = static_cast<size_t>(std::find(groups.begin(), groups.end(), g) - groups.begin());
    if (gi == groups.size()) groups.push_back(g);
    ConfigKey k = p.key;
    k.device.clear();
    auto& v = cells[k];
    v.resize(std::max(v.size(), gi + 1));
    if (!v[gi]) v[gi] = examples_per_step(p.key) / p.summary.p50_s;
  }
  std::vector<bool> used(groups.size(), false);
  for (auto& [key, v] : cells) {
    v.resize(groups.size());
    if (std::count_if(v.begin(), v.end(), [](const auto& x) { return x.has_value(); }) < 2) continue;
    for (size_t g = 0; g < v.size(); ++g) used[g] = used[g] || v[g].has_value();
    c.rows.push_back({key, v, {}});
  }
  // Keep the groups that appear in some row; ratios are to the first group with a value.
  for (size_t g = 0; g < used.size(); ++g)
    if (used[g]) c.groups.push_back(groups[g]);
  // "GPU" unless a CPU takes part (by file, all files share the one device).
  const auto is_cpu = [](const std::string& d) { return d.rfind("CPU", 0) == 0; };
  c.unit =
      (by_device ? std::any_of(c.groups.begin(), c.groups.end(), is_cpu) : is_cpu(*devices.begin())) ? "rank" : "GPU";
  for (auto& row : c.rows) {
    std::vector<std::optional<double>> kept;
    for (size_t g = 0; g < used.size(); ++g)
      if (used[g]) kept.push_back(row.per_gpu_ex_s[g]);
    row.per_gpu_ex_s = kept;
    const auto first = std::find_if(kept.begin(), kept.end(), [](const auto& x) { return x.has_value(); });
    for (const auto& x : kept) row.ratio.push_back(x ? std::optional<double>(*x / **first) : std::nullopt);
  }
  return c;
}

// One cost table for a model's scaling rows: each priced at its mean step time (the statistic of
// epoch time, so epochs x epoch time is the time priced); rows whose ranks shared a device are
// named and not priced.
CostTable cost_table(const std::string& model, const std::vector<CostPoint>& pts, const ReportOptions& opts) {
  const double price = *opts.gpu_hour_usd;
  CostTable t;
  t.model = model;
  t.gpu_hour_usd = price;
  t.epochs = opts.epochs;
  t.dataset_size = opts.dataset_size;
  if (!pts.empty()) t.key = pts.front().key;
  for (const auto& p : pts) {
    const std::string u = unit_word(p.key);
    if (p.shared) {
      t.not_priced.push_back(fmt::format("{}: {} ranks on {} {}{} ({})", p.setup, p.ranks, p.devices, u,
                                         p.devices == 1 ? "" : "s", p.launch.file));
      continue;
    }
    const int n = p.devices;
    const double steps = static_cast<double>(
        steps_per_epoch(opts.dataset_size, static_cast<long long>(std::llround(p.examples_per_step))));
    CostRow c;
    c.setup = p.setup;
    c.key = p.key;
    c.world_size = n;
    c.ranks = p.ranks;
    c.file = p.launch.file;
    c.source = p.launch.source;
    c.row = p.launch.row;
    c.mean_step_s = p.mean_step_s;
    c.ex_s_mean_step = p.examples_per_step / p.mean_step_s;
    c.usd_per_million = price * n / 3600.0 * 1e6 / c.ex_s_mean_step;
    c.hours = opts.epochs * steps * p.mean_step_s / 3600.0;
    c.usd = c.hours * n * price;
    t.rows.push_back(c);
  }
  if (t.rows.empty()) return t;
  for (size_t i = 1; i < t.rows.size(); ++i) {
    const CostRow& r = t.rows[i];
    const CostRow& b = t.rows[t.best];
    if (r.usd_per_million < b.usd_per_million || (r.usd_per_million == b.usd_per_million && r.world_size < b.world_size))
      t.best = i;
  }
  for (auto& r : t.rows) r.relative = t.rows[t.best].usd_per_million / r.usd_per_million;
  return t;
}

// A cluster benchmark report's "Communication Optimization Impact", from measured rows: the DDP rows (world size > 1)
// that share every field but the DDP knobs, against the one among them with every knob at its default. Only groups
// holding a variant make a table.
std::vector<ImpactTable> impact_tables(const std::vector<Point>& pts) {
  std::map<ConfigKey, std::vector<const Point*>> groups;
  for (const auto& p : pts)
    if (p.key.ddp && p.key.world_size > 1) groups[p.key.with_default_knobs()].push_back(&p);
  std::vector<ImpactTable> out;
  for (auto& [plain, rows] : groups) {
    std::sort(rows.begin(), rows.end(), [](const Point* a, const Point* b) { return a->key < b->key; });
    const auto it =
        std::find_if(rows.begin(), rows.end(), [&plain = plain](const Point* p) { return p->key == plain; });
    const Point* base = it == rows.end() ? nullptr : *it;
    if (rows.size() == (base ? 1u : 0u)) continue;  // the plain run alone: nothing to compare
    const auto aggregate = [](const Point* p) {
      return p->key.world_size * examples_per_step(p->key) / p->summary.p50_s;
    };
    const auto exposed = [](const Point* p) -> std::optional<double> {
      if (!p->breakdown.mean_s) return std::nullopt;
      return (*p->breakdown.mean_s)[static_cast<size_t>(Phase::exposed_comm)];
    };
    const auto line = [&](const Point* p) {
      ImpactRow r;
      r.baseline = p == base;
      r.technique = r.baseline ? "baseline (DDP defaults)" : p->key.knob_label();
      r.launch = p->launch;
      r.facts = p->facts;
      r.step_s = p->summary.p50_s;
      r.aggregate_ex_s = aggregate(p);
      r.exposed_comm_s = exposed(p);
      if (base) {
        r.speedup = r.aggregate_ex_s / aggregate(base);
        const auto e0 = exposed(base);
        if (r.exposed_comm_s && e0) {
          r.exposed_change_s = *r.exposed_comm_s - *e0;
          if (*e0 > 0) r.exposed_change = *r.exposed_change_s / *e0;
        }
      }
      return r;
    };
    ImpactTable t;
    t.key = plain;
    t.has_baseline = base != nullptr;
    if (base) t.rows.push_back(line(base));
    for (const Point* p : rows)
      if (p != base) t.rows.push_back(line(p));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace ddpbench::report_analysis_internal
