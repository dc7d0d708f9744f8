// Scaling plots through gnuplot (pngcairo and svg terminals). Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report_analysis.hpp"

namespace ddpbench {

/// A report table a plot belongs to: the table's kind (Table::kind, "weak") and context
/// fields it must have (Table::context as text: "model" -> "resnet50"). render_html places the
/// plot beside the last table of the report that matches one of its anchors.
struct PlotAnchor {
  std::string kind;
  std::vector<std::pair<std::string, std::string>> context;
};

/// Pixel size of every plot (the SVG's viewBox and the PNG), unless a plot asks for a taller
/// one (PlotSpec::height: a bar chart of many bars). 560 px wide with text of kPlotFontPx, so a
/// page 400 px wide that shows the SVG about 380 px wide still draws its text at 10 px or more.
inline constexpr int kPlotWidth = 560;
inline constexpr int kPlotHeight = 440;
/// Size of every text of a plot, SVG pixels (the PNG draws the same size).
inline constexpr int kPlotFontPx = 15;

/// One plot, written as `<dir>/<name>.png` and `<dir>/<name>.svg`, or why it was not.
struct Plot {
  std::string name;      ///< file stem, e.g. "weak-resnet50-fp32-cpu-b16-throughput"
  std::string title;     ///< names model, precision, device and scaling mode
  std::string png, svg;  ///< paths written; both "" when the plot was not drawn
  std::string error;     ///< why it was not drawn (gnuplot's first line, or no finite value); "" when drawn
  std::vector<PlotAnchor> tables;  ///< the tables it belongs to; empty: its section's end
  int height = kPlotHeight;        ///< pixels (width kPlotWidth)
};

/// What draws one plot: its data file (a name in the plot folder, and its text; "" for
/// none) and the gnuplot commands that draw it: `setup` once after a reset, then per
/// terminal, after the output is set, the title and `body` (labels, ranges, the plot command).
struct PlotSpec {
  std::string name;
  std::string title;  ///< for people, and drawn as the plot's title (plot_title_lines)
  /// Drawn as the title's first line, before `title` (e.g. "scaling efficiency"); "" for none.
  std::string heading;
  std::string data_file, data;
  std::string setup, body;
  std::string skip;  ///< why not to draw it at all (e.g. "no finite value"); "" to draw
  std::vector<PlotAnchor> tables;  ///< Plot::tables
  int height = kPlotHeight;        ///< pixels
};

/// The lines a plot's title is drawn in: `heading` (when not empty) then `title` broken at
/// spaces into lines that fit the plot's width, at most kMaxTitleLines lines in all (the last
/// ends in "..." when the title is longer), so no line runs past the image's edges.
std::vector<std::string> plot_title_lines(const std::string& heading, const std::string& title);
/// Characters of a title line that fit kPlotWidth at kPlotFontPx (DejaVu Sans).
inline constexpr size_t kTitleLineChars = 54;
inline constexpr size_t kMaxTitleLines = 4;

/// Draws `specs` into `dir` (made by prepare_plot_dir), one gnuplot run each, so a plot
/// gnuplot refuses (no finite point, a range it cannot use) gets its Plot::error and the
/// others are still drawn. Data files go through write_file_atomic (a data file shared by
/// several specs is written once); gnuplot writes each image to a temporary name that is
/// renamed over `<name>.png` / `.svg` only when it succeeded, so a failed re-run leaves the
/// images of an earlier run as they were. `<dir>/<script>` is the replayable script of the
/// plots drawn. Throws UsageError when a link, device or read-only file is in the way
/// (before anything is written), std::runtime_error on a write failure (a full disk), an
/// empty image from gnuplot included.
std::vector<Plot> draw_plots(const std::vector<PlotSpec>& specs, const std::string& dir, const std::string& script);

/// Per-rank plots draw one line per rank up to this many ranks, else min/median/max bands.
inline constexpr size_t kMaxRankLines = 16;
/// The straggler plot labels one bar per rank up to this many ranks, else it draws the scores
/// sorted, as a line with points (thousands of labelled bars are unreadable).
inline constexpr size_t kMaxRankBars = 64;

/// Writes four plots per weak and per strong table of `r` into `dir` (created if
/// missing): aggregate ex/s vs GPUs with the ideal linear line, scaling efficiency (%)
/// vs GPUs, per-GPU ex/s vs GPUs, and p50 time per iteration with p5-p95 whiskers.
/// GPU counts are on a log2 axis. A row whose ranks shared a GPU (WeakRow/StrongRow
/// shared_gpu) is no point of any curve: it measures sharing, not scaling; a table left with
/// one size is a bar of the one-size bar chart, and its breakdown bar says "N ranks, M GPU".
/// Schema 1.6 (docs/METHODOLOGY.md "Reading the
/// cluster-validation report"): per model, the sampled telemetry of its largest group against
/// time ("telemetry-<model>...": SM utilization and SM clock per rank, CPU utilization on CPU
/// runs); per straggler entry the score per rank with the threshold ("stragglers-..."); per
/// burned-in row ex/s per rank against time ("burnin-..."); each bounded by kMaxRankLines and
/// kMaxRankBars. Schema 1.7: per strategy table (report_analysis.hpp StrategyTable), at its largest world
/// size, bars of peak memory (the "peak_memory_bytes" row metric the scaling tables print:
/// row_peak_memory_bytes) and model state per rank per strategy line ("memory-..."). Each
/// plot names the tables it belongs to (Plot::tables). Drawn by draw_plots (script
/// "plots.gp"): a plot that cannot be drawn says why in its Plot::error.
/// Throws UsageError when gnuplot is not installed or `dir` cannot be created, and as draw_plots.
std::vector<Plot> write_plots(const Report& r, const std::string& dir);

/// The plots as a Markdown section for a report written into the folder `relative_to`: "##
/// Plots", then per plot drawn its title and `![title](path.png)` with the path relative to that
/// folder (GitHub renders it), per plot not drawn why; "" for no plots.
std::string markdown_plot_links(const std::vector<Plot>& plots, const std::string& relative_to);

/// `v` as a number in a gnuplot data block: 6 significant digits (%.6g), "NaN" (gnuplot's
/// missing value) when not finite.
std::string gnuplot_number(double v);

/// `s` as a gnuplot single-quoted string: a quote is written twice, and control characters
/// become spaces (a newline would end the command and let the rest of a name taken from a
/// result file run as gnuplot, "!shell" included).
std::string gnuplot_quote(const std::string& s);

/// Checks that gnuplot is installed and creates `dir` (and its parents) for plots. Throws
/// UsageError naming the fix when gnuplot is missing or `dir` cannot be created.
void prepare_plot_dir(const std::string& dir);

/// Lower-case, dash-separated file-name stem of `s` ("NVIDIA H100 80GB" -> "nvidia-h100-80gb");
/// beyond 120 characters the first 120 and a 16-digit hash of the whole.
std::string slug(const std::string& s);

}  // namespace ddpbench
