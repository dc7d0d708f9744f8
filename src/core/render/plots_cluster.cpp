// The cluster-validation plots: telemetry over time and per rank, stragglers, burn-in, pair
// bandwidth and find-max-bs trials. Torch-free.
#include "core/render/plots_internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/stats/stats.hpp"

namespace ddpbench::plots_internal {

namespace {

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

// The plot stem `s`, made unique among the stems already given out ("-2", "-3", ... appended),
// and recorded in `stems`.
std::string unique_stem(std::set<std::string>& stems, const std::string& s) {
  std::string t = s;
  for (int n = 2; stems.count(t); ++n) t = fmt::format("{}-{}", s, n);
  stems.insert(t);
  return t;
}

// ---- telemetry

// The ranks that kept their own telemetry series: (rank, its sampled telemetry).
using RankSeries = std::vector<std::pair<int, const TelemetrySummary*>>;

// The models of the cluster rows, in order of first appearance over all files.
std::vector<std::string> cluster_models(const Report& r) {
  std::vector<std::string> models;
  for (const auto& c : r.cluster)
    for (const auto& row : c.rows)
      if (std::find(models.begin(), models.end(), row.model) == models.end()) models.push_back(row.model);
  return models;
}

// The largest group of model `m` over all files (the first of the largest), with its file's device
// and path; row is null where no file has a group of `m`.
struct TelemetryGroup {
  const BenchResult* row = nullptr;
  std::string device, source;
};
TelemetryGroup largest_telemetry_group(const Report& r, const std::string& m) {
  TelemetryGroup best;
  for (const auto& c : r.cluster)
    if (const BenchResult* g = largest_group(c.rows, m); g && (!best.row || g->world_size > best.row->world_size)) {
      best.row = g;
      best.device = c.device;
      best.source = c.source;
    }
  return best;
}

// The ranks of `row` that kept their own series, in the row's rank order.
RankSeries ranks_with_series(const BenchResult& row) {
  RankSeries ranks;
  for (const auto& rk : row.ranks)
    if (const TelemetrySummary* s = sampled_telemetry(rk); s && s->series) ranks.emplace_back(rk.rank, s);
  return ranks;
}

// One statistic (`stat`: "min", "median", "max") over ranks of series `key` of the row's
// series_over_ranks `over` (NaN for a non-number); empty where `over` lacks it.
std::vector<double> band_of(const nlohmann::json* over, const char* key, const char* stat) {
  std::vector<double> v;
  if (over && over->contains(key) && (*over)[key].is_object() && (*over)[key].contains(stat) &&
      (*over)[key][stat].is_array())
    for (const auto& x : (*over)[key][stat]) v.push_back(x.is_number() ? x.get<double>() : NAN);
  return v;
}

// Each rank's series, in the order of `ranks`: time (s), utilization `metric` (%), SM clock (MHz).
struct RankColumns {
  std::vector<std::vector<double>> t, a, b;
};
RankColumns rank_columns(const RankSeries& ranks, const char* metric) {
  RankColumns c;
  for (const auto& [rank, s] : ranks) {
    c.t.push_back(series_of(*s, "t_s"));
    c.a.push_back(series_of(*s, metric));
    c.b.push_back(series_of(*s, "sm_clock_mhz"));
  }
  return c;
}

// The min/median/max band over ranks of the utilization (%) and the median SM clock (MHz), against
// time (s); `ranks` the number of ranks it is over (0 without a band).
struct TelemetryBand {
  std::vector<double> t, lo, mid, hi, clock_mid;
  size_t ranks = 0;
};

// The band: from the row's series over ranks, else (older files) from every rank's series.
TelemetryBand telemetry_band(const nlohmann::json* over, const char* metric, const RankSeries& ranks,
                             const RankColumns& cols) {
  TelemetryBand band;
  if (over && !band_of(over, metric, "median").empty()) {
    if (over->contains("t_s") && (*over)["t_s"].is_array())
      for (const auto& x : (*over)["t_s"]) band.t.push_back(x.is_number() ? x.get<double>() : NAN);
    band.lo = band_of(over, metric, "min"), band.mid = band_of(over, metric, "median"),
    band.hi = band_of(over, metric, "max");
    band.clock_mid = band_of(over, "sm_clock_mhz", "median");
    band.ranks = over->value("ranks", size_t{0});
  } else if (ranks.size() > kMaxRankLines) {
    band.t = cols.t[0];
    for (size_t i = 0; i < band.t.size(); ++i) {
      const auto u = spread(cols.a, i), c = spread(cols.b, i);
      band.lo.push_back(u[0]), band.mid.push_back(u[1]), band.hi.push_back(u[2]), band.clock_mid.push_back(c[1]);
    }
    band.ranks = ranks.size();
  }
  return band;
}

// The band's data block (index 0 of `p.data`) and its plot clauses (returned): the min-max area,
// the median line and, on GPUs, the median SM clock on the second axis.
std::string telemetry_band_block(PlotSpec& p, const TelemetryBand& band, const char* metric, bool gpu) {
  const std::string& dat = p.data_file;
  p.data = fmt::format("# {} ranks: t_s {}_min {}_median {}_max{}\n", band.ranks, metric, metric, metric,
                       gpu ? " sm_clock_mhz_median" : "");
  for (size_t i = 0; i < band.t.size(); ++i) {
    const auto at = [i](const std::vector<double>& v) { return i < v.size() ? v[i] : NAN; };
    p.data += fmt::format("{} {} {} {}{}\n", gnuplot_number(band.t[i]), gnuplot_number(at(band.lo)),
                          gnuplot_number(at(band.mid)), gnuplot_number(at(band.hi)),
                          gpu ? " " + gnuplot_number(at(band.clock_mid)) : "");
  }
  std::string cmd = fmt::format(
      "{} index 0 using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over {} "
      "ranks', '' index 0 using 1:3 with linespoints lw 2 pt 7 title 'median over ranks'",
      gq(dat), band.ranks);
  if (gpu) cmd += ", '' index 0 using 1:5 axes x1y2 with lines dt 2 lw 2 title 'median SM clock'";
  return cmd;
}

// One data block per rank (appended to `p.data` from block `index` on) and its plot clauses
// (appended to `cmd`): utilization (%) and, on GPUs without a band, SM clock (MHz) against time (s).
void telemetry_rank_blocks(PlotSpec& p, std::string& cmd, int index, const RankSeries& ranks, const RankColumns& cols,
                           const char* metric, bool gpu, bool band) {
  const std::string& dat = p.data_file;
  const auto& t = cols.t;
  const auto& a = cols.a;
  const auto& b = cols.b;
  for (size_t k = 0; k < ranks.size(); ++k, ++index) {
    p.data +=
        fmt::format("{}# rank {}: t_s {}{}\n", index ? "\n\n" : "", ranks[k].first, metric, gpu ? " sm_clock_mhz" : "");
    for (size_t i = 0; i < t[k].size(); ++i)
      p.data += fmt::format("{} {}{}\n", gnuplot_number(t[k][i]), gnuplot_number(i < a[k].size() ? a[k][i] : NAN),
                            gpu ? " " + gnuplot_number(i < b[k].size() ? b[k][i] : NAN) : "");
    cmd += fmt::format("{}{} index {} using 1:2 with linespoints lw {} pt 7 title 'rank {}{}'", cmd.empty() ? "" : ", ",
                       cmd.empty() ? gq(dat) : "''", index, band ? 1 : 2, ranks[k].first, gpu ? " SM util" : "");
    if (gpu && !band)
      cmd += fmt::format(", '' index {} using 1:3 axes x1y2 with lines dt 2 lw 1 title 'rank {} SM clock'", index,
                         ranks[k].first);
  }
}

// The telemetry plot of model `m`: utilization (%) and SM clock (MHz) per rank (or their band over
// ranks) against time (s) during the measured iterations, of its largest group; none without data.
std::optional<PlotSpec> telemetry_plot(const Report& r, const std::string& m, std::set<std::string>& stems) {
  const TelemetryGroup g = largest_telemetry_group(r, m);
  const BenchResult* best = g.row;
  if (!best) return std::nullopt;
  const RankSeries ranks = ranks_with_series(*best);  // the ranks that kept their own series
  // Schema 1.9: the group's min/median/max over ranks, as the row keeps it.
  const auto& sor = best->telemetry.series_over_ranks;
  const nlohmann::json* over = sor && sor->is_object() ? &*sor : nullptr;
  bool gpu = !band_of(over, "sm_util_pct", "median").empty();
  for (const auto& [rank, s] : ranks) gpu = gpu || !series_of(*s, "sm_util_pct").empty();
  const char* metric = gpu ? "sm_util_pct" : "cpu_util_pct";
  const RankColumns cols = rank_columns(ranks, metric);  // time, utilization, clock per rank
  const TelemetryBand bnd = telemetry_band(over, metric, ranks, cols);
  const bool band = !bnd.mid.empty() && bnd.ranks > 1;
  const bool lines = !ranks.empty() && ranks.size() <= kMaxRankLines;
  if (!band && std::all_of(cols.a.begin(), cols.a.end(), [](const auto& v) { return v.empty(); })) return std::nullopt;
  PlotSpec p;
  p.name = unique_stem(stems, slug(fmt::format("telemetry-{}-{}-{}", m, best->label, g.device)));
  p.tables.push_back({"telemetry", {{"source", g.source}}});
  p.data_file = p.name + ".dat";
  p.title = fmt::format("{}, {}, {}: {} per rank during the measured iterations", m, best->label, g.device,
                        gpu ? "SM utilization and SM clock" : "CPU utilization");
  std::string cmd;
  int index = 0;
  if (band) {
    cmd = telemetry_band_block(p, bnd, metric, gpu);
    index = 1;
  }
  if (lines) telemetry_rank_blocks(p, cmd, index, ranks, cols, metric, gpu, band);
  p.body = fmt::format(
      "set xlabel 'seconds into the measured iterations'\nset ylabel {}\nset yrange [0:*]\n{}"
      "set key outside below center horizontal\nplot {}\n",
      gq(gpu ? "SM utilization (%)" : "CPU utilization (% of one core)"),
      gpu ? "set y2label 'SM clock (MHz)'\nset y2tics\nset y2range [0:*]\nset ytics nomirror\n" : "", cmd);
  return p;
}

// ---- stragglers

// (rank, straggler score) of each rank of a straggler entry that has a numeric score, in entry order.
using StragglerScores = std::vector<std::pair<long long, double>>;
StragglerScores straggler_scores(const nlohmann::json& e) {
  StragglerScores sc;
  for (const auto& x : e["ranks"])
    if (x.is_object() && x.contains("score") && x["score"].is_number())
      sc.emplace_back(x.value("rank", -1LL), x["score"].get<double>());
  return sc;
}

// The scores as one bar per rank, with the threshold line: the data into `data`, the gnuplot
// commands returned.
std::string straggler_bars(std::string& data, const StragglerScores& sc, double thr, const std::string& dat) {
  data = fmt::format("# rank score (threshold {:g})\n", thr);
  for (const auto& [rank, s] : sc) data += fmt::format("{} {:.6g}\n", rank, s);
  return fmt::format(
      "set xlabel 'rank'\nset xtics 1\nset style fill solid 0.7 border -1\nset boxwidth 0.6 relative\n"
      "set xrange [-0.7:{}]\nplot {} using 1:2 with boxes title 'score', {:g} with lines dt 2 lw 2 "
      "title 'threshold {:g}'\n",
      static_cast<double>(sc.back().first) + 0.7, gq(dat), thr, thr);
}

// The scores sorted ascending (sorts `sc`) as one line over positions, with the threshold line
// (too many ranks for bars): the data into `data`, the gnuplot commands returned.
std::string straggler_sorted_line(std::string& data, StragglerScores& sc, double thr, const std::string& dat) {
  std::sort(sc.begin(), sc.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  data = fmt::format("# position rank score, sorted by score ({} ranks; threshold {:g})\n", sc.size(), thr);
  for (size_t i = 0; i < sc.size(); ++i) data += fmt::format("{} {} {:.6g}\n", i, sc[i].first, sc[i].second);
  return fmt::format(
      "set xlabel 'ranks sorted by score'\nplot {} using 1:3 with linespoints pt 7 ps 0.5 title "
      "'score', {:g} with lines dt 2 lw 2 title 'threshold {:g}'\n",
      gq(dat), thr, thr);
}

// The straggler plot of entry `e` of file `c`: the score per rank (fastest compute-only step / own)
// and the threshold; none where no rank has a score.
std::optional<PlotSpec> straggler_plot(const ClusterFile& c, const nlohmann::json& e, std::set<std::string>& stems) {
  StragglerScores sc = straggler_scores(e);
  if (sc.empty()) return std::nullopt;
  const double thr = e.contains("threshold") && e["threshold"].is_number() ? e["threshold"].get<double>() : 0.95;
  const std::string model = e.contains("model") && e["model"].is_string() ? e["model"].get<std::string>() : "?";
  PlotSpec p;
  p.name = unique_stem(stems, slug(fmt::format("stragglers-{}-{}-{}r", model, c.device, sc.size())));
  p.tables.push_back({"stragglers", {{"model", model}}});
  p.data_file = p.name + ".dat";
  p.title = fmt::format("{}, {}, {} ranks: straggler score per rank (threshold {:g})", model, c.device, sc.size(), thr);
  const std::string& dat = p.data_file;
  const std::string plot =
      sc.size() <= kMaxRankBars ? straggler_bars(p.data, sc, thr, dat) : straggler_sorted_line(p.data, sc, thr, dat);
  p.body =
      "set ylabel 'score = fastest compute-only step / own'\nset yrange [0:1.1]\nset key outside below center "
      "horizontal\n" +
      plot;
  return p;
}

// ---- burn-in

// One line per rank of ex/s against window start (s, windows of `w` s): the data into `data`, the
// plot clauses returned.
std::string burn_in_rank_lines(std::string& data, const std::vector<long long>& ranks,
                               const std::vector<std::vector<double>>& v, double w, const std::string& dat) {
  std::string cmd;
  for (size_t k = 0; k < v.size(); ++k) {
    data += fmt::format("{}# rank {}: start_s ex_per_s\n", k ? "\n\n" : "", ranks[k]);
    for (size_t i = 0; i < v[k].size(); ++i) data += fmt::format("{:g} {}\n", w * i, gnuplot_number(v[k][i]));
    cmd += fmt::format("{}{} index {} using 1:2 with linespoints lw 2 pt 7 title 'rank {}'", k ? ", " : "",
                       k ? "''" : gq(dat), k, ranks[k]);
  }
  return cmd;
}

// The min/median/max band over ranks of ex/s per window (`windows` of `w` s), against window start
// (s): the data into `data`, the plot clauses returned.
std::string burn_in_band(std::string& data, const std::vector<std::vector<double>>& v, size_t windows, double w,
                         const std::string& dat) {
  data = fmt::format("# {} ranks: start_s min_ex_per_s median_ex_per_s max_ex_per_s\n", v.size());
  for (size_t i = 0; i < windows; ++i) {
    const auto s = spread(v, i);
    data += fmt::format("{:g} {} {} {}\n", w * i, gnuplot_number(s[0]), gnuplot_number(s[1]), gnuplot_number(s[2]));
  }
  return fmt::format(
      "{} using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over ranks', '' "
      "using 1:3 with linespoints lw 2 pt 7 title 'median over ranks'",
      gq(dat));
}

// The burn-in plot of `row` of file `c`: ex/s per rank per window (or their band over ranks);
// none without a per-rank burn-in.
std::optional<PlotSpec> burn_in_plot(const ClusterFile& c, const BenchResult& row, std::set<std::string>& stems) {
  const RowBurnIn& b = row.burn_in;
  if (b.per_rank.empty()) return std::nullopt;
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
  p.name = unique_stem(stems, slug(fmt::format("burnin-{}-{}-{}", row.model, row.label, c.device)));
  p.tables.push_back(
      {"burn_in", {{"device", c.device}, {"model", row.model}, {"world_size", std::to_string(row.world_size)}}});
  p.data_file = p.name + ".dat";
  p.title = fmt::format("{}, {}, {}: burn-in, ex/s per rank per {:g} s window", row.model, row.label, c.device, w);
  const std::string& dat = p.data_file;
  const std::string cmd = v.size() <= kMaxRankLines ? burn_in_rank_lines(p.data, ranks, v, w, dat)
                                                    : burn_in_band(p.data, v, windows, w, dat);
  p.body = fmt::format(
      "set xlabel 'window start (s)'\nset ylabel 'examples/s per rank'\nset yrange [0:*]\n"
      "set key outside below center horizontal\nplot {}\n",
      cmd);
  return p;
}

}  // namespace

std::vector<PlotSpec> cluster_plots(const Report& r) {
  std::vector<PlotSpec> out;
  std::set<std::string> stems;
  // Telemetry: one plot per model, of its largest group over all files.
  for (const auto& m : cluster_models(r))
    if (auto p = telemetry_plot(r, m, stems)) out.push_back(std::move(*p));
  // Stragglers: the score per rank and the threshold.
  for (const auto& c : r.cluster)
    for (const auto& e : c.stragglers)
      if (auto p = straggler_plot(c, e, stems)) out.push_back(std::move(*p));
  // Burn-in: ex/s per rank per window.
  for (const auto& c : r.cluster)
    for (const auto& row : c.rows)
      if (auto p = burn_in_plot(c, row, stems)) out.push_back(std::move(*p));
  return out;
}

}  // namespace ddpbench::plots_internal
