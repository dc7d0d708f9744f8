// The one rule of which result rows the analysis commands use. `report`, `check`, `diff`
// and `predict` read their files through drop_invalid_rows, so each sees the same rows and
// each prints the same warning for a row it leaves out ("FILE row N (model label): problem";
// docs/result-schema.md "Which rows are used"). Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/result/result.hpp"

namespace ddpbench {

/// Largest world size a row, or a file's environment, may name: 10,000,000 ranks.
inline constexpr int kMaxRowWorldSize = 10'000'000;
/// Largest batch per rank a row may name: 1e9 examples (batch x world size stays inside
/// long long).
inline constexpr long long kMaxRowBatch = 1'000'000'000LL;
/// Shortest median step time a row may hold: 1 ns (a denormal would make every ratio inf).
inline constexpr double kMinRowStepS = 1e-9;
/// Longest median step time a row may hold: 1e6 s (11.6 days for one step).
inline constexpr double kMaxRowStepS = 1e6;
/// How far a stored derived number (summary.ex_per_s_per_gpu, ex_per_s_total) may differ
/// from the value recomputed from the fields it is derived from: 1%, relative.
inline constexpr double kDerivedTolerance = 0.01;
/// Most rows one result file may hold: 20,000 (a sweep of 15 models x 20 batch sizes x 60
/// group sizes is 18,000); read_result_file refuses more.
inline constexpr size_t kMaxResultRows = 20'000;

/// What makes `row` unusable, or "" when nothing: a world size outside 1..kMaxRowWorldSize,
/// nodes outside 1..world size, a batch per rank outside 1..kMaxRowBatch, grad_accum below 1,
/// a p50 step time that is not a finite number in [kMinRowStepS, kMaxRowStepS], a mean that
/// is negative, not finite or above kMaxRowStepS, or a stored ex_per_s_per_gpu or
/// ex_per_s_total that differs by more than kDerivedTolerance from batch per rank x grad_accum
/// / p50 (x world size), a negative or non-finite time among min, p5, p50, p75, p90, p95, max,
/// those out of order (0: absent, skipped), a mean outside min..max, a negative cv, a negative
/// breakdown part or parts that do not sum to the step (1% slack). Every command derives
/// throughput from the primary fields; a stored
/// value that disagrees means the row was edited or corrupted. The problem is one clause for
/// people, e.g. "summary.p50_s is 0 s, not a step time in 1e-09..1e+06 s".
std::string row_problem(const BenchResult& row);

/// The rows of `file` that row_problem refuses are removed from it, and the others get the
/// warnings their data implies (complete_row_warnings, core/result/row_warnings); returns one
/// line per removed row, "SOURCE row N (MODEL LABEL): PROBLEM; it is left out" (N counts from 1 in
/// the file's results). Throws UsageError (exit 2) when the file had rows and none is left,
/// naming the first problem.
std::vector<std::string> drop_invalid_rows(ResultFile& file, const std::string& source);

/// Reads a result file for `report`, `diff`, `check` or `predict` (read_result_file), leaves
/// out the rows row_problem refuses (drop_invalid_rows: one "ddpbench: warning: FILE row N
/// (...): ..." line each on stderr) and, when it is incomplete, prints incomplete_warning on
/// stderr as "ddpbench: warning: ...". Throws UsageError as read_result_file, and when no
/// row of a file that had rows is left.
ResultFile load_result(const std::string& path);

}  // namespace ddpbench
