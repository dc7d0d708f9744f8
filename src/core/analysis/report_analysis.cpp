#include "core/analysis/report_analysis.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/analysis/report_detail.hpp"
#include "core/result/memory.hpp"
#include "core/result/row_metrics.hpp"
#include "core/result/row_validation.hpp"
#include "core/stats/gpu_peaks.hpp"
#include "core/stats/straggler.hpp"
#include "core/util/errors.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench {
using report_detail::gpu_available;
using report_detail::int_at;
using report_detail::max_batch_sentence;
using report_detail::num_at;
using report_detail::straggler_what;

namespace {

// One measured row with what identifies it across files.
struct Point {
  std::string source;  // file it came from
  RowLaunch launch;    // its label ("F2"); with several launches of the key, how many and how far apart
  int devices = 1;     // distinct devices of its ranks (distinct_devices)
  ConfigKey key;
  int nodes = 1;
  Summary summary;                            // as written by `run` (pooled over ranks)
  std::optional<double> tflops_per_gpu, mfu;  // from the row's compute section, when recorded
  double p5_s = 0;                            // 5th percentile of the pooled raw samples (p50 when none)
  RowFacts facts;
  BreakdownRow breakdown;  // the row's breakdown and communication facts (world size etc. filled in)
  // Schema 1.7: the memory of the row (its strategy, checkpointing and mode are in the key).
  std::optional<double> peak_allocated_bytes, peak_reserved_bytes, peak_rss_bytes, model_state_bytes;
  std::optional<double> peak_memory_bytes;  // core/result/memory row_peak_memory_bytes
};

// Examples one rank processes per optimizer step: the batch of each of grad_accum micro-steps.
double examples_per_step(const ConfigKey& k) { return static_cast<double>(k.batch_per_rank) * k.grad_accum; }

// A row's breakdown and the communication facts behind the breakdown table. The mean over
// ranks is taken only when every component is a finite number (a foreign file's partial
// object is no breakdown).
BreakdownRow breakdown_of(const BenchResult& r) {
  BreakdownRow b;
  b.ddp = r.ddp;
  b.world_size = r.world_size;
  b.batch_per_rank = r.batch_per_rank;
  if (const auto& mean = r.breakdown.mean_over_ranks; mean && mean->complete()) {
    std::array<double, kNumBreakdownComponents> v{};
    for (size_t i = 0; i < kNumBreakdownComponents; ++i) v[i] = *mean->s[i];
    b.mean_s = v;
  }
  b.note = r.breakdown.note.value_or("");
  const auto& c = r.communication;
  if (c.buckets) b.buckets = static_cast<double>(*c.buckets);
  if (c.allreduce_bytes_per_step) b.allreduce_bytes_per_step = static_cast<double>(*c.allreduce_bytes_per_step);
  b.effective_busbw_gbps = c.effective_busbw_gbps;
  return b;
}

// An integer environment field for display; 0 when absent or not an integer.
long long safe_int(const nlohmann::json& e, const char* key) {
  try {
    return json_int_or<long long>(e, key, 0);
  } catch (const std::invalid_argument&) {
    return 0;
  }
}

// Distinct devices of a row's ranks: by GPU UUID, else host and PCI bus id, from the file's
// environment.ranks; a rank with neither counts as its own device. Ranks sharing one GPU
// count once; CPU ranks each count as one (a rank is the unit there).
int distinct_devices(const ResultFile& f, const BenchResult& r) {
  if (r.ranks.empty()) return std::max(1, r.world_size);
  std::map<long long, const nlohmann::json*> placed;
  if (const auto it = f.environment.find("ranks"); it != f.environment.end() && it->is_array())
    for (const auto& e : *it)
      if (e.is_object())
        if (const auto rk = json_num_opt(e, "rank")) placed[static_cast<long long>(*rk)] = &e;
  std::set<std::string> seen;
  for (const auto& rk : r.ranks) {
    if (rk.device.rfind("cuda", 0) != 0) return r.world_size;  // CPU ranks: one each
    const auto it = placed.find(rk.rank);
    const nlohmann::json* e = it == placed.end() ? nullptr : it->second;
    const std::string uuid = e ? json_str_or(*e, "gpu_uuid") : "";
    const std::string bus = e ? json_str_or(*e, "bus_id") : "";
    // Without either, "cuda:0" says nothing (CUDA_VISIBLE_DEVICES renumbers): the rank's own.
    seen.insert(!uuid.empty()  ? "uuid " + uuid
                : !bus.empty() ? "bus " + rk.host + " " + bus
                               : "rank " + std::to_string(rk.rank));
  }
  return std::max<int>(1, static_cast<int>(seen.size()));
}

// "the same job id J started S" when two rows carry the same launch object (schema 1.14: the
// job id and start time of the launch that measured them), "" otherwise.
std::string same_launch(const nlohmann::json& a, const nlohmann::json& b) {
  const auto id = [](const nlohmann::json& l) -> std::pair<std::string, std::string> {
    if (!l.is_object()) return {};
    const auto text = [&](const char* k) {
      const auto it = l.find(k);
      if (it == l.end() || it->is_null()) return std::string();
      return it->is_string() ? it->get<std::string>() : it->dump();
    };
    return {text("job_id"), text("started_utc")};
  };
  const auto x = id(a), y = id(b);
  if (x.first.empty() || x.second.empty() || x != y) return "";
  return fmt::format("the same job id {} started {}", x.first, x.second);
}

// Flattens every row of every file into Points. Rows that row_problem refuses (the commands'
// reader, load_result, has left them out with a warning) are skipped here too. A row
// that repeats a row of an earlier file (the same configuration and either the same content or
// the same launch object) is counted once: it is named in the kept row's launch.repeats and in
// `repeats`, and left out.
std::vector<Point> collect_points(const std::vector<NamedResult>& files, std::vector<RepeatedLaunch>& repeats) {
  std::vector<Point> pts;
  struct Seen {
    size_t file;
    nlohmann::json content, launch;
  };
  std::vector<Seen> seen;  // parallel to pts
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const NamedResult& nf = files[fi];
    for (const auto& r : nf.file.results) {
      if (!row_problem(r).empty()) continue;  // load_result named it (core/result/row_validation)
      const ConfigKey key = ConfigKey::of(nf.file, r);
      const nlohmann::json content = r;
      bool repeat = false;
      for (size_t i = 0; i < pts.size() && !repeat; ++i) {
        if (seen[i].file == fi || pts[i].key != key) continue;
        std::string why = seen[i].content == content ? "the same content" : same_launch(seen[i].launch, r.launch);
        if (why.empty()) continue;
        RepeatedLaunch rep{file_label(fi), pts[i].launch.file, why};
        pts[i].launch.repeats.push_back(rep);
        if (std::none_of(repeats.begin(), repeats.end(), [&](const RepeatedLaunch& x) {
              return x.file == rep.file && x.of == rep.of && x.why == rep.why;
            }))
          repeats.push_back(rep);
        repeat = true;
      }
      if (repeat) continue;
      seen.push_back({fi, content, r.launch});
      Point p;
      p.source = nf.name;
      p.launch.file = file_label(fi);
      p.launch.all = {p.launch.file};
      p.key = key;
      p.nodes = r.nodes;
      p.devices = distinct_devices(nf.file, r);
      p.summary = r.summary;
      p.p5_s = r.summary.p5_s;
      if (!(p.p5_s > 0)) {  // files of schema < 1.10: from every rank's samples
        std::vector<double> pooled;
        for (const auto& rk : r.ranks) pooled.insert(pooled.end(), rk.samples_s.begin(), rk.samples_s.end());
        p.p5_s = pooled.empty() ? r.summary.p50_s : percentile(pooled, 5);
      }
      p.tflops_per_gpu = r.compute.achieved_tflops_per_gpu;
      p.mfu = r.compute.mfu;
      p.facts = RowFacts::of(r);
      p.breakdown = breakdown_of(r);
      if (!r.memory.empty()) {
        p.peak_allocated_bytes = r.memory.max_over_ranks.peak_allocated_bytes;
        p.peak_reserved_bytes = r.memory.max_over_ranks.peak_reserved_bytes;
        p.peak_rss_bytes = r.memory.max_over_ranks.peak_rss_bytes;
        if (r.memory.model_state_bytes) p.model_state_bytes = static_cast<double>(r.memory.model_state_bytes->total());
        p.peak_memory_bytes = r.memory.peak_bytes();
      }
      pts.push_back(std::move(p));
    }
  }
  return pts;
}

