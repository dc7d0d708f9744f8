// A/B comparison of two result files, in the spirit of PyTorch's
// benchmarks/distributed/ddp/diff.py. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace ddpbench {

/// A closed interval [lo, hi], in the unit of the values it bounds.
struct Interval {
  double lo = 0, hi = 0;
};

/// 95% percentile-bootstrap confidence interval of median(test) - median(base), in the
/// samples' unit (Efron & Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13):
/// each of `resamples` rounds draws both sets with replacement at their own size and
/// takes the difference of the medians (numpy-style linear percentile); the interval is
/// the 2.5th and 97.5th percentiles of those differences. Deterministic for a given
/// `seed` (std::mt19937_64). Throws std::invalid_argument on an empty set or
/// `resamples` < 1.
Interval bootstrap_median_diff_ci(const std::vector<double>& base, const std::vector<double>& test,
                                  int resamples = 2000, uint64_t seed = 20261122);

/// A configuration or environment value that differs between the files.
struct ConfigChange {
  std::string key;  ///< dotted path, e.g. "environment.nccl"
  std::string base, test;
};

/// One benchmark row present in both files.
struct DiffRow {
  std::string model, precision, scaling, label;
  long long batch_per_rank = 0;
  int world_size = 1;
  bool ddp = true;
  Summary base, test;
  double p50_change = 0;  ///< (test p50 - base p50) / base p50; > 0 is slower
  double ex_change = 0;   ///< (test ex/s - base ex/s) / base ex/s at p50; > 0 is faster
  Interval ci;            ///< bootstrap CI of the median difference (s); zero when samples are missing
  std::string verdict;    ///< "faster", "slower", "within noise", "too few samples" (< 5 iterations), "no samples"
};

/// Everything `ddpbench diff` prints.
struct DiffReport {
  std::vector<ConfigChange> changes;  ///< configuration first, then environment, then tool
  std::vector<DiffRow> rows;
  std::vector<std::string> only_base, only_test;  ///< rows present in one file only ("model label batch")
};

/// Compares `test` against `base`. Rows match on (model, precision, scaling, image size,
/// batch per rank, world size, DDP or not). A change is "within noise" when the bootstrap CI of
/// the difference of medians of the rows' per-iteration means across ranks (see
/// iteration_means) contains 0: the samples do not support a change.
/// Values that always differ between launches (creation time, argv, ports, the JSON
/// path, per-rank placements) are not listed as changes.
DiffReport diff_results(const ResultFile& base, const ResultFile& test);

/// Terminal rendering: changes, then a table with base/test p50, p75, p95 (s/iter),
/// per-GPU ex/s, the % changes and the verdict.
std::string render_diff_text(const DiffReport& d);

/// The same, machine-readable.
nlohmann::json diff_json(const DiffReport& d);

}  // namespace ddpbench
