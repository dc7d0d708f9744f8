#include "core/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "core/bench_table.hpp"
#include "core/errors.hpp"
#include "core/json_util.hpp"

namespace ddpbench {
namespace {

// One measured row with what identifies it across files.
struct Point {
  std::string source;  // file it came from
  ConfigKey key;
  int nodes = 1;
  Summary summary;     // as written by `run` (pooled over ranks)
  std::optional<double> tflops_per_gpu, mfu;  // from the row's compute section, when recorded
  double p5_s = 0;     // 5th percentile of the pooled raw samples (p50 when none)
  RowFacts facts;
};

// An integer environment field for display; 0 when absent or not an integer.
long long safe_int(const nlohmann::json& e, const char* key) {
  try {
    return json_int_or<long long>(e, key, 0);
  } catch (const std::invalid_argument&) {
    return 0;
  }
}

// Flattens every row of every file into Points. Rows that cannot be reported (no time,
// absurd sizes; the bounds keep batch x world size far inside long long) are skipped.
std::vector<Point> collect_points(const std::vector<NamedResult>& files) {
  std::vector<Point> pts;
  for (const auto& nf : files) {
    for (const auto& r : nf.file.results) {
      if (!(r.summary.p50_s > 0) || r.world_size < 1 || r.world_size > 10'000'000 || r.batch_per_rank < 1 ||
          r.batch_per_rank > 1'000'000'000LL)
        continue;
      Point p;
      p.source = nf.name;
      p.key = ConfigKey::of(nf.file, r);
      p.nodes = r.nodes;
      p.summary = r.summary;
      std::vector<double> pooled;
      for (const auto& rk : r.ranks) pooled.insert(pooled.end(), rk.samples_s.begin(), rk.samples_s.end());
      p.p5_s = pooled.empty() ? r.summary.p50_s : percentile(pooled, 5);
      p.tflops_per_gpu = json_num_opt(r.compute, "achieved_tflops_per_gpu");
      p.mfu = json_num_opt(r.compute, "mfu");
      p.facts = RowFacts::of(r);
      pts.push_back(std::move(p));
    }
  }
  return pts;
}

// Relative width of a row's 95% CI of the mean; infinite when it has none (one iteration).
double relative_ci(const Summary& s) {
  return s.ci95_s > 0 && s.mean_s > 0 ? s.ci95_s / s.mean_s : std::numeric_limits<double>::infinity();
}

// The same configuration measured in several files: keep the most precise measurement,
// the narrowest relative CI (not the most samples: under --iters auto the launch that ran
// longest is the noisiest one); the first on a tie.
std::vector<Point> best_points(const std::vector<Point>& pts) {
  std::map<ConfigKey, size_t> best;
  std::vector<Point> out;
  for (const auto& p : pts) {
    const auto it = best.find(p.key);
    if (it == best.end()) {
      best.emplace(p.key, out.size());
      out.push_back(p);
    } else if (relative_ci(p.summary) < relative_ci(out[it->second].summary)) {
      out[it->second] = p;
    }
  }
  return out;
}

// The fields a no-DDP baseline shares with a DDP row: all but the group size and what
// only DDP has (its batch per rank is the row's, so strong scaling finds one per size).
FieldSet baseline_fields() {
  return all_fields() & ~fields({ConfigField::world_size, ConfigField::global_batch, ConfigField::ddp}) &
         ~ddp_only_fields();
}

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

std::optional<double> ddp_overhead(const std::vector<Point>& all, const Point& p) {
  const Point* q = no_ddp_baseline(all, p);
  if (!q) return std::nullopt;
  return (p.summary.p50_s - q->summary.p50_s) / p.summary.p50_s;
}

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
    t.baseline_per_gpu_ex_s = base->key.batch_per_rank / base->summary.p50_s;
    t.baseline = "1-" + unit + " DDP";
  } else if (t.no_ddp_p50_s) {
    t.baseline_per_gpu_ex_s = t.key.batch_per_rank / *t.no_ddp_p50_s;
    t.baseline = "no-DDP";
  } else {
    t.baseline_per_gpu_ex_s = base->key.batch_per_rank / base->summary.p50_s;
    t.baseline = fmt::format("{}-{} DDP", base->key.world_size, unit);
  }
  for (const Point* p : rows) {
    WeakRow w;
    w.world_size = p->key.world_size;
    w.nodes = p->nodes;
    w.per_gpu_ex_s = p->key.batch_per_rank / p->summary.p50_s;
    w.aggregate_ex_s = w.per_gpu_ex_s * p->key.world_size;
    w.efficiency = w.per_gpu_ex_s / t.baseline_per_gpu_ex_s;
    w.ddp_overhead = ddp_overhead(all, *p);
    w.tflops_per_gpu = p->tflops_per_gpu;
    w.mfu = p->mfu;
    w.p5_s = p->p5_s;
    w.p50_s = p->summary.p50_s;
    w.p95_s = p->summary.p95_s;
    w.facts = p->facts;
    t.rows.push_back(std::move(w));
  }
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
    s.batch_per_rank = p->key.batch_per_rank;
    s.step_s = p->summary.p50_s;
    s.speedup = base->summary.p50_s / p->summary.p50_s * base->key.world_size;
    s.efficiency = s.speedup / p->key.world_size;
    s.aggregate_ex_s = static_cast<double>(p->key.global_batch) / p->summary.p50_s;
    s.ddp_overhead = ddp_overhead(all, *p);
    s.p5_s = p->p5_s;
    s.p95_s = p->summary.p95_s;
    s.facts = p->facts;
    t.rows.push_back(std::move(s));
  }
  return t;
}