// The same configuration measured by several launches: the launch with the median p50 (the
// slower of the two middle ones for an even count: of two launches the slower, since the
// faster of a pair overstates what a cluster delivers), so that every number of the row, its
// baseline and footnotes come from one launch, with how many launches there were and their
// spread of p50 ((slowest - fastest) / the chosen launch's). Never the fastest, and never
// the narrowest CI (which picks a short lucky run). Keys in first-seen order.
std::vector<Point> median_launches(const std::vector<Point>& pts) {
  std::map<ConfigKey, std::vector<const Point*>> by_key;
  std::vector<ConfigKey> order;
  for (const auto& p : pts) {
    auto& v = by_key[p.key];
    if (v.empty()) order.push_back(p.key);
    v.push_back(&p);
  }
  std::vector<Point> out;
  for (const auto& k : order) {
    const std::vector<const Point*>& v = by_key[k];
    std::vector<const Point*> sorted = v;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Point* a, const Point* b) { return a->summary.p50_s < b->summary.p50_s; });
    Point q = *sorted[sorted.size() / 2];  // odd: the median; even: the slower middle one
    if (v.size() > 1) {
      q.launch.launches = static_cast<int>(v.size());
      q.launch.all.clear();
      q.launch.repeats.clear();
      for (const Point* x : v) {
        q.launch.all.push_back(x->launch.file);
        q.launch.repeats.insert(q.launch.repeats.end(), x->launch.repeats.begin(), x->launch.repeats.end());
      }
      q.launch.spread = (sorted.back()->summary.p50_s - sorted.front()->summary.p50_s) / q.summary.p50_s;
    }
    out.push_back(std::move(q));
  }
  return out;
}

