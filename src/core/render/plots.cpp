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
#include "core/render/plots_internal.hpp"
#include "core/util/errors.hpp"

namespace fs = std::filesystem;

namespace ddpbench {

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

// The panels of every series, in file-name order ("<stem>-<suffix>.png/.svg"); "tokens" only for a language model's.
constexpr const char* kPanelSuffixes[] = {"throughput", "efficiency", "per-gpu", "latency", "tokens"};


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

namespace {

// A scaling series' data file (".dat", one line per point) and what its panels' axes need:
// the aggregate ex/s drawn, the largest rank count, the largest sane efficiency (%), and
// whether a point's throughput or efficiency is voided.
struct ScalingData {
  std::string data;
  std::vector<double> ys;
  double max_n = 1, max_eff = 100;
  bool any_tv = false, any_ev = false;
};

// The data file of series `s` and the ranges of its points (ScalingData).
ScalingData scaling_data(const plots_internal::Series& s) {
  ScalingData sd;
  sd.data = fmt::format(
      "# {}s aggregate_ex_s ideal_ex_s efficiency_pct per_{}_ex_s p5_s p50_s p95_s throughput_voided "
      "efficiency_voided\n",
      s.unit, s.unit);
  for (const auto& row : s.rows) {
    std::string line;
    for (const double v : row) line += (line.empty() ? "" : " ") + gnuplot_number(v);
    sd.data += line + "\n";
    sd.any_tv = sd.any_tv || row[8] != 0;
    sd.any_ev = sd.any_ev || row[9] != 0;
    if (std::isfinite(row[0])) sd.max_n = std::max(sd.max_n, row[0]);
    if (std::isfinite(row[3]) && row[3] < 1e4) sd.max_eff = std::max(sd.max_eff, row[3]);  // a sane axis
    sd.ys.push_back(row[1]);
  }
  return sd;
}

// One panel of a scaling series: file-name suffix, heading, y label and gnuplot plot command.
struct ScalingPanel {
  const char* suffix;
  std::string title, ylabel, plot;
};

// The panels of series `s` (throughput, efficiency, per-unit throughput, time per iteration,
// and a language model's tokens/s), in kPanelSuffixes order, drawn from data file `dat`.
std::vector<ScalingPanel> scaling_panels(const plots_internal::Series& s, const std::string& dat,
                                         const ScalingData& sd) {
  using plots_internal::gq;
  // A point a warning voids is no point of the curve: drawn apart, hollow, in the legend as such
  // (column 9: its throughput is voided, 10: its efficiency).
  const auto kept = [](int col, int flag) { return fmt::format("(${}==0?${}:1/0)", flag, col); };
  const auto apart = [](int col, int flag) {
    return fmt::format(", '' using 1:(${}!=0?${}:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title "
                       "'voided by a warning'",
                       flag, col);
  };
  std::vector<ScalingPanel> panels = {
      {kPanelSuffixes[0], "Aggregate throughput", fmt::format("throughput (examples/s, all {}s)", s.unit),
       fmt::format("set yrange [0:*]\nplot {} using 1:{} with linespoints lw 2 pt 7 title 'measured', '' using 1:3 "
                   "with lines dt 2 lw 2 title {}{}",
                   gq(dat), kept(2, 9), gq(fmt::format("ideal (baseline per-{} ex/s x {}s)", s.unit, s.unit)),
                   sd.any_tv ? apart(2, 9) : "")},
      {kPanelSuffixes[1], "Scaling efficiency", "efficiency (%)",
       fmt::format("set yrange [0:{:.0f}]\nplot {} using 1:{} with linespoints lw 2 pt 7 title 'efficiency', 100 "
                   "with lines dt 2 title '100 %'{}",
                   sd.max_eff * 1.1, gq(dat), kept(4, 10), sd.any_ev ? apart(4, 10) : "")},
      {kPanelSuffixes[2], fmt::format("Per-{} throughput", s.unit),
       fmt::format("throughput per {} (examples/s)", s.unit),
       fmt::format("set yrange [0:*]\nplot {} using 1:{} with linespoints lw 2 pt 7 title {}{}", gq(dat),
                   kept(5, 9), gq("per " + s.unit), sd.any_tv ? apart(5, 9) : "")},
      {kPanelSuffixes[3], "Time per iteration", "seconds per iteration",
       fmt::format("set yrange [0:*]\nplot {} using 1:{}:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers "
                   "p5-p95'{}",
                   gq(dat), kept(7, 9), sd.any_tv ? apart(7, 9) : "")},
  };
  // A language model's series: its aggregate tokens/s too (ex/s x tokens per sequence).
  if (s.seq_len > 0) {
    const std::string tokens = fmt::format("($2*{})", s.seq_len), ideal = fmt::format("($3*{})", s.seq_len);
    panels.push_back(
        {kPanelSuffixes[4], "Aggregate tokens/s", fmt::format("tokens/s (all {}s; {} tokens per sequence)", s.unit,
                                                              s.seq_len),
         fmt::format("set yrange [0:*]\nplot {} using 1:($9==0?{}:1/0) with linespoints lw 2 pt 7 title 'measured', "
                     "'' using 1:{} with lines dt 2 lw 2 title {}{}",
                     gq(dat), tokens, ideal, gq(fmt::format("ideal (baseline per-{} tokens/s x {}s)", s.unit, s.unit)),
                     sd.any_tv ? fmt::format(", '' using 1:($9!=0?{}:1/0) with points pt 6 ps 2 lw 2 lc rgb "
                                             "'#cc3311' title 'voided by a warning'",
                                             tokens)
                               : "")});
  }
  return panels;
}

// Appends the four scaling plots of series `s` to `specs`; none for a series of one point
// (it is in the one-point bar chart).
void append_scaling_specs(const plots_internal::Series& s, std::vector<PlotSpec>& specs) {
  using plots_internal::gq;
  const std::string dat = s.stem + ".dat";
  const ScalingData sd = scaling_data(s);
  // The x label says GPUs only where there are GPUs.
  const std::string xrange = fmt::format("set xlabel {}\nset xrange [0.7:{:.6g}]\n",
                                         gq(s.unit == "GPU" ? "GPUs (ranks, log2 scale)" : "ranks (log2 scale)"),
                                         std::max(2.0, sd.max_n * 1.4));
  const std::vector<ScalingPanel> panels = scaling_panels(s, dat, sd);
  for (const auto& p : panels) {
    if (s.rows.size() < 2) break;  // in the one-point bar chart
    PlotSpec spec;
    spec.name = s.stem + "-" + p.suffix;
    spec.heading = p.title;
    spec.title = s.what;
    if (!s.voided.empty()) spec.title += "; voided: " + s.voided;
    spec.tables.push_back(s.table);
    spec.data_file = dat;
    spec.data = sd.data;
    // The legend below the plot, never over a point.
    spec.setup = "set logscale x 2\nset key outside below center horizontal\n";
    spec.body = "set ylabel " + gq(p.ylabel) + "\n" + xrange + p.plot + "\n";
    if (!plots_internal::any_finite(sd.ys)) spec.skip = "no finite throughput to draw";
    specs.push_back(std::move(spec));
  }
}

// The stacked step-breakdown bars of series `s` (ms per step, one bar per world size).
PlotSpec breakdown_spec(const plots_internal::Series& s) {
  using plots_internal::gq;
  using plots_internal::kStacked;
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
  return spec;
}

// The busbw (GB/s) against message size (bytes) plot of one `comm` file's series `s`.
PlotSpec busbw_spec(const plots_internal::CommSeries& s) {
  using plots_internal::gq;
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
  if (!plots_internal::any_finite(ys)) spec.skip = "no finite busbw to draw";
  return spec;
}

}  // namespace

std::vector<Plot> write_plots(const Report& r, const std::string& dir) {
  using namespace plots_internal;  // the series and plot builders (plots_internal.hpp)
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
    append_scaling_specs(s, specs);
    if (!s.bars.empty()) specs.push_back(breakdown_spec(s));
  }
  for (auto& o : overlays(scaling)) specs.push_back(std::move(o));
  for (auto& b : impact_bars(r)) specs.push_back(std::move(b));
  for (const auto& s : comm_series) specs.push_back(busbw_spec(s));
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