// By device type when the files hold several, else by file: per-GPU ex/s of every
// configuration (all ConfigKey fields but the device) that at least two groups measured.
Comparison comparison(const std::vector<Point>& all, const std::vector<Point>& best) {
  Comparison c;
  std::set<std::string> devices;
  for (const auto& p : all) devices.insert(p.key.device);
  const bool by_device = devices.size() > 1;
  c.by = by_device ? "device type" : "file";

  const std::vector<Point>& source = by_device ? best : all;
  std::vector<std::string> groups;
  std::map<ConfigKey, std::vector<std::optional<double>>> cells;
  for (const auto& p : source) {
    if (!p.key.ddp) continue;
    const std::string g = by_device ? p.key.device : p.source;
    auto gi = static_cast<size_t>(std::find(groups.begin(), groups.end(), g) - groups.begin());
    if (gi == groups.size()) groups.push_back(g);
    ConfigKey k = p.key;
    k.device.clear();
    auto& v = cells[k];
    v.resize(std::max(v.size(), gi + 1));
    if (!v[gi]) v[gi] = p.key.batch_per_rank / p.summary.p50_s;
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
  c.unit = (by_device ? std::any_of(c.groups.begin(), c.groups.end(), is_cpu) : is_cpu(*devices.begin())) ? "rank"
                                                                                                          : "GPU";
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

// One cost table for a scaling table's (world size, aggregate ex/s) points.
CostTable cost_table(const ConfigKey& key, long long batch, const std::vector<std::pair<int, double>>& pts,
                     const ReportOptions& opts) {
  const double price = *opts.gpu_hour_usd;
  const double samples = static_cast<double>(opts.epochs) * static_cast<double>(opts.dataset_size);
  CostTable t{key, batch, price, opts.epochs, opts.dataset_size, {}, 1};
  for (const auto& [n, aggregate] : pts) {
    CostRow c;
    c.world_size = n;
    c.aggregate_ex_s = aggregate;
    c.usd_per_million = price * n / 3600.0 * 1e6 / aggregate;
    c.hours = samples / aggregate / 3600.0;
    c.usd = c.hours * n * price;
    t.rows.push_back(c);
  }
  const CostRow* best = &t.rows.front();
  for (const auto& r : t.rows)
    if (r.usd_per_million < best->usd_per_million) best = &r;
  t.best_world_size = best->world_size;
  return t;
}

nlohmann::json file_info(const NamedResult& nf) {
  const auto& e = nf.file.environment;
  std::set<std::string> hosts;
  if (e.contains("hosts") && e["hosts"].is_array())
    for (const auto& h : e["hosts"])
      if (h.is_string()) hosts.insert(h.get<std::string>());
  return {{"name", nf.name},
          {"device", device_type(nf.file)},
          {"created_utc", nf.file.created_utc},
          {"tool", nf.file.tool},
          {"torch", json_str_or(e, "torch")},
          {"cuda", json_str_or(e, "cuda")},
          {"nccl", json_str_or(e, "nccl")},
          {"backend", json_str_or(e, "backend")},
          {"world_size", safe_int(e, "world_size")},
          {"hosts", hosts.size()},
          {"complete", nf.file.complete},
          {"rows", nf.file.results.size()},
          {"rows_planned", nf.file.rows_planned},
          {"warning", incomplete_warning(nf.name, nf.file)}};
}

}  // namespace

std::string unit_word(const ConfigKey& k) { return k.device.rfind("CPU", 0) == 0 ? "rank" : "GPU"; }

RowFacts RowFacts::of(const BenchResult& r) {
  RowFacts f;
  if (r.checks.is_object() && r.checks.contains("grad_check_passed") && r.checks["grad_check_passed"].is_boolean())
    f.self_check_passed = r.checks["grad_check_passed"].get<bool>();
  f.peak_memory_bytes = json_num_opt(r.telemetry, "peak_memory_bytes_max_over_ranks");
  f.warnings = r.warnings;
  f.stopping = r.stopping;
  f.peak_basis = json_str_or(r.compute, "peak_basis");
  f.peak_tflops = json_num_opt(r.compute, "peak_tflops");
  return f;
}

Report build_report(const std::vector<NamedResult>& files, const ReportOptions& opts) {
  // Closed ranges that NaN and infinities fail too.
  if (opts.gpu_hour_usd && !(*opts.gpu_hour_usd > 0 && *opts.gpu_hour_usd <= kMaxGpuHourUsd))
    throw UsageError(fmt::format("--gpu-hour-cost {} must be > 0 and <= {} (USD per GPU-hour)", *opts.gpu_hour_usd,
                                 kMaxGpuHourUsd));
  if (opts.epochs < 1 || opts.epochs > kMaxEpochs)
    throw UsageError(fmt::format("--epochs {} must be 1..{}", opts.epochs, kMaxEpochs));
  if (opts.dataset_size < 1 || opts.dataset_size > kMaxReportDatasetSize)
    throw UsageError(fmt::format("--dataset-size {} must be 1..{}", opts.dataset_size, kMaxReportDatasetSize));

  const std::vector<Point> all = collect_points(files);
  if (std::none_of(all.begin(), all.end(), [](const Point& p) { return p.key.ddp; }))
    throw UsageError("the result files hold no DDP measurement; pass files written by ddpbench run --json");
  const std::vector<Point> pts = best_points(all);

  Report rep;
  // A weak-scaling table: one configuration but for the group size (and so the global
  // batch); strong scaling: the same, with the batch per rank varying instead.
  const FieldSet group = all_fields() & ~fields({ConfigField::world_size, ConfigField::ddp});
  for (const auto& rows : ddp_groups(pts, "weak", group & ~fields({ConfigField::global_batch})))
    rep.weak.push_back(weak_table(all, rows));
  for (const auto& rows : ddp_groups(pts, "strong", group & ~fields({ConfigField::batch_per_rank})))
    rep.strong.push_back(strong_table(all, rows));
  rep.comparison = comparison(all, pts);
  if (opts.gpu_hour_usd) {
    for (const auto& w : rep.weak) {
      std::vector<std::pair<int, double>> p;
      for (const auto& r : w.rows) p.emplace_back(r.world_size, r.aggregate_ex_s);
      rep.cost.push_back(cost_table(w.key, w.key.batch_per_rank, p, opts));
    }
    for (const auto& s : rep.strong) {
      std::vector<std::pair<int, double>> p;
      for (const auto& r : s.rows) p.emplace_back(r.world_size, r.aggregate_ex_s);
      rep.cost.push_back(cost_table(s.key, s.global_batch, p, opts));
    }
  }
  for (const auto& nf : files) rep.files.push_back(file_info(nf));
  return rep;
}

// ------------------------------------------------------------------ tables

namespace {

// A column and how to read its value from a row of type Row.
template <typename Row>
struct Col {
  Column column;
  std::function<Value(const Row&)> get;
};

template <typename Row>
Table make_table(std::string kind, std::string title, std::vector<std::pair<std::string, Value>> context,
                 const std::vector<Col<Row>>& cols, const std::vector<Row>& rows) {
  Table t;
  t.kind = std::move(kind);
  t.title = std::move(title);
  t.context = std::move(context);
  for (const auto& c : cols) t.columns.push_back(c.column);
  for (const auto& r : rows) {
    std::vector<Value> cells;
    for (const auto& c : cols) cells.push_back(c.get(r));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

Value opt(const std::optional<double>& v) { return v ? Value(*v) : Value(); }

std::vector<std::pair<std::string, Value>> key_context(const ConfigKey& k) {
  return {{"device", k.device},         {"model", k.model},     {"setup", k.setup_label()},
          {"precision", k.precision},   {"math", k.math},       {"image_size", static_cast<long long>(k.image_size)},
          {"scaling", k.scaling}};
}

// The row's warnings and (when not a fixed count) why it stopped, as short codes.
std::string notes_cell(const RowFacts& f) {
  std::vector<std::string> codes;
  for (const auto& w : f.warnings) codes.push_back(w.code);
  if (f.stopping.mode != "fixed") codes.push_back(f.stopping.mode + ": " + f.stopping.reason);
  return fmt::format("{}", fmt::join(codes, ", "));
}

// Columns every scaling table shows when some row has them: MFU's peak is a footnote.
template <typename Row>
void add_fact_columns(std::vector<Col<Row>>& cols, const std::vector<Row>& rows) {
  const auto any = [&](auto pred) { return std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return pred(r.facts); }); };
  if (any([](const RowFacts& f) { return f.peak_memory_bytes.has_value(); }))
    cols.push_back({{"peak_memory_bytes", "peak mem", "bytes", fmtcol::bytes()},
                    [](const Row& r) { return opt(r.facts.peak_memory_bytes); }});
  if (any([](const RowFacts& f) { return f.self_check_passed.has_value(); }))
    cols.push_back({{"self_check", "self-check", "", fmtcol::plain()}, [](const Row& r) -> Value {
                      if (!r.facts.self_check_passed) return {};
                      return std::string(*r.facts.self_check_passed ? "passed" : "FAILED");
                    }});
  if (any([](const RowFacts& f) { return !f.warnings.empty() || f.stopping.mode != "fixed"; }))
    cols.push_back({{"notes", "notes", "", fmtcol::plain()}, [](const Row& r) -> Value { return notes_cell(r.facts); }});
}

// Footnotes: each row's warnings and stopping in words.
template <typename Row>
void add_fact_notes(Table& t, const std::vector<Row>& rows, const std::string& units) {
  for (const auto& r : rows) {
    for (const auto& w : r.facts.warnings)
      t.notes.push_back(fmt::format("{} {}: {}: {}", r.world_size, units, w.code, w.message));
    const auto& s = r.facts.stopping;
    if (s.mode != "fixed")
      t.notes.push_back(fmt::format("{} {}: {} stopping ended on {} (CI half-width {:.2f}% of the mean, target {:.2f}%)",
                                    r.world_size, units, s.mode, s.reason, s.achieved_ci_pct, s.target_ci_pct));
  }
}

Table weak_tab(const WeakTable& w) {
  const std::string u = unit_word(w.key), us = u + "s";
  std::vector<Col<WeakRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()}, [](const WeakRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"nodes", "nodes", "", fmtcol::plain()}, [](const WeakRow& r) { return Value(static_cast<long long>(r.nodes)); }},
      {{"per_rank_ex_s", "per-" + u + " ex/s", "ex/s", fmtcol::fixed(1)}, [](const WeakRow& r) { return Value(r.per_gpu_ex_s); }},
      {{"aggregate_ex_s", "aggregate ex/s", "ex/s", fmtcol::fixed(1)}, [](const WeakRow& r) { return Value(r.aggregate_ex_s); }},
      {{"efficiency", "efficiency", "fraction", fmtcol::percent()}, [](const WeakRow& r) { return Value(r.efficiency); }},
      {{"ddp_overhead", "DDP overhead vs no-DDP", "fraction", fmtcol::percent()}, [](const WeakRow& r) { return opt(r.ddp_overhead); }},
      {{"p50_s", "p50 s/iter", "s", fmtcol::fixed(4)}, [](const WeakRow& r) { return Value(r.p50_s); }},
  };
  const bool flops = std::any_of(w.rows.begin(), w.rows.end(), [](const WeakRow& x) { return x.tflops_per_gpu.has_value(); });
  if (flops) {
    cols.push_back({{"tflops_per_rank", "TFLOP/s/" + u, "TFLOP/s", fmtcol::fixed(2)}, [](const WeakRow& r) { return opt(r.tflops_per_gpu); }});
    cols.push_back({{"mfu", "MFU", "fraction", fmtcol::percent()}, [](const WeakRow& r) { return opt(r.mfu); }});
  }
  add_fact_columns(cols, w.rows);
  cols.push_back({{"global_batch", "global batch", "examples", fmtcol::plain(), false},
                  [b = w.key.batch_per_rank](const WeakRow& r) { return Value(global_batch_of(b, r.world_size)); }});
  cols.push_back({{"p5_s", "p5 s/iter", "s", fmtcol::fixed(4), false}, [](const WeakRow& r) { return Value(r.p5_s); }});
  cols.push_back({{"p95_s", "p95 s/iter", "s", fmtcol::fixed(4), false}, [](const WeakRow& r) { return Value(r.p95_s); }});

  auto ctx = key_context(w.key);
  ctx.emplace_back("batch_per_rank", w.key.batch_per_rank);
  Table t = make_table("weak",
                       fmt::format("Weak scaling: {}, {}, {}, batch {} per {}, {}x{} images", w.key.model,
                                   w.key.setup_label(), w.key.device, with_thousands(w.key.batch_per_rank), u,
                                   w.key.image_size, w.key.image_size),
                       std::move(ctx), cols, w.rows);
  t.notes.push_back(fmt::format(
      "efficiency = per-{} ex/s / per-{} ex/s of the {} row ({:.1f} ex/s); DDP overhead vs no-DDP = (t_DDP - "
      "t_noDDP) / t_DDP at p50{}: every cost of DDP, communication included",
      u, u, w.baseline, w.baseline_per_gpu_ex_s,
      w.no_ddp_p50_s ? fmt::format(", t_noDDP = {:.4f} s", *w.no_ddp_p50_s) : ""));
  if (flops) {
    std::set<std::string> peaks;
    for (const auto& r : w.rows)
      if (r.mfu && (!r.facts.peak_basis.empty() || r.facts.peak_tflops))
        peaks.insert((r.facts.peak_basis.empty() ? "the dense peak for the precision" : r.facts.peak_basis) +
                     (r.facts.peak_tflops ? fmt::format(", {:g} TFLOP/s", *r.facts.peak_tflops) : ""));
    for (const auto& p : peaks) t.notes.push_back("MFU = achieved TFLOP/s / " + p);
  }
  add_fact_notes(t, w.rows, us);
  return t;
}

