// The time-to-loss part of `ddpbench report`: the epochs/time-to-target table and the loss
// (and test accuracy) against wall time per world size. Torch-free.
// docs/METHODOLOGY.md "Real data and time-to-loss".
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report_analysis.hpp"
#include "core/render/plots.hpp"
#include "core/util/table.hpp"

namespace ddpbench {

/// One table per group, kind "time_to_loss": ranks, epochs run, target reached, epoch and
/// wall seconds at the target, final test accuracy / test loss / train loss, mean data wait
/// per step (ms), and the speedup of time-to-target against the group's 1-rank row (its
/// reference). Notes: the target, and the published baselines recorded in the rows.
std::vector<Table> convergence_tables(const std::vector<ConvergenceGroup>& groups);

/// Per group two plots in `dir` (created): training loss against wall time, one line per world
/// size ("ttl-<model>-<dataset>-loss"), and test accuracy per epoch against wall time
/// ("ttl-...-accuracy"), PNG and SVG through gnuplot (convergence.gp). Empty when there is no
/// group. Throws UsageError when gnuplot is missing or `dir` cannot be made; std::runtime_error
/// when gnuplot fails.
std::vector<Plot> write_convergence_plots(const std::vector<ConvergenceGroup>& groups, const std::string& dir);

}  // namespace ddpbench
