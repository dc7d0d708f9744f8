// The cluster-validation plots: telemetry over time and per rank, stragglers, burn-in, pair
// bandwidth and find-max-bs trials. Torch-free.
#include "core/render/plots_internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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

}  // namespace

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

}  // namespace ddpbench::plots_internal