// The fields a no-DDP baseline shares with a DDP row: all but the group size and what
// only DDP has (its batch per rank is the row's, so strong scaling finds one per size).
FieldSet baseline_fields() {
  // The strategy too: a zero2 or fsdp row's no-DDP baseline is the plain one ("ddp", ddp false).
  return all_fields() &
         ~fields({ConfigField::world_size, ConfigField::global_batch, ConfigField::ddp, ConfigField::strategy}) &
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

// The label of the file whose no-DDP row ddp_overhead uses for `p`; "" when none.
std::string baseline_file(const std::vector<Point>& all, const Point& p) {
  const Point* q = no_ddp_baseline(all, p);
  return q ? q->launch.file : "";
}

// Exposed communication as a fraction of the step, both from the row's breakdown (mean over
// ranks): exposed_comm_s / step_s.
std::optional<double> exposed_fraction(const Point& p) { return p.facts.metric("exposed_comm"); }

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

// One row of a scaling table as the cost table prices it.
struct CostPoint {
  int ranks = 1, devices = 1;
  double examples_per_step = 0;  // examples of one optimizer step over all ranks
  double mean_step_s = 0;        // duration_step_s: the step statistic of every duration and cost
  std::string file;              // launch label of the row
  bool shared = false;           // ranks shared a device: not priced
};

// One cost table for a scaling table's rows: each priced at its mean step time (the statistic of
// epoch time, so epochs x epoch time is the time priced); rows whose ranks shared a device are
// named and not priced.
CostTable cost_table(const ConfigKey& key, long long batch, const std::vector<CostPoint>& pts,
                     const ReportOptions& opts) {
  const double price = *opts.gpu_hour_usd;
  CostTable t{key, batch, price, opts.epochs, opts.dataset_size, {}, 1, {}};
  const std::string u = unit_word(key);
  for (const auto& p : pts) {
    if (p.shared) {
      t.not_priced.push_back(
          fmt::format("{} ranks on {} {}{} ({})", p.ranks, p.devices, u, p.devices == 1 ? "" : "s", p.file));
      continue;
    }
    const int n = p.devices;
    const double steps = static_cast<double>(
        steps_per_epoch(opts.dataset_size, static_cast<long long>(std::llround(p.examples_per_step))));
    CostRow c;
    c.world_size = n;
    c.ranks = p.ranks;
    c.file = p.file;
    c.mean_step_s = p.mean_step_s;
    c.ex_s_mean_step = p.examples_per_step / p.mean_step_s;
    c.usd_per_million = price * n / 3600.0 * 1e6 / c.ex_s_mean_step;
    c.hours = opts.epochs * steps * p.mean_step_s / 3600.0;
    c.usd = c.hours * n * price;
    t.rows.push_back(c);
  }
  if (t.rows.empty()) return t;
  const CostRow* best = &t.rows.front();
  for (const auto& r : t.rows)
    if (r.usd_per_million < best->usd_per_million) best = &r;
  t.best_world_size = best->world_size;
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

// ------------------------------------------------------------------ strategies and memory (schema 1.7)

// Rows the scaling, impact and comparison tables take: training rows of plain DDP (or the
// no-DDP baseline) without activation checkpointing; the others (ConfigKey tells them apart)
// are shown in the strategy, memory and inference tables.
bool plain_training(const Point& p) {
  return p.key.mode == "train" && p.key.strategy == "ddp" && !p.key.activation_checkpointing;
}

int strategy_order(const std::string& s) { return s == "ddp" ? 0 : s == "zero2" ? 1 : s == "fsdp" ? 2 : 3; }

// Order of the lines of one world size: ddp, zero2, fsdp; checkpointing off then on; fp32 first.
bool line_before(const Point* a, const Point* b) {
  const auto t = [](const Point* p) {
    return std::make_tuple(p->key.world_size, strategy_order(p->key.strategy), p->key.strategy,
                           p->key.activation_checkpointing, p->key.precision != "fp32", p->key.precision, p->key.math);
  };
  return t(a) < t(b);
}

// The configuration a strategy/memory table is about: the key without what varies inside it.
ConfigKey strategy_group_key(const ConfigKey& k) {
  ConfigKey g = k;
  g.precision.clear();
  g.math.clear();
  g.strategy.clear();
  g.activation_checkpointing = false;
  g.world_size = 0;
  if (g.scaling == "weak") g.global_batch = 0;
  else g.batch_per_rank = 0;
  return g;
}

// Training rows that take part in the strategy tables (DDP-like rows: plain DDP or a sharded
// strategy; not the no-DDP baseline) of `launches` (one per configuration: median_launches),
// grouped by strategy_group_key, each group sorted by line_before.
std::vector<std::vector<const Point*>> strategy_groups(const std::vector<Point>& launches) {
  std::map<ConfigKey, std::vector<const Point*>> groups;
  for (const auto& p : launches)
    if (p.key.mode == "train" && (p.key.ddp || p.key.strategy != "ddp"))
      groups[strategy_group_key(p.key)].push_back(&p);
  std::vector<std::vector<const Point*>> out;
  for (auto& [k, rows] : groups) {
    std::sort(rows.begin(), rows.end(), line_before);
    out.push_back(std::move(rows));
  }
  return out;
}

double aggregate_ex_s(const Point& p) { return p.key.world_size * examples_per_step(p.key) / p.summary.p50_s; }

// The efficiency baseline of a line (StrategyRow::efficiency).
const Point* strategy_baseline(const std::vector<Point>& every, const std::vector<const Point*>& group,
                               const Point& p) {
  for (const Point* q : group)
    if (q->key.world_size == 1 && q->key.strategy == p.key.strategy &&
        q->key.activation_checkpointing == p.key.activation_checkpointing && q->key.precision == p.key.precision &&
        q->key.math == p.key.math && (p.key.scaling != "weak" || q->key.batch_per_rank == p.key.batch_per_rank))
      return q;
  if (p.key.scaling != "weak") return nullptr;
  return no_ddp_baseline(every, p);  // the same launch's when it has one
}

// `launches`: median_launches(every).
std::vector<StrategyTable> strategy_tables(const std::vector<Point>& every, const std::vector<Point>& launches) {
  std::vector<StrategyTable> out;
  for (const auto& rows : strategy_groups(launches)) {
    // A comparison needs two lines at one world size.
    std::map<int, int> per_size;
    for (const Point* p : rows) ++per_size[p->key.world_size];
    if (std::none_of(per_size.begin(), per_size.end(), [](const auto& kv) { return kv.second > 1; })) continue;
    StrategyTable t;
    t.key = rows.front()->key;
    for (const Point* p : rows) {
      StrategyRow r;
      r.world_size = p->key.world_size;
      r.launch = p->launch;
      r.facts = p->facts;
      r.strategy = p->key.strategy;
      r.activation_checkpointing = p->key.activation_checkpointing;
      r.precision = p->key.precision_label();
      r.aggregate_ex_s = aggregate_ex_s(*p);
      if (const Point* b = strategy_baseline(every, rows, *p))
        r.efficiency = r.aggregate_ex_s / (p->key.world_size * aggregate_ex_s(*b) / b->key.world_size);
      r.step_s = p->summary.p50_s;
      r.exposed_comm = exposed_fraction(*p);
      r.peak_allocated_bytes = p->peak_allocated_bytes;
      r.peak_reserved_bytes = p->peak_reserved_bytes;
      if (!p->peak_allocated_bytes) r.peak_rss_bytes = p->peak_rss_bytes;  // GPU rows: the device's memory counts
      r.model_state_bytes = p->model_state_bytes;
      t.rows.push_back(std::move(r));
    }
    out.push_back(std::move(t));
  }
  return out;
}

// "mixed precision (bf16) + activation checkpointing", "zero2", ...: what sets a line apart
// from the fp32 DDP line; "" when nothing does.
std::string technique_of(const Point& p) {
  std::vector<std::string> parts;
  if (p.key.strategy != "ddp") parts.push_back(p.key.strategy);
  if (p.key.cpu_offload) parts.push_back("CPU offload");
  if (p.key.precision != "fp32") parts.push_back("mixed precision (" + p.key.precision + ")");
  if (p.key.activation_checkpointing) parts.push_back("activation checkpointing");
  return fmt::format("{}", fmt::join(parts, " + "));
}

// `launches`: median_launches of every row.
std::vector<MemoryTable> memory_tables(const std::vector<Point>& launches) {
  std::vector<MemoryTable> out;
  for (const auto& rows : strategy_groups(launches)) {
    MemoryTable t;
    for (const Point* base : rows) {
      if (base->key.strategy != "ddp" || base->key.activation_checkpointing || base->key.precision != "fp32" ||
          !base->peak_memory_bytes || !(*base->peak_memory_bytes > 0))
        continue;
      // The first fp32 DDP line of its world size (and batch) is the baseline.
      const bool first = std::none_of(rows.begin(), rows.end(), [&](const Point* q) {
        return q != base && line_before(q, base) && q->key.world_size == base->key.world_size &&
               q->key.batch_per_rank == base->key.batch_per_rank && q->key.strategy == "ddp" &&
               !q->key.activation_checkpointing && q->key.precision == "fp32" && q->peak_memory_bytes;
      });
      if (!first) continue;
      if (t.rows.empty()) {
        t.key = base->key;
        t.peak_kind = base->peak_allocated_bytes ? "peak allocated" : "peak RSS";
      }
      for (const Point* p : rows) {
        if (p->key.world_size != base->key.world_size || p->key.batch_per_rank != base->key.batch_per_rank) continue;
        const std::string technique = technique_of(*p);
        if (technique.empty() || !p->peak_memory_bytes) continue;
        MemoryRow r;
        r.world_size = p->key.world_size;
        r.launch = p->launch;
        r.baseline_file = base->launch.file;
        r.technique = technique;
        r.baseline_peak_bytes = *base->peak_memory_bytes;
        r.peak_bytes = *p->peak_memory_bytes;
        r.saved_bytes = r.baseline_peak_bytes - r.peak_bytes;
        r.saved = r.saved_bytes / r.baseline_peak_bytes;
        r.baseline_step_s = base->summary.p50_s;
        r.step_s = p->summary.p50_s;
        r.time_paid = r.step_s / r.baseline_step_s - 1.0;
        r.model_state_bytes = p->model_state_bytes;
        r.baseline_model_state_bytes = base->model_state_bytes;
        t.rows.push_back(std::move(r));
      }
    }
    if (!t.rows.empty()) out.push_back(std::move(t));
  }
  return out;
}

// `launches`: median_launches of every row.
std::vector<InferenceTable> inference_tables(const std::vector<Point>& launches) {
  std::map<ConfigKey, std::vector<const Point*>> groups;
  for (const auto& p : launches)
    if (p.key.mode == "inference") {
      ConfigKey g = p.key;
      g.world_size = 0;
      g.global_batch = 0;
      groups[g].push_back(&p);
    }
  std::vector<InferenceTable> out;
  for (auto& [g, rows] : groups) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Point* a, const Point* b) { return a->key.world_size < b->key.world_size; });
    InferenceTable t;
    t.key = rows.front()->key;
    for (const Point* p : rows) {
      InferenceRow r;
      r.world_size = p->key.world_size;
      r.launch = p->launch;
      r.aggregate_ex_s = aggregate_ex_s(*p);
      r.p50_s = p->summary.p50_s;
      r.p95_s = p->summary.p95_s;
      r.peak_memory_bytes = p->peak_memory_bytes;
      t.rows.push_back(std::move(r));
    }
    out.push_back(std::move(t));
  }
  return out;
}

