// The warnings a row's own data implies: one definition, used where `run` writes a row and
// wherever a row is read for analysis, so a file written before a warning existed (or whose
// warnings were lost) is judged by the same rules as a new one (docs/METHODOLOGY.md
// "Statistics", warnings). Torch-free.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result/result.hpp"

namespace ddpbench {

/// A series whose per-iteration means have a coefficient of variation (stddev / mean) above
/// this is `noisy` (fraction).
inline constexpr double kNoisyCv = 0.05;

/// Fewest measured iterations for which p95 rests on at least one expected sample above it
/// (fewer: `few_samples`).
inline constexpr int kMinItersForP95 = 20;

/// The per-iteration series a row's statistics are computed over: its iteration_means_s
/// (schema 1.10 on), else the per-iteration means of its ranks' samples_s (iteration_means),
/// else empty.
std::vector<double> row_iteration_series(const BenchResult& r);

/// The coefficient of variation of that series (fraction; stddev with divisor n-1 / mean),
/// else summary.cv when the row keeps no series; 0 when neither is known.
double row_cv(const BenchResult& r);

/// Half-width of the 95% CI of the mean step time (Student's t over the series, ci95_halfwidth)
/// as a fraction of the series' mean; else summary.ci95_s / summary.mean_s; 0 when unknown.
double row_ci_fraction(const BenchResult& r);

/// Measured iterations of the row: summary.iterations, else the length of its series, else
/// the most samples any rank kept; 0 when none is known.
int row_iterations(const BenchResult& r);

/// `noisy` (cv > kNoisyCv) and `few_samples` (iterations < kMinItersForP95) of a row, from its
/// data, in that order. `rerun_hint` ends the few_samples message ("run more --iters").
std::vector<RowWarning> timing_warnings(const BenchResult& r, const std::string& rerun_hint = "run more --iters");

/// A rank's host and affinity mask, as the oversubscription rule reads them.
struct RankCpus {
  std::string host;
  std::string cpus;  ///< kernel cpulist ("0-3,8"); "" unknown
};

/// `oversubscribed` for a group of ranks 0..world_size-1 of `placements` on CPUs, each with
/// `threads_per_rank` intra-op threads: one rank's threads beyond its own mask, or the
/// threads of a host's ranks beyond the CPUs their masks cover together (ranks pinned to
/// separate cores do not compete); nullopt when neither, or when masks are unknown.
std::optional<RowWarning> oversubscribed_warning(int world_size, int threads_per_rank,
                                                 const std::vector<RankCpus>& placements);

/// Adds to every row of `file` (kind "run") each warning its data implies that it lacks (by
/// code): timing_warnings, and on CPU files oversubscribed (environment.ranks' hosts and cpus,
/// environment.threads_per_rank). An added warning's message ends with "(recomputed from the
/// row's data)". Returns how many warnings it added.
int complete_row_warnings(ResultFile& file);

}  // namespace ddpbench
