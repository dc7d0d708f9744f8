#include "core/render/plots.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/launch/process.hpp"
#include "core/result/result.hpp"
#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

std::string gq(const std::string& s) { return gnuplot_quote(s); }  // plots.hpp gnuplot_quote

// A label for a gnuplot data file: double quotes dropped and control characters made spaces
// (a newline from a result file would split the row).
std::string data_label(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s;
}

// The stacked components of a breakdown bar, in stacking order (bottom first); they add up
// to the step (core/result/row_sections Phase).
constexpr std::array<std::pair<Phase, const char*>, 5> kStacked = {{{Phase::forward, "forward"},
                                                                    {Phase::backward_compute, "backward compute"},
                                                                    {Phase::exposed_comm, "exposed comm"},
                                                                    {Phase::optimizer, "optimizer"},
                                                                    {Phase::other, "other"}}};

// One table's data: GPUs, aggregate ex/s, ideal aggregate, efficiency %, per-GPU ex/s, p5, p50, p95;
// and its breakdown bars (label, stacked components in ms).
struct Series {
  std::string stem, what;             // file stem and "resnet50, fp32, <device>, weak scaling, batch 16/GPU"
  std::string unit;                   // "GPU", or "rank" on CPUs (unit_word)
  std::string label;                  // short, for a bar: "resnet50, bf16, channels_last, b256, 1 GPU (F13)"
  std::string device;                 // ConfigKey::device
  std::string model;                  // ConfigKey::model
  std::string file;                   // launch label of the first row
  std::string setup;                  // ConfigKey::setup_label()
  std::string size;                   // "batch 32 per GPU", "global batch 256"
  PlotAnchor table, breakdown;        // the weak or strong table drawn, and its breakdown table
  double no_ddp_ex_s = std::nan("");  // per-rank ex/s of the no-DDP baseline (weak), NaN without one
  std::vector<std::array<double, 8>> rows;
  std::vector<std::pair<std::string, std::array<double, kStacked.size()>>> bars;
};

// The context fields (Table::context, as text) every table of `k` has.
std::vector<std::pair<std::string, std::string>> key_fields(const ConfigKey& k) {
  return {{"device", k.device}, {"model", k.model}, {"setup", k.setup_label()}, {"image_size", std::to_string(k.image_size)}};
}

// The anchors of a weak or strong table of `k` (batch: "batch_per_rank" or "global_batch" and its
// value) and of its breakdown table.
void anchor_series(Series& s, const ConfigKey& k, const char* kind, const char* batch_key, long long batch) {
  s.table = {kind, key_fields(k)};
  s.table.context.emplace_back(batch_key, std::to_string(batch));
  s.breakdown = {"breakdown", key_fields(k)};
  s.breakdown.context.emplace_back("scaling", k.scaling);
}

// One bar per breakdown row that has a breakdown: "no DDP", "1 rank", "2 ranks", ...; a size
// whose ranks shared GPUs (`shared`: world size -> distinct GPUs) says so: "2 ranks, 1 GPU".
void add_bars(Series& s, const std::vector<BreakdownRow>& rows, const std::map<int, int>& shared) {
  for (const auto& b : rows) {
    if (!b.mean_s) continue;
    std::array<double, kStacked.size()> ms{};
    for (size_t i = 0; i < kStacked.size(); ++i) ms[i] = (*b.mean_s)[static_cast<size_t>(kStacked[i].first)] * 1e3;
    std::string label = "no DDP";
    if (b.ddp) {
      const auto sh = shared.find(b.world_size);
      label = sh == shared.end()
                  ? fmt::format("{} {}{}", b.world_size, s.unit, b.world_size == 1 ? "" : "s")
                  : fmt::format("{} ranks, {} GPU{}", b.world_size, sh->second, sh->second == 1 ? "" : "s");
    }
    s.bars.emplace_back(label, ms);
  }
}

// busbw against size for the `comm` results of one file: one line per collective, group of
// ranks (and dtype, where the file measured several).
struct CommSeries {
  std::string stem, what;
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> lines;  // title, (bytes, busbw GB/s)
  std::vector<PlotAnchor> tables;  // the file's collective tables
};

