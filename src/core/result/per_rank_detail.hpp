#pragma once
// What a row keeps of each rank's raw series (step samples, telemetry series): every rank's
// summary always, the raw series only for the ranks a reader looks at, so the per-rank part
// of a result file stays bounded per rank at thousands of ranks (docs/result-schema.md,
// "Per-rank detail").

#include <vector>

#include "core/result/result.hpp"

namespace ddpbench {

/// Summarises each rank's step samples (RankSamples::step), records the row's per-iteration
/// means over ranks (BenchResult::iteration_means_s, see iteration_means in core/stats/stats.hpp),
/// then, unless `keep_all`, drops samples_s and telemetry.sampled.series of every rank but
/// those of ranks_kept_in_full(row), and records that list in row.ranks_kept_in_full.
/// Call it once per row, after its telemetry is attached (the flags choose ranks).
void keep_per_rank_detail(BenchResult& row, bool keep_all);

/// The ranks (rank numbers, ascending) whose raw series a reader looks at: those with a
/// telemetry flag (telemetry.sampled.flags) and the slowest by mean step time (the last on
/// ties). The others' spread stays in their summaries and the row's series_over_ranks band.
std::vector<int> ranks_kept_in_full(const BenchResult& row);

}  // namespace ddpbench
