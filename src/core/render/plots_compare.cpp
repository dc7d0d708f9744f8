// Plots that compare series: bars for series measured at one size, the optimization impact's
// techniques, overlays of several series, and strategies' throughput and memory. Torch-free.
#include "core/render/plots_internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace ddpbench::plots_internal {

namespace {

// A label for a gnuplot data file: double quotes dropped and control characters made spaces
// (a newline from a result file would split the row).
std::string data_label(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s;
}

// Per-GPU ex/s at the p95 and at the p5 step time of a series row (N, aggregate, ideal,
// efficiency, per-GPU, p5, p50, p95): the slow and the fast end of its whisker; NaN without them.
static std::pair<double, double> whisker_ex_s(const std::array<double, 10>& r) {
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

// Characters of a legend entry that fit beside its sample within kPlotWidth at kPlotFontPx.
constexpr size_t kKeyChars = 42;

}  // namespace

// One horizontal bar per table measured at a single GPU count: per-GPU ex/s at the p50 step
// time, whiskers at the p95 and p5 step times, and the no-DDP baseline's per-GPU ex/s as an
// open circle; the labels name the configuration and the launch.
PlotSpec single_point_bars(const std::vector<const Series*>& single) {
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
    // A bar a warning voids says so in its label.
    const std::string voided = s->rows.front()[8] != 0 ? " (VOID: " + s->voided.substr(s->voided.find(": ") + 2) + ")" : "";
    spec.data += fmt::format("\"{}\" \"{}\" {} {} {} {}\n", bar_line(first),
                             bar_line(s->setup + (devices ? ", " + s->device : "") + voided), gnuplot_number(per_gpu),
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
std::vector<PlotSpec> impact_bars(const Report& r) {
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

// Tables of one model and scaling measured at two or more sizes, on several devices, setups or
// files: per-GPU ex/s against GPUs on one plot, a line each with whiskers at the p95 and p5 step
// times, and each table's no-DDP baseline as an open circle at its first size.
std::vector<PlotSpec> overlays(const std::vector<const Series*>& series) {
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
        if (row[8] != 0) continue;  // a point a warning voids is left out of the overlay
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
std::vector<PlotSpec> strategy_plots(const Report& r) {
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
      // The tables' "peak mem": the row metric, row_peak_memory_bytes (core/result/row_memory).
      std::optional<double> peak = x.facts.metric("peak_memory_bytes");
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

}  // namespace ddpbench::plots_internal