std::vector<CommSeries> comm_series_of(const Report& r) {
  std::vector<CommSeries> out;
  std::vector<std::string> sources;
  for (const auto& t : r.comm)
    if (std::find(sources.begin(), sources.end(), t.source) == sources.end()) sources.push_back(t.source);
  std::vector<std::string> stems;
  for (const auto& src : sources) {
    CommSeries s;
    std::string device;
    std::set<std::string> dtypes;
    for (const auto& t : r.comm)
      if (t.source == src)
        for (const auto& x : t.rows) dtypes.insert(x.dtype);
    for (const auto& t : r.comm) {
      if (t.source != src) continue;
      device = t.device;
      s.tables.push_back({"comm", {{"source", t.source}, {"collective", t.collective},
                                   {"world_size", std::to_string(t.world_size)}}});
      const bool cpu = t.device.rfind("CPU", 0) == 0;
      for (const auto& x : t.rows) {
        if (x.bytes <= 0 || !(x.busbw_gbps >= 0)) continue;  // a barrier has no size
        const std::string title = fmt::format("{}, {} {}{}{}", t.collective, t.world_size, cpu ? "rank" : "GPU",
                                              t.world_size == 1 ? "" : "s", dtypes.size() > 1 ? ", " + x.dtype : "");
        auto line = std::find_if(s.lines.begin(), s.lines.end(), [&](const auto& l) { return l.first == title; });
        if (line == s.lines.end()) {
          s.lines.push_back({title, {}});
          line = std::prev(s.lines.end());
        }
        line->second.emplace_back(static_cast<double>(x.bytes), x.busbw_gbps);
      }
    }
    if (s.lines.empty()) continue;
    for (auto& l : s.lines) std::sort(l.second.begin(), l.second.end());
    const std::string base = fs::path(src).stem().string();
    s.stem = "comm-" + slug(device + "-" + base) + "-busbw";
    for (int n = 2; std::find(stems.begin(), stems.end(), s.stem) != stems.end(); ++n)
      s.stem = fmt::format("comm-{}-{}-busbw", slug(device + "-" + base), n);
    stems.push_back(s.stem);
    s.what = fmt::format("{}, {}: bus bandwidth", device, src);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Series> series_of(const Report& r) {
  std::vector<Series> out;
  for (const auto& w : r.weak) {
    Series s;
    const ConfigKey& k = w.key;
    s.unit = unit_word(k);
    s.device = k.device;
    s.model = k.model;
    s.stem =
        slug(fmt::format("weak-{}-{}-{}-i{}-b{}", k.model, k.setup_label(), k.device, k.image_size, k.batch_per_rank));
    s.what = fmt::format("{}, {}, {}: weak scaling, batch {} per {}, {}x{}", k.model, k.setup_label(), k.device,
                         k.batch_per_rank, s.unit, k.image_size, k.image_size);
    s.setup = k.setup_label();
    s.size = fmt::format("batch {} per {}", k.batch_per_rank, s.unit);
    anchor_series(s, k, "weak", "batch_per_rank", k.batch_per_rank);
    // A row whose ranks shared a GPU measures sharing, not scaling: never a point of a curve.
    std::map<int, int> shared;
    for (const auto& x : w.rows) {
      if (x.shared_gpu) {
        shared[x.world_size] = x.devices;
        continue;
      }
      s.rows.push_back({double(x.world_size), x.aggregate_ex_s, w.baseline_per_gpu_ex_s * x.devices,
                        100.0 * x.efficiency, x.per_gpu_ex_s, x.p5_s, x.p50_s, x.p95_s});
    }
    if (w.no_ddp_p50_s && *w.no_ddp_p50_s > 0)
      s.no_ddp_ex_s = static_cast<double>(k.batch_per_rank) * k.grad_accum / *w.no_ddp_p50_s;
    if (!w.rows.empty()) {
      const WeakRow& first = w.rows.front();
      s.file = first.launch.file;
      s.label = fmt::format("{}, {}, b{}, {} {}{} ({})", k.model, k.setup_label(), k.batch_per_rank, first.devices,
                            s.unit, first.devices == 1 ? "" : "s", s.file);
    }
    add_bars(s, w.breakdown, shared);
    out.push_back(std::move(s));
  }
  for (const auto& t : r.strong) {
    Series s;
    const ConfigKey& k = t.key;
    s.unit = unit_word(k);
    s.device = k.device;
    s.model = k.model;
    s.stem =
        slug(fmt::format("strong-{}-{}-{}-i{}-gb{}", k.model, k.setup_label(), k.device, k.image_size, t.global_batch));
    s.what = fmt::format("{}, {}, {}: strong scaling, global batch {}, {}x{}", k.model, k.setup_label(), k.device,
                         t.global_batch, k.image_size, k.image_size);
    s.setup = k.setup_label();
    s.size = fmt::format("global batch {}", t.global_batch);
    anchor_series(s, k, "strong", "global_batch", t.global_batch);
    const auto& base = t.rows.front();
    s.file = base.launch.file;
    s.label = fmt::format("{}, {}, global b{}, {} {}{} ({})", k.model, k.setup_label(), t.global_batch, base.devices,
                          s.unit, base.devices == 1 ? "" : "s", base.launch.file);
    std::map<int, int> shared;
    for (const auto& x : t.rows) {
      if (x.shared_gpu) {  // as for weak scaling: not a point of a curve
        shared[x.world_size] = x.devices;
        continue;
      }
      s.rows.push_back({double(x.world_size), x.aggregate_ex_s, base.aggregate_ex_s * x.devices / base.devices,
                        100.0 * x.efficiency, x.aggregate_ex_s / x.devices, x.p5_s, x.step_s, x.p95_s});
    }
    add_bars(s, t.breakdown, shared);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<double> series_of(const TelemetrySummary& s, const char* key) {
  if (!s.series) return {};
  const auto it = s.series->find(key);
  return it == s.series->end() ? std::vector<double>{} : it->second;
}

// min, median, max of the finite values of column i over `cols`.
std::array<double, 3> spread(const std::vector<std::vector<double>>& cols, size_t i) {
  std::vector<double> v;
  for (const auto& c : cols)
    if (i < c.size() && std::isfinite(c[i])) v.push_back(c[i]);
  if (v.empty()) return {NAN, NAN, NAN};
  return {percentile(v, 0), percentile(v, 50), percentile(v, 100)};
}

std::vector<PlotSpec> cluster_plots(const Report& r) {
  std::vector<PlotSpec> out;
  std::set<std::string> stems;
  const auto unique = [&stems](std::string s) {
    std::string t = s;
    for (int n = 2; stems.count(t); ++n) t = fmt::format("{}-{}", s, n);
    stems.insert(t);
    return t;
  };
  // Telemetry: one plot per model, of its largest group over all files.
  std::vector<std::string> models;
  for (const auto& c : r.cluster)
    for (const auto& row : c.rows)
      if (std::find(models.begin(), models.end(), row.model) == models.end()) models.push_back(row.model);
  for (const auto& m : models) {
    const BenchResult* best = nullptr;
    std::string device, source;
    for (const auto& c : r.cluster)
      if (const BenchResult* g = largest_group(c.rows, m); g && (!best || g->world_size > best->world_size)) {
        best = g;
        device = c.device;
        source = c.source;
      }
    if (!best) continue;
    std::vector<std::pair<int, const TelemetrySummary*>> ranks;  // the ranks that kept their own series
    for (const auto& rk : best->ranks)
      if (const TelemetrySummary* s = sampled_telemetry(rk); s && s->series) ranks.emplace_back(rk.rank, s);
    // Schema 1.9: the group's min/median/max over ranks, as the row keeps it.
    const auto& sor = best->telemetry.series_over_ranks;
    const nlohmann::json* over = sor && sor->is_object() ? &*sor : nullptr;
    const auto band_of = [&](const char* key, const char* stat) {
      std::vector<double> v;
      if (over && over->contains(key) && (*over)[key].is_object() && (*over)[key].contains(stat) &&
          (*over)[key][stat].is_array())
        for (const auto& x : (*over)[key][stat]) v.push_back(x.is_number() ? x.get<double>() : NAN);
      return v;
    };
    bool gpu = !band_of("sm_util_pct", "median").empty();
    for (const auto& [rank, s] : ranks) gpu = gpu || !series_of(*s, "sm_util_pct").empty();
    const char* metric = gpu ? "sm_util_pct" : "cpu_util_pct";
    std::vector<std::vector<double>> t, a, b;  // time, utilization, clock per rank
    for (const auto& [rank, s] : ranks) {
      t.push_back(series_of(*s, "t_s"));
      a.push_back(series_of(*s, metric));
      b.push_back(series_of(*s, "sm_clock_mhz"));
    }
    // The band: from the row's series over ranks, else (older files) from every rank's series.
    std::vector<double> bt, blo, bmid, bhi, cmid;
    size_t band_ranks = 0;
    if (over && !band_of(metric, "median").empty()) {
      if (over->contains("t_s") && (*over)["t_s"].is_array())
        for (const auto& x : (*over)["t_s"]) bt.push_back(x.is_number() ? x.get<double>() : NAN);
      blo = band_of(metric, "min"), bmid = band_of(metric, "median"), bhi = band_of(metric, "max");
      cmid = band_of("sm_clock_mhz", "median");
      band_ranks = over->value("ranks", size_t{0});
    } else if (ranks.size() > kMaxRankLines) {
      bt = t[0];
      for (size_t i = 0; i < bt.size(); ++i) {
        const auto u = spread(a, i), c = spread(b, i);
        blo.push_back(u[0]), bmid.push_back(u[1]), bhi.push_back(u[2]), cmid.push_back(c[1]);
      }
      band_ranks = ranks.size();
    }
    const bool band = !bmid.empty() && band_ranks > 1;
    const bool lines = !ranks.empty() && ranks.size() <= kMaxRankLines;
    if (!band && std::all_of(a.begin(), a.end(), [](const auto& v) { return v.empty(); })) continue;
    PlotSpec p;
    p.name = unique(slug(fmt::format("telemetry-{}-{}-{}", m, best->label, device)));
    p.tables.push_back({"telemetry", {{"source", source}}});
    p.data_file = p.name + ".dat";
    p.title = fmt::format("{}, {}, {}: {} per rank during the measured iterations", m, best->label, device,
                          gpu ? "SM utilization and SM clock" : "CPU utilization");
    const std::string& dat = p.data_file;
    std::string cmd;
    int index = 0;
    if (band) {
      p.data = fmt::format("# {} ranks: t_s {}_min {}_median {}_max{}\n", band_ranks, metric, metric, metric,
                           gpu ? " sm_clock_mhz_median" : "");
      for (size_t i = 0; i < bt.size(); ++i) {
        const auto at = [i](const std::vector<double>& v) { return i < v.size() ? v[i] : NAN; };
        p.data +=
            fmt::format("{} {} {} {}{}\n", gnuplot_number(bt[i]), gnuplot_number(at(blo)), gnuplot_number(at(bmid)),
                        gnuplot_number(at(bhi)), gpu ? " " + gnuplot_number(at(cmid)) : "");
      }
      cmd = fmt::format(
          "{} index 0 using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over {} "
          "ranks', '' index 0 using 1:3 with linespoints lw 2 pt 7 title 'median over ranks'",
          gq(dat), band_ranks);
      if (gpu) cmd += ", '' index 0 using 1:5 axes x1y2 with lines dt 2 lw 2 title 'median SM clock'";
      index = 1;
    }
    if (lines) {
      for (size_t k = 0; k < ranks.size(); ++k, ++index) {
        p.data += fmt::format("{}# rank {}: t_s {}{}\n", index ? "\n\n" : "", ranks[k].first, metric,
                              gpu ? " sm_clock_mhz" : "");
        for (size_t i = 0; i < t[k].size(); ++i)
          p.data += fmt::format("{} {}{}\n", gnuplot_number(t[k][i]), gnuplot_number(i < a[k].size() ? a[k][i] : NAN),
                                gpu ? " " + gnuplot_number(i < b[k].size() ? b[k][i] : NAN) : "");
        cmd += fmt::format("{}{} index {} using 1:2 with linespoints lw {} pt 7 title 'rank {}{}'",
                           cmd.empty() ? "" : ", ", cmd.empty() ? gq(dat) : "''", index, band ? 1 : 2, ranks[k].first,
                           gpu ? " SM util" : "");
        if (gpu && !band)
          cmd += fmt::format(", '' index {} using 1:3 axes x1y2 with lines dt 2 lw 1 title 'rank {} SM clock'", index,
                             ranks[k].first);
      }
    }
    p.body = fmt::format(
        "set xlabel 'seconds into the measured iterations'\nset ylabel {}\nset yrange [0:*]\n{}"
        "set key outside below center horizontal\nplot {}\n",
        gq(gpu ? "SM utilization (%)" : "CPU utilization (% of one core)"),
        gpu ? "set y2label 'SM clock (MHz)'\nset y2tics\nset y2range [0:*]\nset ytics nomirror\n" : "", cmd);
    out.push_back(std::move(p));
  }
  // Stragglers: the score per rank and the threshold.
  for (const auto& c : r.cluster)
    for (const auto& e : c.stragglers) {
      std::vector<std::pair<long long, double>> sc;
      for (const auto& x : e["ranks"])
        if (x.is_object() && x.contains("score") && x["score"].is_number())
          sc.emplace_back(x.value("rank", -1LL), x["score"].get<double>());
      if (sc.empty()) continue;
      const double thr = e.contains("threshold") && e["threshold"].is_number() ? e["threshold"].get<double>() : 0.95;
      const std::string model = e.contains("model") && e["model"].is_string() ? e["model"].get<std::string>() : "?";
      PlotSpec p;
      p.name = unique(slug(fmt::format("stragglers-{}-{}-{}r", model, c.device, sc.size())));
      p.tables.push_back({"stragglers", {{"model", model}}});
      p.data_file = p.name + ".dat";
      p.title =
          fmt::format("{}, {}, {} ranks: straggler score per rank (threshold {:g})", model, c.device, sc.size(), thr);
      const std::string& dat = p.data_file;
      std::string plot;
      if (sc.size() <= kMaxRankBars) {
        p.data = fmt::format("# rank score (threshold {:g})\n", thr);
        for (const auto& [rank, s] : sc) p.data += fmt::format("{} {:.6g}\n", rank, s);
        plot = fmt::format(
            "set xlabel 'rank'\nset xtics 1\nset style fill solid 0.7 border -1\nset boxwidth 0.6 relative\n"
            "set xrange [-0.7:{}]\nplot {} using 1:2 with boxes title 'score', {:g} with lines dt 2 lw 2 "
            "title 'threshold {:g}'\n",
            static_cast<double>(sc.back().first) + 0.7, gq(dat), thr, thr);
      } else {
        std::sort(sc.begin(), sc.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
        p.data = fmt::format("# position rank score, sorted by score ({} ranks; threshold {:g})\n", sc.size(), thr);
        for (size_t i = 0; i < sc.size(); ++i) p.data += fmt::format("{} {} {:.6g}\n", i, sc[i].first, sc[i].second);
        plot = fmt::format(
            "set xlabel 'ranks sorted by score'\nplot {} using 1:3 with linespoints pt 7 ps 0.5 title "
            "'score', {:g} with lines dt 2 lw 2 title 'threshold {:g}'\n",
            gq(dat), thr, thr);
      }
      p.body =
          "set ylabel 'score = fastest compute-only step / own'\nset yrange [0:1.1]\nset key outside below center "
          "horizontal\n" +
          plot;
      out.push_back(std::move(p));
    }
  // Burn-in: ex/s per rank per window.
  for (const auto& c : r.cluster)
    for (const auto& row : c.rows) {
      const RowBurnIn& b = row.burn_in;
      if (b.per_rank.empty()) continue;
      const double w = b.window_s.value_or(1);
      std::vector<long long> ranks;
      std::vector<std::vector<double>> v;
      for (const BurnInRank& x : b.per_rank) {
        ranks.push_back(x.rank);
        v.push_back(x.ex_per_s);
      }
      size_t windows = 0;
      for (const auto& x : v) windows = std::max(windows, x.size());
      PlotSpec p;
      p.name = unique(slug(fmt::format("burnin-{}-{}-{}", row.model, row.label, c.device)));
      p.tables.push_back(
          {"burn_in", {{"device", c.device}, {"model", row.model}, {"world_size", std::to_string(row.world_size)}}});
      p.data_file = p.name + ".dat";
      p.title = fmt::format("{}, {}, {}: burn-in, ex/s per rank per {:g} s window", row.model, row.label, c.device, w);
      const std::string& dat = p.data_file;
      std::string cmd;
      if (v.size() <= kMaxRankLines) {
        for (size_t k = 0; k < v.size(); ++k) {
          p.data += fmt::format("{}# rank {}: start_s ex_per_s\n", k ? "\n\n" : "", ranks[k]);
          for (size_t i = 0; i < v[k].size(); ++i) p.data += fmt::format("{:g} {}\n", w * i, gnuplot_number(v[k][i]));
          cmd += fmt::format("{}{} index {} using 1:2 with linespoints lw 2 pt 7 title 'rank {}'", k ? ", " : "",
                             k ? "''" : gq(dat), k, ranks[k]);
        }
      } else {
        p.data = fmt::format("# {} ranks: start_s min_ex_per_s median_ex_per_s max_ex_per_s\n", v.size());
        for (size_t i = 0; i < windows; ++i) {
          const auto s = spread(v, i);
          p.data +=
              fmt::format("{:g} {} {} {}\n", w * i, gnuplot_number(s[0]), gnuplot_number(s[1]), gnuplot_number(s[2]));
        }
        cmd = fmt::format(
            "{} using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over ranks', '' "
            "using 1:3 with linespoints lw 2 pt 7 title 'median over ranks'",
            gq(dat));
      }
      p.body = fmt::format(
          "set xlabel 'window start (s)'\nset ylabel 'examples/s per rank'\nset yrange [0:*]\n"
          "set key outside below center horizontal\nplot {}\n",
          cmd);
      out.push_back(std::move(p));
    }
  return out;
}
}  // namespace

std::string slug(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!o.empty() && o.back() != '-') o += '-';
  }
  while (!o.empty() && o.back() == '-') o.pop_back();
  // A file name stays well under the file system's 255 bytes whatever a result file names:
  // a long stem keeps its first kMaxSlug characters and a hash of the whole, so two stems
  // that differ only past the cut stay distinct.
  constexpr size_t kMaxSlug = 120;
  if (o.size() > kMaxSlug) o = fmt::format("{}-{:016x}", o.substr(0, kMaxSlug), std::hash<std::string>{}(o));
  return o;
}

// The four panels of every series, in file-name order ("<stem>-<suffix>.png/.svg").
constexpr const char* kPanelSuffixes[] = {"throughput", "efficiency", "per-gpu", "latency"};

std::vector<std::string> plot_title_lines(const std::string& heading, const std::string& title) {
  const size_t w = kTitleLineChars;
  std::vector<std::string> lines;
  if (!heading.empty()) lines.push_back(heading.size() <= w ? heading : heading.substr(0, w - 3) + "...");
  std::string line;
  size_t start = 0;
  while (start < title.size()) {
    size_t end = title.find(' ', start);
    if (end == std::string::npos) end = title.size();
    std::string word = title.substr(start, end - start);
    start = end + 1;
    // A word longer than a line (a path, a long name) is cut into lines of its own.
    while (!word.empty()) {
      if (line.empty() && word.size() > w) {
        lines.push_back(word.substr(0, w));
        word = word.substr(w);
      } else if (line.empty()) {
        line = word, word.clear();
      } else if (line.size() + 1 + word.size() <= w) {
        line += " " + word, word.clear();
      } else {
        lines.push_back(line), line.clear();
      }
    }
  }
  if (!line.empty()) lines.push_back(line);
  if (lines.size() > kMaxTitleLines) {
    lines.resize(kMaxTitleLines);
    std::string& last = lines.back();
    last = (last.size() + 3 <= w ? last : last.substr(0, w - 3)) + "...";
  }
  return lines;
}

std::string gnuplot_number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "NaN"; }

std::string gnuplot_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) o += ' ';
    else if (c == '\'') o += "''";
    else o += c;
  }
  return o + "'";
}