Table strong_tab(const StrongTable& s) {
  const std::string u = unit_word(s.key), us = u + "s";
  std::vector<Col<StrongRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()}, [](const StrongRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"nodes", "nodes", "", fmtcol::plain()}, [](const StrongRow& r) { return Value(static_cast<long long>(r.nodes)); }},
      {{"batch_per_rank", "batch/" + u, "examples", fmtcol::plain()}, [](const StrongRow& r) { return Value(r.batch_per_rank); }},
      {{"step_s", "time/step s", "s", fmtcol::fixed(4)}, [](const StrongRow& r) { return Value(r.step_s); }},
      {{"speedup", "speedup", "ratio", fmtcol::times()}, [](const StrongRow& r) { return Value(r.speedup); }},
      {{"efficiency", "efficiency", "fraction", fmtcol::percent()}, [](const StrongRow& r) { return Value(r.efficiency); }},
      {{"aggregate_ex_s", "aggregate ex/s", "ex/s", fmtcol::fixed(1)}, [](const StrongRow& r) { return Value(r.aggregate_ex_s); }},
      {{"ddp_overhead", "DDP overhead vs no-DDP", "fraction", fmtcol::percent()}, [](const StrongRow& r) { return opt(r.ddp_overhead); }},
  };
  add_fact_columns(cols, s.rows);
  cols.push_back({{"p5_s", "p5 s/iter", "s", fmtcol::fixed(4), false}, [](const StrongRow& r) { return Value(r.p5_s); }});
  cols.push_back({{"p95_s", "p95 s/iter", "s", fmtcol::fixed(4), false}, [](const StrongRow& r) { return Value(r.p95_s); }});
  auto ctx = key_context(s.key);
  ctx.emplace_back("global_batch", s.global_batch);
  Table t = make_table("strong",
                       fmt::format("Strong scaling: {}, {}, {}, global batch {}, {}x{} images", s.key.model,
                                   s.key.setup_label(), s.key.device, with_thousands(s.global_batch), s.key.image_size,
                                   s.key.image_size),
                       std::move(ctx), cols, s.rows);
  const int n0 = s.rows.front().world_size;
  t.notes.push_back(fmt::format("speedup = t({}) / t(N){}; efficiency = speedup / N; time/step at p50; DDP overhead "
                                "vs no-DDP against the no-DDP row of the same batch per {}",
                                n0, n0 == 1 ? "" : fmt::format(" x {}", n0), u));
  add_fact_notes(t, s.rows, us);
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
      {{"image_size", "image", "px", fmtcol::plain()}, [](const Line& l) { return Value(static_cast<long long>(l.row->key.image_size)); }},
      {{"scaling", "scaling", "", fmtcol::plain()}, [](const Line& l) { return Value(l.row->key.scaling); }},
      {{"batch_per_rank", "batch/" + u, "examples", fmtcol::plain()}, [](const Line& l) { return Value(l.row->key.batch_per_rank); }},
      {{"world_size", u + "s", "", fmtcol::plain()}, [](const Line& l) { return Value(static_cast<long long>(l.row->key.world_size)); }},
      {{"group", c.by, "", fmtcol::plain()}, [&c](const Line& l) { return Value(c.groups[l.group]); }},
      {{"per_rank_ex_s", "per-" + u + " ex/s", "ex/s", fmtcol::fixed(1)}, [](const Line& l) { return opt(l.row->per_gpu_ex_s[l.group]); }},
      {{"ratio", "ratio", "ratio", fmtcol::times()}, [](const Line& l) { return opt(l.row->ratio[l.group]); }},
  };
  return make_table("comparison",
                    fmt::format("Per-{} throughput by {} (ratio to the first {} with a value)", u, c.by, c.by), {},
                    cols, lines);
}