// One table per file, collective and group of ranks, in the order the file lists them;
// rows by dtype, reduction, root, then size.
std::vector<CommTable> comm_tables(const std::vector<NamedResult>& files) {
  std::vector<CommTable> out;
  for (const auto& nf : files) {
    std::vector<CommTable> mine;
    for (const auto& c : nf.file.comm_results) {
      if (c.extra.is_object() && c.extra.contains("pair")) continue;  // `comm --pairs`: the pairs table
      auto t = std::find_if(mine.begin(), mine.end(), [&](const CommTable& x) {
        return x.collective == c.collective && x.world_size == c.world_size && x.nodes == c.nodes;
      });
      if (t == mine.end()) {
        mine.push_back({nf.name, device_type(nf.file), c.collective, c.world_size, c.nodes, c.label, {}});
        t = std::prev(mine.end());
      }
      t->rows.push_back(c);
    }
    for (auto& t : mine) {
      std::stable_sort(t.rows.begin(), t.rows.end(), [](const CommResult& a, const CommResult& b) {
        return std::tie(a.dtype, a.redop, a.root, a.bytes) < std::tie(b.dtype, b.redop, b.root, b.bytes);
      });
      out.push_back(std::move(t));
    }
  }
  return out;
}

nlohmann::json file_info(const NamedResult& nf, size_t index) {
  const auto& e = nf.file.environment;
  std::set<std::string> hosts;
  if (e.contains("hosts") && e["hosts"].is_array())
    for (const auto& h : e["hosts"])
      if (h.is_string()) hosts.insert(h.get<std::string>());
  return {{"label", file_label(index)},
          {"name", nf.name},
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
          {"kind", nf.file.kind},
          {"rows", nf.file.results.size()},
          {"comm_rows", nf.file.comm_results.size()},
          {"rows_planned", nf.file.rows_planned},
          {"driver", json_str_or(e, "driver")},
          {"cpu_model", json_str_or(e, "cpu_model")},
          {"argv", nf.file.argv},
          {"nodes", e.contains("nodes") && e["nodes"].is_array() ? e["nodes"] : nlohmann::json::array()},
          {"warning", incomplete_warning(nf.name, nf.file)}};
}

}  // namespace

