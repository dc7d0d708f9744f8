// Internal to the plots (core/render/plots*.cpp), not part of their interface: the data series
// drawn, the helpers the pieces share, and the plot builders write_plots (plots.cpp) calls.
// Torch-free.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/report_analysis.hpp"
#include "core/render/plots.hpp"

namespace ddpbench::plots_internal {

/// `s` as a gnuplot string (plots.hpp gnuplot_quote).
inline std::string gq(const std::string& s) { return gnuplot_quote(s); }

// The stacked components of a breakdown bar, in stacking order (bottom first); they add up
// to the step (core/result/row_sections Phase).
inline constexpr std::array<std::pair<Phase, const char*>, 5> kStacked = {{{Phase::forward, "forward"},
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
  long long seq_len = 0;              // a language model's tokens per example (ConfigKey::seq_len); 0 else
  std::string size;                   // "batch 32 per GPU", "global batch 256"
  PlotAnchor table, breakdown;        // the weak or strong table drawn, and its breakdown table
  double no_ddp_ex_s = std::nan("");  // per-rank ex/s of the no-DDP baseline (weak), NaN without one
  /// Per point: GPUs, aggregate ex/s, ideal ex/s, efficiency %, per-GPU ex/s, p5, p50, p95 (s),
  /// then 1 where a warning of the row voids its throughput (oversubscribed, negative DDP
  /// overhead, drift, throttling) and 1 where one voids its efficiency (its own or its baseline
  /// row's): such points are drawn apart, hollow, never as a point of the curve.
  std::vector<std::array<double, 10>> rows;
  std::string voided;  ///< "4 ranks: oversubscribed; ..." of the voided points ("" none)
  std::vector<std::pair<std::string, std::array<double, kStacked.size()>>> bars;
};

// busbw against size for the `comm` results of one file: one line per collective, group of
// ranks (and dtype, where the file measured several).
struct CommSeries {
  std::string stem, what;
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> lines;  // title, (bytes, busbw GB/s)
  std::vector<PlotAnchor> tables;  // the file's collective tables
};

/// Whether `v` has a finite value (a plot of nothing but NaN has nothing to draw).
inline bool any_finite(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// ---- the series (plots_series.cpp)

/// The context fields (Table::context, as text) every table of `k` has.
std::vector<std::pair<std::string, std::string>> key_fields(const ConfigKey& k);
/// One Series per weak and strong scaling table, with its breakdown bars.
std::vector<Series> series_of(const Report& r);
/// busbw against size of each `comm` file.
std::vector<CommSeries> comm_series_of(const Report& r);

// ---- the cluster-validation plots (plots_cluster.cpp)

/// Telemetry over time and per rank, stragglers, burn-in, pair bandwidth, find-max-bs.
std::vector<PlotSpec> cluster_plots(const Report& r);

// ---- plots that compare series (plots_compare.cpp)

/// Bars of per-GPU throughput for series measured at one size only.
PlotSpec single_point_bars(const std::vector<const Series*>& single);
/// Bars of each optimization impact table's techniques.
std::vector<PlotSpec> impact_bars(const Report& r);
/// Several series of one model on one plot.
std::vector<PlotSpec> overlays(const std::vector<const Series*>& series);
/// Throughput and memory of each strategy table.
std::vector<PlotSpec> strategy_plots(const Report& r);

}  // namespace ddpbench::plots_internal
