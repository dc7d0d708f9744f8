// Scaling plots through gnuplot (pngcairo and svg terminals). Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report.hpp"

namespace ddpbench {

/// One plot, written as `<dir>/<name>.png` and `<dir>/<name>.svg`.
struct Plot {
  std::string name;      ///< file stem, e.g. "weak-resnet50-fp32-cpu-b16-throughput"
  std::string title;     ///< names model, precision, device and scaling mode
  std::string png, svg;  ///< paths written
};

/// Pixel size of every plot.
inline constexpr int kPlotWidth = 900;
inline constexpr int kPlotHeight = 560;

/// Per-rank plots draw one line per rank up to this many ranks, else min/median/max bands.
inline constexpr size_t kMaxRankLines = 16;
/// The straggler plot labels one bar per rank up to this many ranks, else it draws the scores
/// sorted, as a line with points (thousands of labelled bars are unreadable).
inline constexpr size_t kMaxRankBars = 64;

/// Writes four plots per weak and per strong table of `r` into `dir` (created if
/// missing): aggregate ex/s vs GPUs with the ideal linear line, scaling efficiency (%)
/// vs GPUs, per-GPU ex/s vs GPUs, and p50 time per iteration with p5-p95 whiskers.
/// GPU counts are on a log2 axis. Schema 1.6 (docs/METHODOLOGY.md "Reading the
/// cluster-validation report"): per model, the sampled telemetry of its largest group against
/// time ("telemetry-<model>...": SM utilization and SM clock per rank, CPU utilization on CPU
/// runs); per straggler entry the score per rank with the threshold ("stragglers-..."); per
/// burned-in row ex/s per rank against time ("burnin-..."); each bounded by kMaxRankLines and
/// kMaxRankBars. Schema 1.7: per strategy table (report.hpp StrategyTable), at its largest world
/// size, peak memory and model state per rank as bars per strategy line ("memory-..."). Throws UsageError when gnuplot
/// is not installed or `dir` cannot be created; std::runtime_error when gnuplot fails (its first line).
std::vector<Plot> write_plots(const Report& r, const std::string& dir);

/// `s` as a gnuplot single-quoted string: a quote is written twice, and control characters
/// become spaces (a newline would end the command and let the rest of a name taken from a
/// result file run as gnuplot, "!shell" included).
std::string gnuplot_quote(const std::string& s);

/// Checks that gnuplot is installed and creates `dir` (and its parents) for plots. Throws
/// UsageError naming the fix when gnuplot is missing or `dir` cannot be created.
void prepare_plot_dir(const std::string& dir);

/// Lower-case, dash-separated file-name stem of `s` ("NVIDIA H100 80GB" -> "nvidia-h100-80gb").
std::string slug(const std::string& s);

}  // namespace ddpbench