// ------------------------------------------------------------------ cluster validation (schema 1.6)

namespace report_detail {

std::optional<double> num_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object()) return std::nullopt;
    const auto it = p->find(k);
    if (it == p->end()) return std::nullopt;
    p = &*it;
  }
  if (!p->is_number()) return std::nullopt;
  const double v = p->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

long long int_at(const nlohmann::json& j, const char* key) {
  const auto v = json_num_opt(j, key);
  return v && std::isfinite(*v) ? std::llround(*v) : -1;
}

bool gpu_available(const TelemetrySummary& s) { return s.gpu && s.gpu->available.value_or(false); }

std::string straggler_what(const nlohmann::json& e) {
  const size_t n = e["ranks"].size();
  return fmt::format("{}, batch {} per rank, {} rank{}", json_str_or(e, "model", "?"), int_at(e, "batch_per_rank"), n,
                     n == 1 ? "" : "s");
}

std::string max_batch_sentence(const nlohmann::json& m) {
  const auto mx = num_at(m, {"max_batch"});
  const auto rec = num_at(m, {"recommended_batch"});
  const auto margin = num_at(m, {"margin"});
  std::string s =
      fmt::format("find-max-bs ({}, {}, {}, {}x{}): ", json_str_or(m, "model", "?"), json_str_or(m, "precision", "?"),
                  json_str_or(m, "device", "?"), int_at(m, "image_size"), int_at(m, "image_size"));
  if (!mx || *mx < 1) return s + "no batch size trained (see the trials)";
  s += fmt::format("the largest batch per rank that trained is {:.0f}", *mx);
  if (json_true(m, "bound_reached")) s += " (the search bound, not memory, stopped it)";
  if (rec) s += fmt::format("; recommended {:.0f}", *rec);
  if (margin) s += fmt::format(" ({:g}% margin)", *margin * 100);
  return s;
}

}  // namespace report_detail

