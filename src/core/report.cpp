#include "core/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/bench_table.hpp"
#include "core/errors.hpp"
#include "core/json_util.hpp"
#include "core/text_table.hpp"

namespace ddpbench {
namespace {

// One measured row, flattened with what identifies it across files.
struct Point {
  std::string source;     // file it came from
  std::string gpu;        // device type: GPU name ("NVIDIA H100 80GB HBM3"), "CPU (<model>)", or "mixed: A + B"
  std::string model;
  // Precision and the settings that change what is measured: "fp32 (TF32 allowed)" for
  // fp32 with TF32 math on, ", channels_last", ", frozen backbone + mlp4096", ", gloo" on GPUs.
  std::string precision;
  std::string base_precision;  // the row's precision field alone ("fp32", "bf16", ...)
  std::string scaling;    // "weak" or "strong"
  long long batch_per_rank = 0;
  long long global_batch = 0;  // batch_per_rank * world_size
  int image_size = 0;
  int world_size = 1, nodes = 1;
  bool ddp = true;
  Summary summary;        // as written by `run` (pooled over ranks)
  std::optional<double> tflops_per_gpu, mfu;  // from the row's compute section, when recorded
  double p5_s = 0;        // 5th percentile of the pooled raw samples (p50 when none)
};

std::string fmt_num(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }
std::string fmt_pct(double v) { return fmt::format("{:.1f}%", 100.0 * v); }
std::string fmt_opt_pct(const std::optional<double>& v) { return v ? fmt_pct(*v) : "n/a"; }

// Same configuration measured in several files: keep the one with the most samples.
std::vector<Point> best_points(const std::vector<Point>& pts) {
  std::map<std::tuple<std::string, std::string, std::string, int, std::string, long long, int, bool>, size_t> best;
  std::vector<Point> out;
  for (const auto& p : pts) {
    auto key = std::make_tuple(p.gpu, p.model, p.precision, p.image_size, p.scaling, p.batch_per_rank, p.world_size,
                               p.ddp);
    auto it = best.find(key);
    if (it == best.end()) {
      best.emplace(key, out.size());
      out.push_back(p);
    } else if (p.summary.n > out[it->second].summary.n) {
      out[it->second] = p;
    }
  }
  return out;
}

// The no-DDP row of the same model and per-rank batch: from the same file when there
// is one (the same launch), else from any file measuring the same configuration.
const Point* no_ddp_baseline(const std::vector<Point>& all, const Point& p) {
  const Point* found = nullptr;
  for (const auto& q : all) {
    if (q.ddp || q.gpu != p.gpu || q.model != p.model || q.precision != p.precision || q.image_size != p.image_size ||
        q.batch_per_rank != p.batch_per_rank)
      continue;
    if (q.source == p.source) return &q;
    if (!found) found = &q;
  }
  return found;
}

std::optional<double> exposed(const std::vector<Point>& all, const Point& p) {
  const Point* q = no_ddp_baseline(all, p);
  if (!q) return std::nullopt;
  return (p.summary.p50_s - q->summary.p50_s) / p.summary.p50_s;
}

// What a row's numbers depend on beyond model, batch and image size: its precision, and
// the settings that change the computation. "fp32" measured while cuDNN could use TF32
// (PyTorch's default math; ddpbench before schema 1.2) is a different setup from true fp32.
// TF32 exists only on GPUs: on CPU runs the recorded cuBLAS/cuDNN flags change nothing.
std::string setup_label(const ResultFile& f, const BenchResult& r) {
  std::string label = r.precision;
  const auto math = f.environment.is_object() && f.environment.contains("math") ? f.environment["math"]
                                                                              : nlohmann::json::object();
  const bool on_gpu = json_str_or(f.environment, "device_type") == "cuda";
  if (on_gpu && r.precision == "fp32" &&
      (json_true(math, "cudnn_allow_tf32") || json_true(math, "cublas_allow_tf32")))
    label += " (TF32 allowed)";
  if (json_true(f.config, "channels_last")) label += ", channels_last";
  if (json_true(f.config, "freeze_backbone"))
    label += ", frozen backbone + " + json_str_or(f.config, "head", "head");
  if (on_gpu && json_str_or(f.environment, "backend") == "gloo")
    label += ", gloo";
  return label;
}

// An integer environment field for display; 0 when absent or not an integer.
long long safe_int(const nlohmann::json& e, const char* key) {
  try {
    return json_int_or<long long>(e, key, 0);
  } catch (const std::invalid_argument&) {
    return 0;
  }
}

}  // namespace

std::string device_type(const ResultFile& f) {
  std::set<std::string> names;
  if (f.environment.contains("gpus") && f.environment["gpus"].is_array())
    for (const auto& g : f.environment["gpus"])
      if (const std::string name = json_str_or(g, "name"); !name.empty()) names.insert(name);
  if (names.empty()) {
    const std::string cpu = json_str_or(f.environment, "cpu_model");
    return cpu.empty() ? "CPU" : "CPU (" + cpu + ")";
  }
  if (names.size() == 1) return *names.begin();
  return "mixed: " + fmt::format("{}", fmt::join(names, " + "));
}

namespace {

// Flattens every row of every file into Points; rows that cannot be reported (no
// positive p50, absurd sizes) are dropped.
std::vector<Point> collect_points(const std::vector<NamedResult>& files) {
  std::vector<Point> pts;
  for (const auto& nf : files) {
    const std::string gpu = device_type(nf.file);
    for (const auto& r : nf.file.results) {
      // Rows that cannot be reported (no time, no ranks, absurd sizes) are skipped.
      // (The bounds keep batch x world size far inside long long.)
      if (!(r.summary.p50_s > 0) || r.world_size < 1 || r.world_size > 10'000'000 || r.batch_per_rank < 1 ||
          r.batch_per_rank > 1'000'000'000LL)
        continue;
      Point p;
      p.source = nf.name;
      p.gpu = gpu;
      p.model = r.model;
      p.precision = setup_label(nf.file, r);
      p.base_precision = r.precision;
      p.scaling = r.scaling;
      p.batch_per_rank = r.batch_per_rank;
      p.global_batch = r.global_batch > 0 ? r.global_batch : r.batch_per_rank * r.world_size;
      p.image_size = r.image_size;
      p.world_size = r.world_size;
      p.nodes = r.nodes;
      p.ddp = r.ddp;
      p.summary = r.summary;
      std::vector<double> pooled;
      for (const auto& rk : r.ranks) pooled.insert(pooled.end(), rk.samples_s.begin(), rk.samples_s.end());
      p.p5_s = pooled.empty() ? r.summary.p50_s : percentile(pooled, 5);
      p.tflops_per_gpu = json_num_opt(r.compute, "achieved_tflops_per_gpu");
      p.mfu = json_num_opt(r.compute, "mfu");
      pts.push_back(std::move(p));
    }
  }
  return pts;
}

}  // namespace

Report build_report(const std::vector<NamedResult>& files, const ReportOptions& opts) {
  if (opts.gpu_hour_usd && !(*opts.gpu_hour_usd > 0))
    throw UsageError(fmt::format("--gpu-hour-cost {} must be > 0 (USD per GPU-hour)", *opts.gpu_hour_usd));
  if (opts.epochs < 1) throw UsageError(fmt::format("--epochs {} must be >= 1", opts.epochs));
  if (opts.dataset_size < 1) throw UsageError(fmt::format("--dataset-size {} must be >= 1", opts.dataset_size));

  const std::vector<Point> all = collect_points(files);
  if (std::none_of(all.begin(), all.end(), [](const Point& p) { return p.ddp; }))
    throw UsageError("the result files hold no DDP measurement; pass files written by ddpbench run --json");
  const std::vector<Point> pts = best_points(all);
  Report rep;

  // Weak scaling: per (device, model, precision, batch per rank), DDP rows by world size.
  using GroupKey = std::tuple<std::string, std::string, std::string, int, long long>;
  std::map<GroupKey, std::vector<const Point*>> weak, strong;
  for (const auto& p : pts) {
    if (!p.ddp) continue;
    if (p.scaling == "strong") strong[{p.gpu, p.model, p.precision, p.image_size, p.global_batch}].push_back(&p);
    else weak[{p.gpu, p.model, p.precision, p.image_size, p.batch_per_rank}].push_back(&p);
  }
  for (auto& [key, rows] : weak) {
    std::sort(rows.begin(), rows.end(), [](const Point* a, const Point* b) { return a->world_size < b->world_size; });
    WeakTable t;
    std::tie(t.gpu, t.model, t.precision, t.image_size, t.batch_per_rank) = key;
    const Point* base = rows.front();
    t.base_precision = base->base_precision;
    if (const Point* nd = no_ddp_baseline(all, *base)) t.no_ddp_p50_s = nd->summary.p50_s;
    if (base->world_size == 1) {
      t.baseline_per_gpu_ex_s = base->batch_per_rank / base->summary.p50_s;
      t.baseline = "1-GPU DDP";
    } else if (t.no_ddp_p50_s) {
      t.baseline_per_gpu_ex_s = t.batch_per_rank / *t.no_ddp_p50_s;
      t.baseline = "no-DDP";
    } else {
      t.baseline_per_gpu_ex_s = base->batch_per_rank / base->summary.p50_s;
      t.baseline = fmt::format("{}-GPU DDP", base->world_size);
    }
    for (const Point* p : rows) {
      WeakRow w;
      w.world_size = p->world_size;
      w.nodes = p->nodes;
      w.per_gpu_ex_s = p->batch_per_rank / p->summary.p50_s;
      w.aggregate_ex_s = w.per_gpu_ex_s * p->world_size;
      w.efficiency = w.per_gpu_ex_s / t.baseline_per_gpu_ex_s;
      w.exposed_comm = exposed(all, *p);
      w.tflops_per_gpu = p->tflops_per_gpu;
      w.mfu = p->mfu;
      w.p5_s = p->p5_s;
      w.p50_s = p->summary.p50_s;
      w.p95_s = p->summary.p95_s;
      t.rows.push_back(w);
    }
    rep.weak.push_back(std::move(t));
  }
  for (auto& [key, rows] : strong) {
    std::sort(rows.begin(), rows.end(), [](const Point* a, const Point* b) { return a->world_size < b->world_size; });
    StrongTable t;
    std::tie(t.gpu, t.model, t.precision, t.image_size, t.global_batch) = key;
    const Point* base = rows.front();  // t(1) when the 1-GPU row exists (see METHODOLOGY.md)
    for (const Point* p : rows) {
      StrongRow s;
      s.world_size = p->world_size;
      s.nodes = p->nodes;
      s.batch_per_rank = p->batch_per_rank;
      s.step_s = p->summary.p50_s;
      s.speedup = base->summary.p50_s / p->summary.p50_s * base->world_size;
      s.efficiency = s.speedup / p->world_size;
      s.aggregate_ex_s = static_cast<double>(p->global_batch) / p->summary.p50_s;
      s.exposed_comm = exposed(all, *p);
      s.p5_s = p->p5_s;
      s.p95_s = p->summary.p95_s;
      t.rows.push_back(s);
    }
    rep.strong.push_back(std::move(t));
  }

  // Comparison: by device type when there are several, else by file.
  std::set<std::string> gpus;
  for (const auto& p : all) gpus.insert(p.gpu);
  const bool by_device = gpus.size() > 1;
  rep.comparison.by = by_device ? "device type" : "file";
  const std::vector<Point>& source = by_device ? pts : all;
  for (const auto& p : source) {
    const std::string g = by_device ? p.gpu : p.source;
    if (std::find(rep.comparison.groups.begin(), rep.comparison.groups.end(), g) == rep.comparison.groups.end())
      rep.comparison.groups.push_back(g);
  }
  if (rep.comparison.groups.size() > 1) {
    std::map<std::tuple<std::string, std::string, std::string, int, long long, int>, std::vector<std::optional<double>>>
        cells;
    for (const auto& p : source) {
      if (!p.ddp) continue;
      const std::string g = by_device ? p.gpu : p.source;
      const size_t gi = static_cast<size_t>(
          std::find(rep.comparison.groups.begin(), rep.comparison.groups.end(), g) - rep.comparison.groups.begin());
      auto& v = cells[{p.model, p.precision, p.scaling, p.image_size, p.batch_per_rank, p.world_size}];
      v.resize(rep.comparison.groups.size());
      if (!v[gi]) v[gi] = p.batch_per_rank / p.summary.p50_s;
    }
    std::vector<bool> used(rep.comparison.groups.size(), false);
    for (auto& [key, v] : cells) {
      if (std::count_if(v.begin(), v.end(), [](const auto& x) { return x.has_value(); }) < 2) continue;
      ComparisonRow row;
      std::tie(row.model, row.precision, row.scaling, row.image_size, row.batch_per_rank, row.world_size) = key;
      row.per_gpu_ex_s = v;
      for (size_t g = 0; g < v.size(); ++g) used[g] = used[g] || v[g].has_value();
      rep.comparison.rows.push_back(std::move(row));
    }
    // Keep the groups that appear in some row; ratios are to the first group with a value.
    std::vector<std::string> groups;
    for (size_t g = 0; g < used.size(); ++g)
      if (used[g]) groups.push_back(rep.comparison.groups[g]);
    for (auto& row : rep.comparison.rows) {
      std::vector<std::optional<double>> kept;
      for (size_t g = 0; g < used.size(); ++g)
        if (used[g]) kept.push_back(row.per_gpu_ex_s[g]);
      row.per_gpu_ex_s = kept;
      const auto first = std::find_if(kept.begin(), kept.end(), [](const auto& x) { return x.has_value(); });
      for (const auto& x : kept) row.ratio.push_back(x ? std::optional<double>(*x / **first) : std::nullopt);
    }
    rep.comparison.groups = groups;
  }
  if (rep.comparison.rows.empty()) rep.comparison.groups.clear();

  // Cost.
  if (opts.gpu_hour_usd) {
    const double price = *opts.gpu_hour_usd;
    const double samples = static_cast<double>(opts.epochs) * static_cast<double>(opts.dataset_size);
    auto cost_row = [&](int n, double aggregate) {
      CostRow c;
      c.world_size = n;
      c.aggregate_ex_s = aggregate;
      c.usd_per_million = price * n / 3600.0 * 1e6 / aggregate;
      c.hours = samples / aggregate / 3600.0;
      c.usd = c.hours * n * price;
      return c;
    };
    // One cost table per scaling table: (world size, aggregate ex/s) points.
    auto add = [&](const std::string& gpu, const std::string& model, const std::string& precision,
                   const char* scaling, int image, long long batch, const std::vector<std::pair<int, double>>& pts) {
      CostTable t{gpu, model, precision, scaling, image, batch, price, opts.epochs, opts.dataset_size, {}, 1};
      for (const auto& [n, aggregate] : pts) t.rows.push_back(cost_row(n, aggregate));
      const CostRow* best = &t.rows.front();
      for (const auto& r : t.rows)
        if (r.usd_per_million < best->usd_per_million) best = &r;
      t.best_world_size = best->world_size;
      rep.cost.push_back(std::move(t));
    };
    for (const auto& w : rep.weak) {
      std::vector<std::pair<int, double>> pts;
      for (const auto& r : w.rows) pts.emplace_back(r.world_size, r.aggregate_ex_s);
      add(w.gpu, w.model, w.precision, "weak", w.image_size, w.batch_per_rank, pts);
    }
    for (const auto& s : rep.strong) {
      std::vector<std::pair<int, double>> pts;
      for (const auto& r : s.rows) pts.emplace_back(r.world_size, r.aggregate_ex_s);
      add(s.gpu, s.model, s.precision, "strong", s.image_size, s.global_batch, pts);
    }
  }

  for (const auto& nf : files) {
    const auto& e = nf.file.environment;
    std::set<std::string> hosts;
    if (e.contains("hosts") && e["hosts"].is_array())
      for (const auto& h : e["hosts"])
        if (h.is_string()) hosts.insert(h.get<std::string>());
    rep.files.push_back({{"name", nf.name},
                         {"device", device_type(nf.file)},
                         {"created_utc", nf.file.created_utc},
                         {"tool", nf.file.tool},
                         {"torch", json_str_or(e, "torch")},
                         {"cuda", json_str_or(e, "cuda")},
                         {"nccl", json_str_or(e, "nccl")},
                         {"backend", json_str_or(e, "backend")},
                         {"world_size", safe_int(e, "world_size")},
                         {"hosts", hosts.size()}});
  }
  return rep;
}

std::vector<TextTable> report_tables(const Report& r) {
  std::vector<TextTable> out;
  for (const auto& w : r.weak) {
    TextTable t;
    t.title = fmt::format("Weak scaling: {}, {}, {}, batch {} per GPU, {}x{} images", w.model, w.precision, w.gpu,
                          with_thousands(w.batch_per_rank), w.image_size, w.image_size);
    t.header = {"GPUs", "nodes", "per-GPU ex/s", "aggregate ex/s", "efficiency", "exposed comm", "p50 s/iter"};
    const bool flops = std::any_of(w.rows.begin(), w.rows.end(), [](const WeakRow& x) { return x.tflops_per_gpu; });
    if (flops) {
      t.header.push_back("TFLOP/s/GPU");
      t.header.push_back("MFU");
    }
    for (const auto& row : w.rows) {
      t.rows.push_back({std::to_string(row.world_size), std::to_string(row.nodes), fmt_num(row.per_gpu_ex_s, 1),
                        fmt_num(row.aggregate_ex_s, 1), fmt_pct(row.efficiency), fmt_opt_pct(row.exposed_comm),
                        fmt_num(row.p50_s, 4)});
      if (flops) {
        t.rows.back().push_back(row.tflops_per_gpu ? fmt_num(*row.tflops_per_gpu, 2) : "n/a");
        t.rows.back().push_back(fmt_opt_pct(row.mfu));
      }
    }
    t.notes.push_back(fmt::format("efficiency = per-GPU ex/s / per-GPU ex/s of the {} row ({:.1f} ex/s); exposed "
                                  "comm = (t_DDP - t_noDDP) / t_DDP at p50{}",
                                  w.baseline, w.baseline_per_gpu_ex_s,
                                  w.no_ddp_p50_s ? fmt::format(", t_noDDP = {:.4f} s", *w.no_ddp_p50_s) : ""));
    out.push_back(std::move(t));
  }
  for (const auto& s : r.strong) {
    TextTable t;
    t.title = fmt::format("Strong scaling: {}, {}, {}, global batch {}, {}x{} images", s.model, s.precision, s.gpu,
                          with_thousands(s.global_batch), s.image_size, s.image_size);
    t.header = {"GPUs", "nodes", "batch/GPU", "time/step s", "speedup", "efficiency", "aggregate ex/s", "exposed comm"};
    for (const auto& row : s.rows)
      t.rows.push_back({std::to_string(row.world_size), std::to_string(row.nodes), std::to_string(row.batch_per_rank),
                        fmt_num(row.step_s, 4), fmt::format("{:.2f}x", row.speedup), fmt_pct(row.efficiency),
                        fmt_num(row.aggregate_ex_s, 1), fmt_opt_pct(row.exposed_comm)});
    t.notes.push_back(fmt::format("speedup = t({}) / t(N){}; efficiency = speedup / N; time/step at p50",
                                  s.rows.front().world_size,
                                  s.rows.front().world_size == 1 ? "" : fmt::format(" x {}", s.rows.front().world_size)));
    out.push_back(std::move(t));
  }
  if (!r.comparison.rows.empty()) {
    TextTable t;
    t.title = fmt::format("Per-GPU throughput by {} (ex/s per GPU; ratio to the first {} with a value)",
                          r.comparison.by, r.comparison.by);
    t.header = {"model", "precision", "image", "scaling", "batch/GPU", "GPUs"};
    for (size_t g = 0; g < r.comparison.groups.size(); ++g) {
      t.header.push_back(r.comparison.groups[g]);
      if (g > 0) t.header.push_back("ratio");
    }
    for (const auto& row : r.comparison.rows) {
      std::vector<std::string> cells = {row.model, row.precision, std::to_string(row.image_size), row.scaling,
                                        std::to_string(row.batch_per_rank), std::to_string(row.world_size)};
      for (size_t g = 0; g < row.per_gpu_ex_s.size(); ++g) {
        cells.push_back(row.per_gpu_ex_s[g] ? fmt_num(*row.per_gpu_ex_s[g], 1) : "n/a");
        if (g > 0) cells.push_back(row.ratio[g] ? fmt::format("{:.2f}x", *row.ratio[g]) : "n/a");
      }
      t.rows.push_back(std::move(cells));
    }
    out.push_back(std::move(t));
  }
  for (const auto& c : r.cost) {
    TextTable t;
    t.title = fmt::format(
        "Cost: {}, {}, {}, {}x{} images, {} scaling, {} {}; {:.2f} USD per GPU-hour, {} epochs of {} samples", c.model,
        c.precision, c.gpu, c.image_size, c.image_size, c.scaling, c.scaling == "weak" ? "batch per GPU" : "global batch",
        with_thousands(c.batch), c.gpu_hour_usd, c.epochs, with_thousands(c.dataset_size));
    t.header = {"GPUs", "aggregate ex/s", "USD per 1M samples", "time h", "cost USD"};
    for (const auto& row : c.rows)
      t.rows.push_back({std::to_string(row.world_size), fmt_num(row.aggregate_ex_s, 1), fmt_num(row.usd_per_million, 4),
                        fmt::format("{:.3g}", row.hours), fmt_num(row.usd, 2)});
    const auto best = std::find_if(c.rows.begin(), c.rows.end(), [&](const CostRow& x) { return x.world_size == c.best_world_size; });
    t.notes.push_back(fmt::format("Most cost-efficient: {} GPU(s), {:.4f} USD per 1M samples", c.best_world_size,
                                  best->usd_per_million));
    out.push_back(std::move(t));
  }
  return out;
}

std::string render_text(const Report& r) {
  std::string out;
  for (const auto& t : report_tables(r)) out += (out.empty() ? "" : "\n") + render_text(t);
  return out;
}

std::string render_markdown(const Report& r) {
  std::string out;
  for (const auto& t : report_tables(r)) out += (out.empty() ? "" : "\n") + render_markdown(t);
  return out;
}

std::string render_csv(const Report& r) {
  const std::vector<std::string> cols = {"table",  "device",       "model",         "precision",  "image_size", "scaling",
                                         "batch_per_rank", "global_batch", "world_size", "nodes",   "group",
                                         "per_gpu_ex_s",   "aggregate_ex_s", "step_s",   "speedup", "efficiency",
                                         "exposed_comm",   "ratio",         "p5_s",       "p50_s",   "p95_s",
                                         "usd_per_million", "hours",        "usd"};
  std::string out = fmt::format("{}\n", fmt::join(cols, ","));
  auto emit = [&](std::map<std::string, std::string> m) {
    std::vector<std::string> cells;
    for (const auto& c : cols) cells.push_back(csv_field(m[c]));
    out += fmt::format("{}\n", fmt::join(cells, ","));
  };
  auto num = [](double v) { return fmt::format("{:.6g}", v); };
  for (const auto& w : r.weak)
    for (const auto& row : w.rows)
      emit({{"table", "weak"}, {"device", w.gpu}, {"model", w.model}, {"precision", w.precision},
            {"image_size", std::to_string(w.image_size)}, {"scaling", "weak"},
            {"batch_per_rank", std::to_string(w.batch_per_rank)},
            {"global_batch", std::to_string(w.batch_per_rank * row.world_size)},
            {"world_size", std::to_string(row.world_size)}, {"nodes", std::to_string(row.nodes)},
            {"per_gpu_ex_s", num(row.per_gpu_ex_s)}, {"aggregate_ex_s", num(row.aggregate_ex_s)},
            {"efficiency", num(row.efficiency)}, {"exposed_comm", row.exposed_comm ? num(*row.exposed_comm) : ""},
            {"p5_s", num(row.p5_s)}, {"p50_s", num(row.p50_s)}, {"p95_s", num(row.p95_s)}});
  for (const auto& s : r.strong)
    for (const auto& row : s.rows)
      emit({{"table", "strong"}, {"device", s.gpu}, {"model", s.model}, {"precision", s.precision},
            {"image_size", std::to_string(s.image_size)}, {"scaling", "strong"},
            {"batch_per_rank", std::to_string(row.batch_per_rank)}, {"global_batch", std::to_string(s.global_batch)},
            {"world_size", std::to_string(row.world_size)}, {"nodes", std::to_string(row.nodes)},
            {"aggregate_ex_s", num(row.aggregate_ex_s)}, {"step_s", num(row.step_s)}, {"speedup", num(row.speedup)},
            {"efficiency", num(row.efficiency)}, {"exposed_comm", row.exposed_comm ? num(*row.exposed_comm) : ""},
            {"p5_s", num(row.p5_s)}, {"p50_s", num(row.step_s)}, {"p95_s", num(row.p95_s)}});
  for (const auto& row : r.comparison.rows)
    for (size_t g = 0; g < row.per_gpu_ex_s.size(); ++g)
      if (row.per_gpu_ex_s[g])
        emit({{"table", "comparison"}, {"group", r.comparison.groups[g]}, {"model", row.model},
              {"precision", row.precision}, {"image_size", std::to_string(row.image_size)}, {"scaling", row.scaling},
              {"batch_per_rank", std::to_string(row.batch_per_rank)}, {"world_size", std::to_string(row.world_size)},
              {"per_gpu_ex_s", num(*row.per_gpu_ex_s[g])}, {"ratio", row.ratio[g] ? num(*row.ratio[g]) : ""}});
  for (const auto& c : r.cost)
    for (const auto& row : c.rows)
      emit({{"table", "cost"}, {"device", c.gpu}, {"model", c.model}, {"precision", c.precision}, {"scaling", c.scaling},
            {"image_size", std::to_string(c.image_size)},
            {c.scaling == "weak" ? "batch_per_rank" : "global_batch", std::to_string(c.batch)},
            {"world_size", std::to_string(row.world_size)}, {"aggregate_ex_s", num(row.aggregate_ex_s)},
            {"usd_per_million", num(row.usd_per_million)}, {"hours", num(row.hours)}, {"usd", num(row.usd)}});
  return out;
}

nlohmann::json report_json(const Report& r) {
  using nlohmann::json;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json j = {{"weak", json::array()}, {"strong", json::array()}, {"comparison", json::object()},
            {"cost", json::array()}, {"files", r.files}};
  for (const auto& w : r.weak) {
    json rows = json::array();
    for (const auto& x : w.rows)
      rows.push_back({{"world_size", x.world_size}, {"nodes", x.nodes}, {"per_gpu_ex_s", x.per_gpu_ex_s},
                      {"aggregate_ex_s", x.aggregate_ex_s}, {"efficiency", x.efficiency},
                      {"exposed_comm", opt(x.exposed_comm)}, {"tflops_per_gpu", opt(x.tflops_per_gpu)},
                      {"mfu", opt(x.mfu)}, {"p5_s", x.p5_s}, {"p50_s", x.p50_s}, {"p95_s", x.p95_s}});
    j["weak"].push_back({{"device", w.gpu}, {"model", w.model}, {"precision", w.precision},
                         {"image_size", w.image_size}, {"batch_per_rank", w.batch_per_rank}, {"baseline", w.baseline},
                         {"baseline_per_gpu_ex_s", w.baseline_per_gpu_ex_s}, {"no_ddp_p50_s", opt(w.no_ddp_p50_s)},
                         {"rows", rows}});
  }
  for (const auto& s : r.strong) {
    json rows = json::array();
    for (const auto& x : s.rows)
      rows.push_back({{"world_size", x.world_size}, {"nodes", x.nodes}, {"batch_per_rank", x.batch_per_rank},
                      {"step_s", x.step_s}, {"speedup", x.speedup}, {"efficiency", x.efficiency},
                      {"aggregate_ex_s", x.aggregate_ex_s}, {"exposed_comm", opt(x.exposed_comm)}, {"p5_s", x.p5_s},
                      {"p95_s", x.p95_s}});
    j["strong"].push_back({{"device", s.gpu}, {"model", s.model}, {"precision", s.precision},
                           {"image_size", s.image_size}, {"global_batch", s.global_batch}, {"rows", rows}});
  }
  json cmp_rows = json::array();
  for (const auto& row : r.comparison.rows) {
    json per = json::array(), ratio = json::array();
    for (size_t g = 0; g < row.per_gpu_ex_s.size(); ++g) {
      per.push_back(opt(row.per_gpu_ex_s[g]));
      ratio.push_back(opt(row.ratio[g]));
    }
    cmp_rows.push_back({{"model", row.model}, {"precision", row.precision}, {"image_size", row.image_size},
                        {"scaling", row.scaling},
                        {"batch_per_rank", row.batch_per_rank}, {"world_size", row.world_size},
                        {"per_gpu_ex_s", per}, {"ratio", ratio}});
  }
  j["comparison"] = {{"by", r.comparison.by}, {"groups", r.comparison.groups}, {"rows", cmp_rows}};
  for (const auto& c : r.cost) {
    json rows = json::array();
    for (const auto& x : c.rows)
      rows.push_back({{"world_size", x.world_size}, {"aggregate_ex_s", x.aggregate_ex_s},
                      {"usd_per_million", x.usd_per_million}, {"hours", x.hours}, {"usd", x.usd}});
    j["cost"].push_back({{"device", c.gpu}, {"model", c.model}, {"precision", c.precision},
                         {"image_size", c.image_size}, {"scaling", c.scaling},
                         {"batch", c.batch}, {"gpu_hour_usd", c.gpu_hour_usd}, {"epochs", c.epochs},
                         {"dataset_size", c.dataset_size}, {"best_world_size", c.best_world_size}, {"rows", rows}});
  }
  return j;
}

}  // namespace ddpbench