Table cost_tab(const CostTable& c) {
  const std::string u = unit_word(c.key), us = u + "s";
  const std::vector<Col<CostRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()}, [](const CostRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"aggregate_ex_s", "aggregate ex/s", "ex/s", fmtcol::fixed(1)}, [](const CostRow& r) { return Value(r.aggregate_ex_s); }},
      {{"usd_per_million", "USD per 1M samples", "USD", fmtcol::fixed(4)}, [](const CostRow& r) { return Value(r.usd_per_million); }},
      {{"hours", "time h", "h", fmtcol::sig3()}, [](const CostRow& r) { return Value(r.hours); }},
      {{"usd", "cost USD", "USD", fmtcol::fixed(2)}, [](const CostRow& r) { return Value(r.usd); }},
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
  const auto best = std::find_if(c.rows.begin(), c.rows.end(), [&](const CostRow& x) { return x.world_size == c.best_world_size; });
  t.notes.push_back(fmt::format("Most cost-efficient: {} {}(s), {:.4f} USD per 1M samples", c.best_world_size, u,
                                best->usd_per_million));
  return t;
}

}  // namespace

std::vector<Table> report_tables(const Report& r) {
  std::vector<Table> out;
  for (const auto& w : r.weak) out.push_back(weak_tab(w));
  for (const auto& s : r.strong) out.push_back(strong_tab(s));
  if (!r.comparison.rows.empty()) out.push_back(comparison_tab(r.comparison));
  for (const auto& c : r.cost) out.push_back(cost_tab(c));
  return out;
}

std::string render_report(const Report& r, TableFormat format) {
  const auto tables = report_tables(r);
  if (format != TableFormat::json) return render_tables(tables, format);
  nlohmann::json j = {{"tables", nlohmann::json::array()}, {"files", r.files}};
  for (const auto& t : tables) j["tables"].push_back(table_json(t));
  return j.dump(2) + "\n";
}

}  // namespace ddpbench