namespace {

// One statistic of a metric's stats, when both are there and finite.
std::optional<double> stat_of(const std::optional<MetricStats>& m, std::optional<double> MetricStats::*which) {
  if (!m) return std::nullopt;
  const std::optional<double>& v = (*m).*which;
  return v && std::isfinite(*v) ? v : std::nullopt;
}

bool has_sampled(const BenchResult& r) {
  return std::any_of(r.ranks.begin(), r.ranks.end(),
                     [](const RankSamples& rk) { return sampled_telemetry(rk) != nullptr; });
}

// Folds v into an optional extreme (less: minimum).
void fold(std::optional<double>& acc, const std::optional<double>& v, bool less) {
  if (!v) return;
  if (!acc || (less ? *v < *acc : *v > *acc)) acc = v;
}

ClusterFile cluster_of(const NamedResult& nf) {
  ClusterFile c;
  c.source = nf.name;
  c.device = device_type(nf.file);
  for (const auto& r : nf.file.results)
    if (has_sampled(r) || !r.burn_in.empty()) c.rows.push_back(r);
  if (nf.file.stragglers.is_array())
    for (const auto& e : nf.file.stragglers)
      if (e.is_object() && e.contains("ranks") && e["ranks"].is_array()) c.stragglers.push_back(e);
  for (const auto& x : nf.file.comm_results)
    if (x.extra.is_object() && x.extra.contains("pair")) c.pair_rows.push_back(x);
  if (nf.file.comm_pairs.is_object()) c.comm_pairs = nf.file.comm_pairs;
  if (nf.file.max_batch.is_object()) c.max_batch = nf.file.max_batch;
  return c;
}

bool cluster_empty(const ClusterFile& c) {
  return c.rows.empty() && c.stragglers.empty() && c.pair_rows.empty() && c.comm_pairs.empty() && c.max_batch.empty();
}

}  // namespace

TelemetryRowSummary summarize_telemetry(const BenchResult& row) {
  TelemetryRowSummary t;
  double cpu_sum = 0, rx_sum = 0, tx_sum = 0;
  int cpu_n = 0, rx_n = 0, tx_n = 0;
  std::set<std::string> reasons, unavailable;
  for (const auto& rk : row.ranks) {
    const TelemetrySummary* s = sampled_telemetry(rk);
    if (!s) continue;
    ++t.ranks;
    if (gpu_available(*s)) {
      ++t.gpu_ranks;
      const GpuTelemetry& g = *s->gpu;
      fold(t.min_sm_util_pct, stat_of(g.sm_util_pct, &MetricStats::mean), true);
      fold(t.max_temperature_c, stat_of(g.temperature_c, &MetricStats::max), false);
      fold(t.min_sm_clock_mhz, stat_of(g.sm_clock_mhz, &MetricStats::min), true);
      fold(t.max_power_w, stat_of(g.power_w, &MetricStats::max), false);
      if (const auto used = stat_of(g.mem_used_bytes, &MetricStats::max); used && g.mem_total_bytes.value_or(0) > 0)
        fold(t.max_mem_used_pct, 100.0 * *used / static_cast<double>(*g.mem_total_bytes), false);
      if (g.throttled_fraction.value_or(0) > 0) ++t.throttled_ranks;
      for (const auto& x : g.throttle_reasons.value_or(std::vector<std::string>{})) reasons.insert(x);
    } else {
      unavailable.insert(s->gpu ? s->gpu->reason.value_or("no reason recorded") : "no gpu object in the telemetry");
    }
    const HostTelemetry host = s->host.value_or(HostTelemetry{});
    if (const auto v = stat_of(host.cpu_util_pct, &MetricStats::mean)) cpu_sum += *v, ++cpu_n;
    if (host.peak_rss_bytes) fold(t.max_peak_rss_bytes, static_cast<double>(*host.peak_rss_bytes), false);
    if (host.net) {
      if (const auto v = stat_of(host.net->rx_bytes_per_s, &MetricStats::mean)) rx_sum += *v, ++rx_n;
      if (const auto v = stat_of(host.net->tx_bytes_per_s, &MetricStats::mean)) tx_sum += *v, ++tx_n;
    }
  }
  if (cpu_n) t.mean_cpu_util_pct = cpu_sum / cpu_n;
  if (rx_n) t.mean_net_rx_bytes_per_s = rx_sum / rx_n;
  if (tx_n) t.mean_net_tx_bytes_per_s = tx_sum / tx_n;
  t.throttle_reasons.assign(reasons.begin(), reasons.end());
  t.gpu_unavailable.assign(unavailable.begin(), unavailable.end());
  return t;
}

const BenchResult* largest_group(const std::vector<BenchResult>& rows, const std::string& model) {
  const BenchResult* best = nullptr;
  for (const auto& r : rows) {
    if (r.model != model || !has_sampled(r)) continue;
    if (!best || (r.ddp && !best->ddp) || (r.ddp == best->ddp && r.world_size > best->world_size)) best = &r;
  }
  return best;
}

std::vector<std::string> straggler_sentences(const nlohmann::json& e) {
  std::vector<std::string> out;
  if (!e.is_object() || !e.contains("ranks") || !e["ranks"].is_array() || e["ranks"].empty()) return out;
  const double thr = num_at(e, {"threshold"}).value_or(0.95);
  const std::string what = straggler_what(e);
  const nlohmann::json* lowest = nullptr;
  for (const auto& x : e["ranks"]) {
    const auto sc = num_at(x, {"score"});
    if (!sc) continue;
    if (!lowest || *sc < *num_at(*lowest, {"score"})) lowest = &x;
    if (json_true(x, "straggler"))
      out.push_back(fmt::format("Straggler ({}): {} has score {:.3g} < {:g}", what, straggler_rank_words(x), *sc, thr));
  }
  if (out.empty() && lowest)
    out.push_back(fmt::format("No straggler ({}): every rank scored >= {:g} (lowest: rank {}, {:.3g})", what, thr,
                              int_at(*lowest, "rank"), *num_at(*lowest, {"score"})));
  return out;
}

