// The one place a freshly measured row is finished before anyone prints or saves it: every
// row builder (the sweep's make_row, time to loss, DataParallel) hands its row here, and the
// CLI only prints and saves what comes out. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "core/result/result.hpp"

namespace ddpbench {

/// What finish_row needs of the run that measured the row.
struct RowFinish {
  /// --per-rank-series all: every rank keeps its raw series (core/result/per_rank_detail).
  bool keep_all_ranks = false;
  /// The launch that measured the row, {"job_id", "started_utc"} (BenchResult::launch);
  /// null where the command records none (`dataparallel`).
  nlohmann::json launch;
};

/// Finishes `row`, which the caller appended to `rows` (the rows finished so far, `row` among
/// them, in order): the per-rank metrics reduced over its ranks (reduce_rank_metrics), its
/// per-rank detail trimmed (keep_per_rank_detail), the warning negative_ddp_overhead when it
/// is DDP and its p50 is below that of a no-DDP row of `rows` with the same model, batch per
/// rank and micro-steps (docs/METHODOLOGY.md "Statistics"), and how.launch. A row that already
/// has a launch (one `run --resume` kept as the stopped run wrote it) is left unchanged.
void finish_row(BenchResult& row, const std::vector<BenchResult>& rows, const RowFinish& how);

}  // namespace ddpbench