void prepare_plot_dir(const std::string& dir) {
  if (find_program("gnuplot").empty())
    throw UsageError("--plots needs gnuplot; install it (apt-get install gnuplot-nox) or drop --plots");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError(fmt::format("--plots directory '{}' cannot be created ({}); choose a writable path", dir,
                                 ec ? ec.message() : "not a directory"));
}

namespace {

// The two terminals every plot is drawn with, for an image `height` pixels tall: (gnuplot
// terminal, file extension). pngcairo reads a font size in points at 96 dpi where the svg
// terminal reads pixels: 3/4 of kPlotFontPx draws the PNG's text as large as the SVG's.
std::array<std::pair<std::string, const char*>, 2> terminals(int height) {
  return {{{fmt::format("pngcairo size {},{} font 'DejaVu Sans,{:g}'", kPlotWidth, height, kPlotFontPx * 0.75),
            ".png"},
           {fmt::format("svg size {},{} font 'DejaVu Sans,{}' background '#ffffff'", kPlotWidth, height, kPlotFontPx),
            ".svg"}}};
}

// The gnuplot command that draws `lines` as the title, one under the other (a string
// expression: single-quoted parts joined by "\n"), without enhanced-text markup.
std::string title_command(const std::vector<std::string>& lines) {
  std::string e;
  for (size_t i = 0; i < lines.size(); ++i) e += (i ? " . \"\\n\" . " : "") + gq(lines[i]);
  return "set title " + (e.empty() ? std::string("''") : e) + " noenhanced\n";
}

// The script of one plot: reset, setup, then per terminal its output and body. `out` gives
// the output file of each extension.
template <class Out>
std::string plot_script(const PlotSpec& p, Out out) {
  // A legend below the plot keeps a line's height from the x axis' label above it.
  std::string s = "reset\nset encoding utf8\nset grid\nset key height 1\n" + p.setup;
  if (!s.empty() && s.back() != '\n') s += '\n';
  const std::string title = title_command(plot_title_lines(p.heading, p.title));
  for (const auto& [term, ext] : terminals(p.height))
    s += "set terminal " + term + "\nset output " + gq(out(ext)) + "\n" + title + p.body +
         (p.body.empty() || p.body.back() == '\n' ? "" : "\n") + "unset output\n";
  return s;
}

// Whether `v` has a finite value (a plot of nothing but NaN has nothing to draw).
bool any_finite(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// Whether `bytes` is a whole image of the kind `ext` names: a PNG ends with its IEND chunk
// (length 0, type "IEND", CRC ae426082; PNG specification, 11.2.5), an SVG with "</svg>" and
// white space.
bool image_complete(const std::string& bytes, const std::string& ext) {
  if (ext == ".png") {
    static const std::string iend("\x00\x00\x00\x00IEND\xae\x42\x60\x82", 12);
    return bytes.size() > iend.size() && bytes.compare(bytes.size() - iend.size(), iend.size(), iend) == 0;
  }
  const auto end = bytes.find_last_not_of(" \t\r\n");
  return end != std::string::npos && end + 1 >= 6 && bytes.compare(end + 1 - 6, 6, "</svg>") == 0;
}

}  // namespace

std::vector<Plot> draw_plots(const std::vector<PlotSpec>& specs, const std::string& dir, const std::string& script) {
  prepare_plot_dir(dir);
  const fs::path d = fs::absolute(dir);
  // Every file written here (and by gnuplot for it) is checked before any is written: a
  // symbolic link, device or read-only file planted in the folder is refused, not replaced.
  check_writable((d / script).string(), "--plots");
  for (const auto& p : specs) {
    if (!p.data_file.empty()) check_writable((d / p.data_file).string(), "--plots");
    for (const char* ext : {".png", ".svg"}) check_writable((d / (p.name + ext)).string(), "--plots");
  }
  std::vector<Plot> plots;
  std::set<std::string> data_written;
  std::string replay;  // the drawn plots' scripts, for people to re-run
  for (const auto& spec : specs) {
    Plot plot;
    plot.name = spec.name;
    plot.title = spec.heading.empty() ? spec.title : spec.heading + ": " + spec.title;
    plot.tables = spec.tables;
    plot.height = spec.height;
    if (!spec.skip.empty()) {
      plot.error = spec.skip;
      plots.push_back(std::move(plot));
      continue;
    }
    if (!spec.data_file.empty() && data_written.insert(spec.data_file).second)
      write_file_atomic((d / spec.data_file).string(), spec.data);
    std::map<std::string, std::string> tmp;  // extension -> temporary image
    const auto remove_tmp = [&tmp] {
      for (const auto& [ext, t] : tmp) ::unlink(t.c_str());
    };
    for (const auto& [term, ext] : terminals(spec.height)) tmp[ext] = temp_file_next_to((d / (spec.name + ext)).string());
    ProcessOptions gp;
    gp.cwd = d.string();
    gp.stdin_data = plot_script(spec, [&tmp](const char* ext) { return fs::path(tmp[ext]).filename().string(); });
    constexpr double kGnuplotTimeoutS = 60;  // one plot: well under a second
    const CaptureResult res = run_capture({"gnuplot", "-"}, gp, kGnuplotTimeoutS);
    if (!res.ok()) {
      remove_tmp();
      // gnuplot echoes the command, marks the column, then says '"-" line N: REASON' (or
      // "line N: REASON"): the reason is what people need.
      std::string first;
      std::istringstream lines(res.err);
      for (std::string l; std::getline(lines, l);) {
        if (const auto at = l.find("line "); at != std::string::npos) {
          const auto colon = l.find(": ", at);
          if (colon != std::string::npos && l.find_first_not_of("0123456789", at + 5) == colon) {
            first = l.substr(colon + 2);
            break;
          }
        }
        if (first.empty() && l.find_first_not_of(" \t^") != std::string::npos) first = l;
      }
      if (const auto b = first.find_first_not_of(' '); b != std::string::npos) first = first.substr(b);
      if (res.timed_out) first = fmt::format("no result after {:.0f} s, stopped", kGnuplotTimeoutS);
      else if (first.empty()) first = res.status.describe();
      plot.error = "gnuplot: " + first;
      plots.push_back(std::move(plot));
      continue;
    }
    // gnuplot exits 0 after a failed write (a full disk): an image counts only when it is
    // whole, a PNG ending in its IEND chunk, an SVG in its closing tag.
    for (const auto& [ext, t] : tmp) {
      if (!image_complete(read_text_file(t), ext)) {
        remove_tmp();
        throw std::runtime_error(
            fmt::format("gnuplot wrote an empty or truncated '{}' for {}{} (is the disk full?)", t, spec.name, ext));
      }
    }
    for (const auto& [ext, t] : tmp) commit_file(t, (d / (spec.name + ext)).string());
    plot.png = (d / (spec.name + ".png")).string();
    plot.svg = (d / (spec.name + ".svg")).string();
    replay += plot_script(spec, [&spec](const char* ext) { return spec.name + ext; });
    plots.push_back(std::move(plot));
  }
  write_file_atomic((d / script).string(), replay);
  return plots;
}


// Per-GPU ex/s at the p95 and at the p5 step time of a series row (N, aggregate, ideal,
// efficiency, per-GPU, p5, p50, p95): the slow and the fast end of its whisker; NaN without them.
static std::pair<double, double> whisker_ex_s(const std::array<double, 8>& r) {
  return {r[7] > 0 ? r[4] * r[6] / r[7] : std::nan(""), r[5] > 0 ? r[4] * r[6] / r[5] : std::nan("")};
}

// `s` cut to a label line of a bar chart (at most kBarLabelChars, "..." at a cut).
constexpr size_t kBarLabelChars = 54;
static std::string bar_line(const std::string& s) {
  const std::string t = data_label(s);
  return t.size() <= kBarLabelChars ? t : t.substr(0, kBarLabelChars - 3) + "...";
}

// A horizontal bar chart of `bars` bars, each under `lines` lines of its label (data columns
// 1..lines, drawn inside the plot at x = 0 so that the bars keep the plot's whole width), under a
// title of `title_lines` lines: the style, the ranges, the x label, the commands that draw the
// labels, the image's height, and where the centre of bar i's k-th of `per_slot` bars is
// (`bar_y[k]`, gnuplot's using expression) and half a bar's height (`bar_half`). The plot area is
// fixed in pixels (margins at screen coordinates), so the labels sit above their bars whatever
// the number of bars.
struct HBars {
  std::string setup, ranges, labels, bar_half;
  std::vector<std::string> bar_y;
  int height = kPlotHeight;
};
static HBars hbars(const std::string& xlabel, size_t bars, int lines, size_t title_lines, double top,
                   const std::string& dat, int per_slot = 1) {
  constexpr int kLine = 19, kPadTop = 5, kGap = 3, kBar = 20, kPadBottom = 9;  // pixels of a slot
  const int slot = kPadTop + lines * kLine + kGap + per_slot * kBar + kPadBottom;
  // gnuplot draws a title's last line 28.5 px above the plot and the others 22.5 px apart above
  // it, at kPlotFontPx; below the plot, its x tics and label (80 px), then the legend in at most
  // two rows.
  const int title = 46 + static_cast<int>(title_lines - 1) * 23, bottom = 80 + 2 * 23 + 8;
  const int area = static_cast<int>(bars) * slot;
  HBars h;
  h.height = title + area + bottom;
  // Margins and the legend at fixed pixels (the legend's top 80 px under the plot): gnuplot
  // places a legend below the plot over the x label when the margins are fixed.
  h.setup = fmt::format(
      "set style fill solid 0.5 border -1\nunset ytics\nset grid xtics\n"
      "set key at screen 0.5, screen {:.4f} center top horizontal samplen 2\n"
      "set lmargin 2\nset rmargin 3\nset tmargin at screen {:.4f}\nset bmargin at screen {:.4f}\n",
      static_cast<double>(bottom - 80) / h.height, 1.0 - static_cast<double>(title) / h.height,
      static_cast<double>(bottom) / h.height);
  // y: slot i spans [i - 0.5, i + 0.5], the first on top.
  h.ranges = fmt::format("set xlabel {}\nset yrange [{:.2f}:-0.5]\nset xrange [0:{:.6g}]\n", gq(xlabel),
                         static_cast<double>(bars) - 0.5, top > 0 ? top * 1.1 : 1.0);
  const auto at = [&](double px) { return px / slot - 0.5; };  // pixels from the slot's top, in y units
  for (int l = 0; l < lines; ++l)
    h.labels += fmt::format("{} using (0):($0{:+.4f}):{} with labels left offset 0.4,0 noenhanced notitle, ",
                            l ? "''" : gq(dat), at(kPadTop + (l + 0.5) * kLine), l + 1);
  for (int k = 0; k < per_slot; ++k)
    h.bar_y.push_back(fmt::format("($0{:+.4f})", at(kPadTop + lines * kLine + kGap + (k + 0.5) * kBar)));
  h.bar_half = fmt::format("({:.4f})", kBar / 2.0 / slot);
  return h;
}

// One horizontal bar per table measured at a single GPU count: per-GPU ex/s at the p50 step
// time, whiskers at the p95 and p5 step times, and the no-DDP baseline's per-GPU ex/s as an
// open circle; the labels name the configuration and the launch.
static PlotSpec single_point_bars(const std::vector<const Series*>& single) {
  PlotSpec spec;
  spec.name = "single-gpu-count-throughput";
  const bool gpu = std::any_of(single.begin(), single.end(), [](const Series* s) { return s->unit == "GPU"; });
  const bool cpu = std::any_of(single.begin(), single.end(), [](const Series* s) { return s->unit != "GPU"; });
  const std::string per = gpu && cpu ? "per GPU (per rank on CPUs)" : gpu ? "per GPU" : "per rank";
  spec.title = "Throughput " + per + " of the configurations measured at one size";
  spec.data_file = spec.name + ".dat";
  spec.data = "# model_size_launch setup ex_s_p50 ex_s_at_p95_time ex_s_at_p5_time no_ddp_ex_s\n";
  double top = 0;
  // The device in each label when the bars span several.
  const bool devices =
      std::any_of(single.begin(), single.end(), [&](const Series* o) { return o->device != single.front()->device; });
  for (const Series* s : single) {
    const double per_gpu = s->rows.front()[4];
    const auto [lo, hi] = whisker_ex_s(s->rows.front());
    const int n = static_cast<int>(s->rows.front()[0]);
    const std::string first = fmt::format("{}, {}, {} {}{} ({})", s->model, s->size, n, s->unit, n == 1 ? "" : "s", s->file);
    spec.data += fmt::format("\"{}\" \"{}\" {} {} {} {}\n", bar_line(first),
                             bar_line(s->setup + (devices ? ", " + s->device : "")), gnuplot_number(per_gpu),
                             gnuplot_number(lo), gnuplot_number(hi), gnuplot_number(s->no_ddp_ex_s));
    for (double v : {per_gpu, hi, s->no_ddp_ex_s})
      if (std::isfinite(v)) top = std::max(top, v);
    spec.tables.push_back(s->table);
  }
  const HBars h = hbars(fmt::format("examples/s {} (whiskers: p95 to p5 step)", gpu && cpu ? "per GPU or rank" : per),
                        single.size(), 2,
                        plot_title_lines(spec.heading, spec.title).size(), top, spec.data_file);
  spec.setup = h.setup;
  spec.height = h.height;
  spec.body = h.ranges + "plot " + h.labels +
              fmt::format(
                  "'' using ($3/2):{0}:($3/2):{1} with boxxyerror lc rgb '#4477aa' title 'DDP (p50 step)', "
                  "'' using 3:{0}:4:5 with xerrorbars pt 7 ps 0.4 lc rgb 'black' title 'p95 - p5', "
                  "'' using 6:{0} with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'\n",
                  h.bar_y[0], h.bar_half);
  if (!(top > 0)) spec.skip = "no finite throughput to draw";
  return spec;
}

// Per optimization-impact table: aggregate ex/s of the plain run and of each variant, as bars
// (the plain run first, in another colour), with the launch of each.
static std::vector<PlotSpec> impact_bars(const Report& r) {
  std::vector<PlotSpec> out;
  std::set<std::string> names;
  for (const auto& m : r.impact) {
    const ConfigKey& k = m.key;
    PlotSpec spec;
    std::string stem = slug(fmt::format("impact-{}-{}-{}-i{}-b{}-{}r", k.model, k.setup_label(), k.device, k.image_size,
                                        k.batch_per_rank, k.world_size));
    for (int i = 2; names.count(stem); ++i) stem = slug(fmt::format("{}-{}", stem, i));
    names.insert(stem);
    spec.name = stem;
    spec.heading = fmt::format("Optimization impact, DDP on {} {}s", k.world_size, unit_word(k));
    spec.title = fmt::format("{}, {}, batch {} per {}, {}", k.model, k.setup_label(), k.batch_per_rank, unit_word(k),
                             k.device);
    PlotAnchor a{"impact", key_fields(k)};
    a.context.emplace_back("batch_per_rank", std::to_string(k.batch_per_rank));
    a.context.emplace_back("world_size", std::to_string(k.world_size));
    spec.tables.push_back(std::move(a));
    spec.data_file = stem + ".dat";
    spec.data = "# technique aggregate_ex_s baseline(1/0)\n";
    double top = 0;
    for (const auto& row : m.rows) {
      const std::string label = bar_line(fmt::format("{} ({})", row.technique, row.launch.file));
      spec.data += fmt::format("\"{}\" {} {}\n", label, gnuplot_number(row.aggregate_ex_s), row.baseline ? 1 : 0);
      if (std::isfinite(row.aggregate_ex_s)) top = std::max(top, row.aggregate_ex_s);
    }
    const HBars h = hbars("aggregate examples/s (p50 step time)", m.rows.size(), 1,
                          plot_title_lines(spec.heading, spec.title).size(), top, spec.data_file);
    spec.setup = h.setup;
    spec.height = h.height;
    spec.body = h.ranges + "plot " + h.labels +
                fmt::format(
                    "'' using ($3 == 1 ? $2/2 : NaN):{0}:($2/2):{1} with boxxyerror lc rgb '#999999' "
                    "title 'DDP defaults', '' using ($3 == 0 ? $2/2 : NaN):{0}:($2/2):{1} with boxxyerror "
                    "lc rgb '#4477aa' title 'variant'\n",
                    h.bar_y[0], h.bar_half);
    if (!(top > 0)) spec.skip = "no finite throughput to draw";
    out.push_back(std::move(spec));
  }
  return out;
}

// Characters of a legend entry that fit beside its sample within kPlotWidth at kPlotFontPx.
constexpr size_t kKeyChars = 42;

// Tables of one model and scaling measured at two or more sizes, on several devices, setups or
// files: per-GPU ex/s against GPUs on one plot, a line each with whiskers at the p95 and p5 step
// times, and each table's no-DDP baseline as an open circle at its first size.
static std::vector<PlotSpec> overlays(const std::vector<const Series*>& series) {
  std::map<std::string, std::vector<const Series*>> by_model;
  for (const Series* s : series)
    if (s->rows.size() >= 2) by_model[s->stem.substr(0, s->stem.find('-')) + " " + s->model].push_back(s);
  std::vector<PlotSpec> out;
  for (const auto& [group, members] : by_model) {
    const auto& ss = members;  // C++17 lambdas cannot capture a structured binding (clang rejects it)
    if (ss.size() < 2) continue;
    PlotSpec spec;
    spec.name = slug("overlay-" + group);
    const bool gpu = std::all_of(ss.begin(), ss.end(), [](const Series* s) { return s->unit == "GPU"; });
    const std::string unit = gpu ? "GPU" : "rank";
    spec.title = fmt::format("{}: per-{} throughput of {} tables", group, unit, ss.size());
    spec.data_file = spec.name + ".dat";
    std::string cmd = "plot ";
    std::string nd = "# no-DDP baselines: size ex_s\n";
    double max_n = 1;
    std::vector<double> ys;
    // Each line names what tells the tables apart: setup, size, device (where they differ) and launch.
    const auto differ = [&](auto field) {
      return std::any_of(ss.begin(), ss.end(), [&](const Series* o) { return field(o) != field(ss.front()); });
    };
    const bool setups = differ([](const Series* o) { return o->setup; });
    const bool sizes = differ([](const Series* o) { return o->size; });
    const bool devices = differ([](const Series* o) { return o->device; });
    for (size_t i = 0; i < ss.size(); ++i) {
      spec.data +=
          (i ? "\n\n" : "") + fmt::format("# {}: size per_{}_ex_s at_p95 at_p5\n", data_label(ss[i]->label), unit);
      for (const auto& row : ss[i]->rows) {
        const auto [lo, hi] = whisker_ex_s(row);
        spec.data += fmt::format("{} {} {} {}\n", gnuplot_number(row[0]), gnuplot_number(row[4]), gnuplot_number(lo), gnuplot_number(hi));
        if (std::isfinite(row[0])) max_n = std::max(max_n, row[0]);
        ys.push_back(row[4]);
      }
      // The launch first, then device, setup and size: a legend entry wider than the plot would
      // make gnuplot drop the whole legend, so entries are cut at kKeyChars.
      std::string label = ss[i]->file;
      for (const auto& [on, part] : {std::pair{devices, ss[i]->device}, std::pair{setups, ss[i]->setup},
                                     std::pair{sizes, ss[i]->size}})
        if (on) label += (label == ss[i]->file ? ": " : ", ") + part;
      label = data_label(label);
      if (label.size() > kKeyChars) label = label.substr(0, kKeyChars - 3) + "...";
      cmd += fmt::format("{}{} index {} using 1:2:3:4 with yerrorlines lw 2 pt 7 title {} noenhanced", i ? ", " : "",
                         i ? "''" : gq(spec.data_file), i, gq(label));
      if (std::isfinite(ss[i]->no_ddp_ex_s))
        nd += fmt::format("{} {}\n", gnuplot_number(ss[i]->rows.front()[0]), gnuplot_number(ss[i]->no_ddp_ex_s));
      spec.tables.push_back(ss[i]->table);
    }
    spec.data += "\n\n" + nd;
    cmd += fmt::format(", '' index {} using 1:2 with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'", ss.size());
    // One legend line per table under the plot, with room made for them.
    spec.setup = "set logscale x 2\nset key outside below left vertical Left reverse samplen 2\n";
    spec.height = kPlotHeight + 20 * static_cast<int>(ss.size() + 1);
    spec.body = fmt::format("set ylabel {}\nset xlabel {}\nset xrange [0.7:{:.6g}]\nset yrange [0:*]\n",
                            gq("examples/s per " + unit + " (whiskers: p95 to p5 step)"),
                            gq(gpu ? "GPUs (ranks, log2 scale)" : "ranks (log2 scale)"), std::max(2.0, max_n * 1.4)) +
                cmd + "\n";
    if (!any_finite(ys)) spec.skip = "no finite throughput to draw";
    out.push_back(std::move(spec));
  }
  return out;
}

// Schema 1.7: per strategy table, at its largest world size, one pair of bars per line
// (strategy, checkpointing, precision): peak memory per rank and model state per rank, MiB.
static std::vector<PlotSpec> strategy_plots(const Report& r) {
  std::vector<PlotSpec> out;
  std::set<std::string> stems;
  for (const auto& t : r.strategy) {
    if (t.rows.empty()) continue;
    const int n = t.rows.back().world_size;  // rows are sorted by world size
    const std::string u = unit_word(t.key);
    const bool gpu = u == "GPU";
    PlotSpec p;
    std::string stem = slug(fmt::format("memory-{}-{}-i{}-b{}-{}r", t.key.model, t.key.device, t.key.image_size,
                                        t.key.scaling == "weak" ? t.key.batch_per_rank : t.key.global_batch, n));
    for (int k = 2; stems.count(stem); ++k) stem = fmt::format("{}-{}", stem, k);
    stems.insert(stem);
    p.name = stem;
    p.data_file = stem + ".dat";
    PlotAnchor a{"strategy", {{"device", t.key.device}, {"model", t.key.model},
                              {"image_size", std::to_string(t.key.image_size)}, {"scaling", t.key.scaling}}};
    if (t.key.scaling == "weak") a.context.emplace_back("batch_per_rank", std::to_string(t.key.batch_per_rank));
    p.tables.push_back(std::move(a));
    p.heading = fmt::format("Memory per {} by strategy", u);
    p.title = fmt::format("{}, {}, {} {}{}, {}", t.key.model, t.key.device, n, u, n == 1 ? "" : "s",
                          t.key.scaling == "weak" ? fmt::format("batch {} per {}", t.key.batch_per_rank, u)
                                                  : fmt::format("global batch {}", t.key.global_batch));
    const auto mib = [](const std::optional<double>& v) {
      return v ? fmt::format("{:.6g}", *v / (1024.0 * 1024.0)) : std::string("NaN");
    };
    // The peak the scaling tables print (row_metrics "peak_memory_bytes", the per-row accessor
    // of every "peak mem" column): allocated bytes on GPUs, peak RSS on CPUs.
    p.data = fmt::format("# line {}_MiB model_state_MiB ({} {}s)\n", gpu ? "peak_allocated" : "peak_rss", n, u);
    bool any_peak = false, any_state = false;
    size_t lines = 0;
    double top = 0;
    for (const auto& x : t.rows) {
      if (x.world_size != n) continue;
      // The tables' "peak mem" (row_metrics), else (a file without its telemetry copy) the same
      // max over ranks from the row's memory object.
      std::optional<double> peak = x.facts.metric("peak_memory_bytes");
      if (!peak) peak = gpu ? x.peak_allocated_bytes : x.peak_rss_bytes;
      any_peak = any_peak || peak;
      any_state = any_state || x.model_state_bytes;
      for (const auto& v : {peak, x.model_state_bytes})
        if (v && std::isfinite(*v)) top = std::max(top, *v / (1024.0 * 1024.0));
      const std::string label =
          fmt::format("{} {}{}", x.strategy, x.precision, x.activation_checkpointing ? " ckpt" : "");
      p.data += fmt::format("\"{}\" {} {}\n", bar_line(label), mib(peak), mib(x.model_state_bytes));
      ++lines;
    }
    const bool any_value = any_peak || any_state;
    // Per line a bar of its peak and one of its model state, where some line has a value.
    const HBars h = hbars(fmt::format("MiB per {}", u), lines, 1, plot_title_lines(p.heading, p.title).size(), top,
                          p.data_file, any_peak && any_state ? 2 : 1);
    std::string cmd;
    if (any_peak)
      cmd = fmt::format("'' using ($2/2):{}:($2/2):{} with boxxyerror lc rgb '#4477aa' title {}", h.bar_y[0],
                        h.bar_half,
                        gq(gpu ? "peak allocated (CUDA caching allocator)" : "peak RSS (process, upper bound)"));
    if (any_state)
      cmd += fmt::format("{}'' using ($3/2):{}:($3/2):{} with boxxyerror lc rgb '#ddaa33' title {}",
                         cmd.empty() ? "" : ", ", h.bar_y.back(), h.bar_half,
                         gq("model state (params + grads + optimizer)"));
    p.setup = h.setup;
    p.height = h.height;
    p.body = h.ranges + "plot " + h.labels + cmd + "\n";
    if (!any_value) p.skip = "no memory measured in these rows; older files do not record it";
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Plot> write_plots(const Report& r, const std::string& dir) {
  const auto series = series_of(r);
  const auto comm_series = comm_series_of(r);
  auto extra = cluster_plots(r);
  for (auto& p : strategy_plots(r)) extra.push_back(std::move(p));

  std::vector<PlotSpec> specs;
  // Tables measured at one GPU count make no scaling plot (one point is no curve): together
  // they make one bar chart of per-GPU ex/s.
  std::vector<const Series*> single, scaling;
  for (const auto& s : series) {
    scaling.push_back(&s);
    if (s.rows.size() == 1) single.push_back(&s);
  }
  if (!single.empty()) specs.push_back(single_point_bars(single));
  for (const auto& s : series) {
    const std::string dat = s.stem + ".dat";
    std::string data =
        fmt::format("# {}s aggregate_ex_s ideal_ex_s efficiency_pct per_{}_ex_s p5_s p50_s p95_s\n", s.unit, s.unit);
    std::vector<double> ys;
    double max_n = 1, max_eff = 100;
    for (const auto& row : s.rows) {
      data += fmt::format("{} {} {} {} {} {} {} {}\n", gnuplot_number(row[0]), gnuplot_number(row[1]), gnuplot_number(row[2]),
                          gnuplot_number(row[3]), gnuplot_number(row[4]), gnuplot_number(row[5]), gnuplot_number(row[6]), gnuplot_number(row[7]));
      if (std::isfinite(row[0])) max_n = std::max(max_n, row[0]);
      if (std::isfinite(row[3]) && row[3] < 1e4) max_eff = std::max(max_eff, row[3]);  // a sane axis
      ys.push_back(row[1]);
    }
    // The x label says GPUs only where there are GPUs.
    const std::string xrange = fmt::format("set xlabel {}\nset xrange [0.7:{:.6g}]\n",
                                           gq(s.unit == "GPU" ? "GPUs (ranks, log2 scale)" : "ranks (log2 scale)"),
                                           std::max(2.0, max_n * 1.4));
    struct Panel {
      const char* suffix;
      std::string title, ylabel, plot;
    };
    const std::vector<Panel> panels = {
        {kPanelSuffixes[0], "Aggregate throughput", fmt::format("throughput (examples/s, all {}s)", s.unit),
         fmt::format("set yrange [0:*]\nplot {} using 1:2 with linespoints lw 2 pt 7 title 'measured', '' using 1:3 "
                     "with lines dt 2 lw 2 title {}",
                     gq(dat), gq(fmt::format("ideal (baseline per-{} ex/s x {}s)", s.unit, s.unit)))},
        {kPanelSuffixes[1], "Scaling efficiency", "efficiency (%)",
         fmt::format("set yrange [0:{:.0f}]\nplot {} using 1:4 with linespoints lw 2 pt 7 title 'efficiency', 100 with "
                     "lines dt 2 title '100 %'",
                     max_eff * 1.1, gq(dat))},
        {kPanelSuffixes[2], fmt::format("Per-{} throughput", s.unit),
         fmt::format("throughput per {} (examples/s)", s.unit),
         fmt::format("set yrange [0:*]\nplot {} using 1:5 with linespoints lw 2 pt 7 title {}", gq(dat),
                     gq("per " + s.unit))},
        {kPanelSuffixes[3], "Time per iteration", "seconds per iteration",
         fmt::format("set yrange [0:*]\nplot {} using 1:7:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'",
                     gq(dat))},
    };
    for (const auto& p : panels) {
      if (s.rows.size() < 2) break;  // in the one-point bar chart
      PlotSpec spec;
      spec.name = s.stem + "-" + p.suffix;
      spec.heading = p.title;
      spec.title = s.what;
      spec.tables.push_back(s.table);
      spec.data_file = dat;
      spec.data = data;
      // The legend below the plot, never over a point.
      spec.setup = "set logscale x 2\nset key outside below center horizontal\n";
      spec.body = "set ylabel " + gq(p.ylabel) + "\n" + xrange + p.plot + "\n";
      if (!any_finite(ys)) spec.skip = "no finite throughput to draw";
      specs.push_back(std::move(spec));
    }
    if (s.bars.empty()) continue;
    // Stacked bars, one per world size (the no-DDP row first): where the step's time went.
    PlotSpec spec;
    spec.name = s.stem + "-breakdown";
    spec.heading = "Step breakdown";
    spec.title = s.what;
    spec.tables.push_back(s.breakdown);
    spec.data_file = spec.name + ".dat";
    spec.data = "# run";
    for (const auto& c : kStacked) spec.data += std::string(" ") + phase_key(c.first) + "(ms)";
    spec.data += '\n';
    double top = 0;
    for (const auto& [label, ms] : s.bars) {
      spec.data += '"' + label + '"';
      double sum = 0;
      for (double v : ms) {
        spec.data += " " + gnuplot_number(v);
        if (std::isfinite(v)) sum += v;
      }
      spec.data += '\n';
      top = std::max(top, sum);
    }
    std::string cmd = "plot ";
    for (size_t i = 0; i < kStacked.size(); ++i)
      cmd += fmt::format("{}{} using {}{} title {}", i ? ", " : "", i ? "''" : gq(spec.data_file), i + 2,
                         i ? "" : ":xtic(1)", gq(kStacked[i].second));
    spec.setup =
        "set key outside below center horizontal\nset style data histograms\nset style histogram rowstacked\n"
        "set style fill solid 0.85 border -1\nset boxwidth 0.6 relative\n";
    spec.body = "set ylabel " + gq("milliseconds per step (mean over ranks)") + "\nset xlabel " +
                gq(s.unit == "GPU" ? "GPUs (ranks)" : "ranks") + "\n" +
                fmt::format("set yrange [0:{:.6g}]\n", top > 0 && std::isfinite(top) ? top * 1.1 : 1.0) + cmd + "\n";
    if (!(top > 0)) spec.skip = "no finite step breakdown to draw";
    specs.push_back(std::move(spec));
  }
  for (auto& o : overlays(scaling)) specs.push_back(std::move(o));
  for (auto& b : impact_bars(r)) specs.push_back(std::move(b));
  for (const auto& s : comm_series) {
    // busbw against message size: blocks separated by two blank lines, one per line (gnuplot's index).
    PlotSpec spec;
    spec.name = s.stem;
    spec.title = s.what;
    spec.tables = s.tables;
    spec.data_file = s.stem + ".dat";
    std::vector<double> ys;
    for (size_t i = 0; i < s.lines.size(); ++i) {
      spec.data += (i ? "\n\n" : "") + std::string("# ") + s.lines[i].first + ": bytes busbw_gbps\n";
      for (const auto& [bytes, busbw] : s.lines[i].second) {
        spec.data += fmt::format("{:.0f} {}\n", bytes, gnuplot_number(busbw));
        ys.push_back(busbw);
      }
    }
    std::string cmd = "plot ";
    for (size_t i = 0; i < s.lines.size(); ++i)
      cmd += fmt::format("{}{} index {} using 1:2 with linespoints lw 2 pt 7 title {} noenhanced", i ? ", " : "",
                         i ? "''" : gq(spec.data_file), i, gq(s.lines[i].first));
    spec.setup = "set logscale x 2\nset format x '%.0b %BB'\nset key outside below center horizontal\n";
    spec.body = "set ylabel " + gq("busbw (GB/s)") + "\nset xlabel " + gq("message size (bytes, log2 scale)") +
                "\nset yrange [0:*]\n" + cmd + "\n";
    if (!any_finite(ys)) spec.skip = "no finite busbw to draw";
    specs.push_back(std::move(spec));
  }
  for (auto& e : extra) specs.push_back(std::move(e));
  return draw_plots(specs, dir, "plots.gp");
}

std::string markdown_plot_links(const std::vector<Plot>& plots, const std::string& relative_to) {
  if (plots.empty()) return "";
  std::string o = "\n## Plots\n";
  for (const auto& p : plots) {
    if (!p.error.empty()) {
      o += fmt::format("\nNot drawn: {} ({})\n", p.title, p.error);
      continue;
    }
    std::error_code ec;
    const auto rel =
        std::filesystem::relative(std::filesystem::absolute(p.png), std::filesystem::absolute(relative_to), ec);
    // Markdown link text and target: brackets and parentheses would end them early.
    std::string alt = p.title;
    for (char& c : alt)
      if (c == '[' || c == ']') c = ' ';
    std::string target = ec || rel.empty() ? p.png : rel.generic_string();
    std::string escaped;
    for (char c : target)
      escaped += c == ' ' ? std::string("%20") : c == '(' ? "%28" : c == ')' ? "%29" : std::string(1, c);
    o += fmt::format("\n![{}]({})\n", alt, escaped);
  }
  return o;
}

}  // namespace ddpbench