std::string file_label(size_t index) { return fmt::format("F{}", index + 1); }

std::string launch_words(const RowLaunch& l) {
  std::string s = l.file;
  if (l.launches > 1)
    s += fmt::format(": the {} p50 of {} launches ({}), spread {:.1f}%", l.launches % 2 ? "median" : "slower middle",
                     l.launches, fmt::join(l.all, ", "), 100.0 * l.spread.value_or(0.0));
  for (const auto& r : l.repeats) s += fmt::format("; {} repeats {} ({}): counted once", r.file, r.of, r.why);
  return s;
}

double ddp_overhead_by_throughput(double per_gpu_ex_s, double no_ddp_ex_s) { return 1.0 - per_gpu_ex_s / no_ddp_ex_s; }

std::string MfuPeak::short_label() const {
  if (!tflops) return unit.empty() ? basis : unit;
  return fmt::format("{}{}{:g} TFLOP/s", unit, unit.empty() ? "" : " ", *tflops);
}

std::string unit_word(const ConfigKey& k) { return k.device.rfind("CPU", 0) == 0 ? "rank" : "GPU"; }

RowFacts RowFacts::of(const BenchResult& r) {
  RowFacts f;
  f.self_check_passed = r.checks.passed();
  f.metrics = row_metric_values(r);
  f.warnings = r.warnings;
  f.stopping = r.stopping;
  f.peak_basis = r.compute.peak_basis.value_or("");
  f.peak_tflops = r.compute.peak_tflops;
  f.cv = r.summary.cv;
  return f;
}

std::optional<double> RowFacts::metric(const std::string& key) const {
  const auto& all = row_metrics();
  for (size_t i = 0; i < all.size(); ++i)
    if (key == all[i].key) return metric_at(i);
  throw std::logic_error("no per-row metric '" + key + "' in core/result/row_metrics");
}

