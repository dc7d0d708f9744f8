// Burn-in (`ddpbench run --duration D`): throughput over time per rank and its drift.
// Torch-free pure functions; the sweep (engine/bench/sweep.cpp) feeds them each rank's
// step end times. docs/METHODOLOGY.md, "Progress and burn-in".
#pragma once

#include <cstddef>
#include <vector>

namespace ddpbench {

inline constexpr int kMaxBurnInWindows = 60;            ///< throughput windows per rank, at most
inline constexpr double kMinBurnInWindowS = 5.0;        ///< a window is at least this long where D allows
inline constexpr double kDriftThresholdPct = 5.0;       ///< a fall of more than this (last vs first window) is flagged
inline constexpr std::size_t kMaxBurnInSamples = 4096;  ///< per-step samples per rank shipped to rank 0, at most

/// Windows of a burn-in of `duration_s` seconds: min(60, max(1, floor(D / 5 s))), so each
/// is >= 5 s when D >= 5 s. E.g. 6 s -> 1, 120 s -> 24, 1800 s -> 60 (30 s each).
/// Throws std::invalid_argument for duration_s <= 0 or non-finite.
int burn_in_windows(double duration_s);

/// One measured step: when it ended (s since the series' first measured step started,
/// the same origin as the telemetry series' t_s) and the examples it processed.
struct StepEnd {
  double end_s = 0;
  double examples = 0;
};

/// Throughput per window, ex/s: `windows` windows of w = duration_s / windows s over the
/// measured span; window j covers [j*w, (j+1)*w) and the last one [(windows-1)*w, T],
/// T = max(duration_s, last step's end), because the series stops after the first step
/// that ends at or past D. A step counts in the window in which it ENDS (all its examples
/// there), so every step counts exactly once; a window's value = its steps' examples / its
/// length. A window can thus be off by at most one step's examples / w (the step that
/// straddles its start). Steps must be in time order with end_s >= 0.
/// Throws std::invalid_argument for windows < 1 or duration_s <= 0.
std::vector<double> window_throughput(const std::vector<StepEnd>& steps, double duration_s, int windows);

/// Drift of one rank: the last window's throughput against the first window's.
struct Drift {
  double first_ex_per_s = 0;
  double last_ex_per_s = 0;
  double change_pct = 0;      ///< 100 * (last - first) / first; 0 with one window or first == 0
  double resolution_pct = 0;  ///< what whole steps alone can change: see throughput_drift
  bool flagged = false;       ///< change_pct < -(threshold_pct + resolution_pct) (throughput fell)
};

/// First vs last window of `ex_per_s` (one window: change 0, never flagged). Windows are
/// >= 5 s each, so one holds many steps; the first and the last compare the cool and the
/// heat-soaked device directly (with 60 windows, the first and last 1/60 of the run).
/// A window counts whole steps, so each of the two windows compared can be off by one
/// step's examples / window length (window_throughput); with `step_ex_per_s` = examples
/// of one step / window length, resolution_pct = 100 * 2 * step_ex_per_s / first, and a
/// fall is flagged only beyond threshold + resolution (a 5 s window of 0.4 s steps holds
/// about 13 steps: one step is 8% of it, more than the 5% threshold).
/// Throws std::invalid_argument on an empty input.
Drift throughput_drift(const std::vector<double>& ex_per_s, double threshold_pct = kDriftThresholdPct,
                       double step_ex_per_s = 0);

/// The stride of a systematic subsample that keeps at most `max` of `n` samples:
/// ceil(n / max) (1 when n <= max). Throws std::invalid_argument for max == 0.
std::size_t subsample_stride(std::size_t n, std::size_t max);

/// Every `stride`-th element, starting with the first (indices 0, k, 2k, ...): a
/// systematic sample in time order, so the percentiles of what is kept estimate those of
/// the whole series without bias unless the step times repeat with a period of exactly k.
std::vector<double> subsample(const std::vector<double>& v, std::size_t stride);

}  // namespace ddpbench