Report build_report(const std::vector<NamedResult>& files, const ReportOptions& opts) {
  // Closed ranges that NaN and infinities fail too.
  if (opts.gpu_hour_usd && !(*opts.gpu_hour_usd > 0 && *opts.gpu_hour_usd <= kMaxGpuHourUsd))
    throw UsageError(
        fmt::format("--gpu-hour-cost {} must be > 0 and <= {} (USD per GPU-hour)", *opts.gpu_hour_usd, kMaxGpuHourUsd));
  if (opts.epochs < 1 || opts.epochs > kMaxEpochs)
    throw UsageError(fmt::format("--epochs {} must be 1..{}", opts.epochs, kMaxEpochs));
  if (opts.dataset_size < 1 || opts.dataset_size > kMaxReportDatasetSize)
    throw UsageError(fmt::format("--dataset-size {} must be 1..{}", opts.dataset_size, kMaxReportDatasetSize));
  const SummaryTargets& tg = opts.targets;
  if (!(tg.min_efficiency > 0 && tg.min_efficiency <= 1))
    throw UsageError(
        fmt::format("--target-efficiency {} must be a fraction in (0, 1] (0.85 for 85%)", tg.min_efficiency));
  if (!(tg.max_exposed_comm >= 0 && tg.max_exposed_comm <= 1))
    throw UsageError(fmt::format("--target-comm {} must be a fraction in [0, 1] (0.15 for 15%)", tg.max_exposed_comm));
  if (tg.min_per_gpu_ex_s && !(*tg.min_per_gpu_ex_s > 0 && std::isfinite(*tg.min_per_gpu_ex_s)))
    throw UsageError(fmt::format("--target-ex-s {} must be a positive number of ex/s per GPU", *tg.min_per_gpu_ex_s));

  Report rep;
  // A file given twice (the same content) counts once in every section; rows given twice in
  // different files (the same content, or the same launch) count once in the tables.
  std::vector<bool> repeated(files.size(), false);
  {
    std::vector<nlohmann::json> content;
    for (const auto& f : files) content.emplace_back(f.file);
    for (size_t i = 0; i < files.size(); ++i)
      for (size_t j = 0; j < i && !repeated[i]; ++j)
        if (!repeated[j] && content[i] == content[j]) {
          repeated[i] = true;
          rep.repeated_files.push_back(file_label(i));
          rep.repeats.push_back({file_label(i), file_label(j), "the same content"});
        }
  }
  std::vector<RepeatedLaunch> row_repeats;
  const std::vector<Point> every = collect_points(files, row_repeats);
  for (const auto& x : row_repeats)
    if (std::none_of(rep.repeats.begin(), rep.repeats.end(),
                     [&](const RepeatedLaunch& y) { return y.file == x.file && y.of == x.of; }))
      rep.repeats.push_back(x);
  std::stable_sort(rep.repeats.begin(), rep.repeats.end(), [](const RepeatedLaunch& a, const RepeatedLaunch& b) {
    return std::stoul(a.file.substr(1)) < std::stoul(b.file.substr(1));  // by file label: F2 before F10
  });
  std::vector<NamedResult> distinct;  // the files not wholly repeated, for the sections read per file
  std::vector<size_t> index;          // their positions in `files`
  for (size_t i = 0; i < files.size(); ++i)
    if (!repeated[i]) {
      distinct.push_back(files[i]);
      index.push_back(i);
    }
  std::vector<Point> all;
  std::copy_if(every.begin(), every.end(), std::back_inserter(all), plain_training);
  rep.per_rank = opts.per_rank;
  rep.comm = comm_tables(distinct);
  rep.convergence = convergence_groups(distinct);  // time-to-loss
  for (size_t i = 0; i < distinct.size(); ++i)
    if (ClusterFile c = cluster_of(distinct[i]); !cluster_empty(c)) {
      c.label = file_label(index[i]);
      rep.cluster.push_back(std::move(c));
    }
  const bool cluster_facts = std::any_of(rep.cluster.begin(), rep.cluster.end(), [](const ClusterFile& c) {
    return !c.stragglers.empty() || !c.pair_rows.empty() || !c.max_batch.empty();
  });
  if (rep.comm.empty() && !cluster_facts && std::none_of(every.begin(), every.end(), [](const Point& p) {
        return p.key.ddp || p.key.strategy != "ddp" || p.key.mode == "inference";
      }))
    throw UsageError(
        "the result files hold no DDP measurement and no collective result; pass files written by "
        "ddpbench run --json, ddpbench comm --json or ddpbench find-max-bs --json");
  for (const auto& c : rep.cluster) {
    for (const auto& e : c.stragglers)
      for (auto& line : straggler_sentences(e)) rep.findings.push_back(std::move(line));
    for (const char* kind : {"slow_nodes", "slow_links"})
      if (c.comm_pairs.contains(kind) && c.comm_pairs[kind].is_array())
        for (const auto& x : c.comm_pairs[kind])
          rep.findings.push_back(fmt::format("{} ({}): {}",
                                             std::string(kind) == "slow_nodes" ? "Slow node" : "Slow link", c.label,
                                             json_str_or(x, "message", "?")));
    if (c.comm_pairs.contains("outliers") && c.comm_pairs["outliers"] == false)
      rep.findings.push_back(
          fmt::format("Pairs ({}): no slow node or link among {} participants", c.label,
                      c.comm_pairs.contains("participants") ? c.comm_pairs["participants"].size() : 0));
    if (!c.max_batch.empty()) rep.findings.push_back(max_batch_sentence(c.max_batch) + ".");
  }
  // One row per configuration, every table from the same choice of launch (grouping by
  // ConfigKey, which holds strategy, mode and checkpointing, commutes with plain_training).
  const std::vector<Point> launches = median_launches(every);
  std::vector<Point> pts;
  std::copy_if(launches.begin(), launches.end(), std::back_inserter(pts), plain_training);

  // A weak-scaling table: one configuration but for the group size (and so the global
  // batch); strong scaling: the same, with the batch per rank varying instead.
  const FieldSet group = all_fields() & ~fields({ConfigField::world_size, ConfigField::ddp});
  for (const auto& rows : ddp_groups(pts, "weak", group & ~fields({ConfigField::global_batch})))
    rep.weak.push_back(weak_table(all, rows));
  for (const auto& rows : ddp_groups(pts, "strong", group & ~fields({ConfigField::batch_per_rank})))
    rep.strong.push_back(strong_table(all, rows));
  rep.comparison = comparison(all, pts);
  rep.impact = impact_tables(pts);
  rep.strategy = strategy_tables(every, launches);
  rep.memory = memory_tables(launches);
  rep.inference = inference_tables(launches);
  if (opts.gpu_hour_usd) {
    for (const auto& w : rep.weak) {
      std::vector<CostPoint> p;
      for (const auto& r : w.rows)  // billed per device
        p.push_back({r.world_size, r.devices, examples_per_step(w.key) * r.world_size, r.mean_s, r.launch.file,
                     r.shared_gpu});
      rep.cost.push_back(cost_table(w.key, w.key.batch_per_rank, p, opts));
    }
    for (const auto& s : rep.strong) {
      std::vector<CostPoint> p;
      for (const auto& r : s.rows)
        p.push_back({r.world_size, r.devices, static_cast<double>(s.global_batch) * s.key.grad_accum, r.mean_s,
                     r.launch.file, r.shared_gpu});
      rep.cost.push_back(cost_table(s.key, s.global_batch, p, opts));
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    rep.files.push_back(file_info(files[i], i));
    for (const auto& x : rep.repeats)
      if (x.file == file_label(i)) rep.files.back()["repeats"].push_back({{"of", x.of}, {"why", x.why}});
  }
  rep.summary = executive_summary(rep, files, opts.targets);
  return rep;
}

std::vector<ConvergenceGroup> convergence_groups(const std::vector<NamedResult>& files) {
  std::vector<ConvergenceGroup> out;
  for (const auto& f : files) {
    std::vector<ConvergenceGroup> mine;
    for (const auto& r : f.file.results) {
      if (nlohmann::json(r.convergence).empty()) continue;
      const std::string ds = r.convergence.dataset.value_or("?");
      auto it = std::find_if(mine.begin(), mine.end(),
                             [&](const ConvergenceGroup& g) { return g.model == r.model && g.dataset == ds; });
      if (it == mine.end()) {
        mine.push_back({f.name, f.file.environment.value("device_type", std::string("?")), r.model, ds, {}});
        it = mine.end() - 1;
      }
      it->rows.push_back(r);
    }
    for (auto& g : mine) {
      std::stable_sort(g.rows.begin(), g.rows.end(),
                       [](const BenchResult& a, const BenchResult& b) { return a.world_size < b.world_size; });
      out.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace ddpbench
