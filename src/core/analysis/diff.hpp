// A/B comparison of result files, one or several launches per side, in the spirit of
// PyTorch's benchmarks/distributed/ddp/diff.py, with a verdict that accounts for
// launch-to-launch variation (docs/METHODOLOGY.md, "diff: noise and launches"). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/report_analysis.hpp"
#include "core/result/config_key.hpp"
#include "core/result/result.hpp"

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

/// 95% confidence interval of mean(test) - mean(base) from two small sets of
/// observations (here: one value per launch). With at least two on each side, Welch's
/// unequal-variance t interval (Welch, Biometrika 34, 1947; Satterthwaite's degrees of
/// freedom, Biometrics Bulletin 2, 1946, rounded down); with one on a side, Student's t
/// with the other side's variance for both (its n - 1 degrees of freedom). Throws
/// std::invalid_argument when a side is empty or neither side has two observations.
Interval t_diff_ci(const std::vector<double>& base, const std::vector<double>& test);

/// Options of `ddpbench diff`.
struct DiffOptions {
  /// ConfigKey fields two rows must share to be compared (`--match`); the other fields
  /// may differ and are shown per row.
  FieldSet match = all_fields();
  /// Launch-to-launch noise floor, a fraction of the base time (`--noise-floor PCT` / 100):
  /// with one launch per side the bootstrap interval is widened by it on both sides. Absent:
  /// the spread measured on the row's device type (measured_launch_spread).
  std::optional<double> noise_floor;
};

/// A launch-to-launch spread measured on one device type: (slowest - fastest) / median p50
/// over repeated launches of one configuration (docs/METHODOLOGY.md "diff: noise and launches").
struct LaunchSpread {
  const char* device;  ///< device type prefix as `report` names it ("NVIDIA H100", "CPU")
  double spread;       ///< fraction
  const char* source;  ///< the launches it comes from
};

/// The measured spread for `device_type` (the first entry whose prefix it starts with); for a
/// device type nothing was measured on, the largest spread measured on any (device "").
LaunchSpread measured_launch_spread(const std::string& device_type);

/// A configuration or environment value that differs between the sides.
struct ConfigChange {
  std::string key;         ///< dotted path, e.g. "environment.nccl"
  std::string base, test;  ///< the side's value; "a | b" when the side's launches differ; "(absent)"
};

/// One configuration measured on both sides.
struct DiffRow {
  ConfigKey base_key, test_key;
  std::vector<FieldDifference> differs;  ///< fields outside --match in which the two differ
  std::string label;                     ///< benchmark.py's row label ("no ddp", "1M/2G") of the base row
  std::string test_label;                ///< the same of the test row (differs from label across world sizes)
  /// Per launch: the median of the row's per-iteration means across ranks (s/iter).
  std::vector<double> base_launches, test_launches;
  int base_iterations = 0, test_iterations = 0;  ///< iterations summed over launches
  double base_s = 0, test_s = 0;                 ///< mean over launches of those medians (s/iter)
  double base_ex_s = 0, test_ex_s = 0;           ///< per-GPU ex/s at base_s / test_s
  double change = 0;                             ///< (test_s - base_s) / base_s; > 0 is slower
  /// 95% interval of test_s - base_s (s), as the verdict used it (noise floor included);
  /// absent when there is no verdict.
  std::optional<Interval> ci;
  /// "bootstrap + noise floor" (one launch per side), "Welch t" or "pooled t" (launches;
  /// "+ noise floor" when the launches do not vary at all, e.g. one file given twice).
  std::string method;
  double noise_floor = 0;   ///< the floor applied (fraction of base), when the method adds one
  std::string floor_basis;  ///< "--noise-floor", or the device type whose measured spread it is
  /// "faster", "slower", "within noise", "too few samples" (a launch with < 5
  /// iterations), "no samples".
  std::string verdict;
  /// One per kInDiff metric of core/result/row_metrics, in catalogue order: the mean over each
  /// side's launches, nullopt where some launch of that side lacks it. Shown, not tested:
  /// the verdict is about the step time only.
  struct Metric {
    std::string key;
    std::optional<double> base, test;
  };
  std::vector<Metric> metrics;
};

/// A --match that pairs rows of two sides (suggest_match).
struct MatchSuggestion {
  FieldSet fields;   ///< the fields to pass to --match
  size_t pairs = 0;  ///< how many rows of each side it pairs
};

/// Everything `ddpbench diff` prints.
struct DiffReport {
  std::vector<std::string> base_files, test_files;
  std::vector<ConfigChange> changes;  ///< configuration first, then environment, then tool
  std::vector<DiffRow> rows;
  std::vector<std::string> only_base, only_test;  ///< rows of one side only (ConfigKey::describe)
  /// When rows of both sides are left unpaired: the --match that pairs more of them (absent
  /// when none does).
  std::optional<MatchSuggestion> better_match;
  DiffOptions opts;
};

/// The smallest --match that pairs the rows of the two sides one to one, computed from the
/// files: only fields whose value differs between rows of one side can tell rows apart, so
/// only those are candidates (a field that differs between the sides alone, such as the math
/// of an fp32-strict and a tf32 run, never is); of the candidates that split the rows alike,
/// the plainest stands for all (ddp rather than backend or the bucket caps, world_size rather
/// than global_batch). Among the sets that pair without ambiguity it takes the one pairing
/// the most rows, then the fewest fields. When each side holds one row, the first of model,
/// ddp, world_size, ... on which the two agree. Absent when no --match pairs any row one to one.
std::optional<MatchSuggestion> suggest_match(const std::vector<NamedResult>& base,
                                             const std::vector<NamedResult>& test);

/// A field set as --match takes it: names in field order, comma-separated ("world_size,ddp").
std::string match_list(const FieldSet& fields);

/// Compares the test side against the base side, each one or several launches (files)
/// of the same configurations. Rows of one side with equal ConfigKeys are launches of
/// one row; a base and a test row pair when their keys agree on `opts.match`. Verdicts:
/// see DiffRow and docs/METHODOLOGY.md. Values that always differ between launches
/// (creation time, argv, ports, the spawner's pid, the JSON path, per-rank placements)
/// are not listed as changes. Throws UsageError when a side is empty, when a row pairs
/// ambiguously (add fields to --match), or when no row pairs at all (the message names
/// the fields the closest rows differ in and the --match of suggest_match).
DiffReport diff_results(const std::vector<NamedResult>& base, const std::vector<NamedResult>& test,
                        const DiffOptions& opts = {});

/// The same for one file per side.
DiffReport diff_results(const ResultFile& base, const ResultFile& test, const DiffOptions& opts = {});

/// Why `diff --fail-if-slower PCT` (PCT = 100 x `fraction`) fails the gate, one line per
/// reason; empty when it passes. A gate cannot pass on what it did not see: a row "slower"
/// by more than `fraction`, a paired row without a verdict (too few or no samples), and a
/// base row the test side lacks (e.g. the test run died after its first rows) each fail it.
std::vector<std::string> gate_failures(const DiffReport& d, double fraction);

/// Width of `diff`'s terminal output unless --wide is given (characters per line).
inline constexpr size_t kDiffTextWidth = 100;

/// Terminal rendering: the files, the configuration changes, then per row (named by model
/// and benchmark.py's label, "resnet50 1M/2G") base and test s/iter, the change, the 95%
/// interval (as % of base), the verdict, each side's setup and batch ("fp32-strict -> tf32"
/// where the sides differ), n (launches x iterations) and ex/s per side, and the row metrics.
/// `width` > 0: no line is longer than `width`: the columns are printed in parts that each
/// start with the row, long cells and sentences are wrapped, and the fields outside --match
/// in which the rows differ are a sentence under the table. `width` 0 (--wide): one line per
/// row with every column, the differing fields included.
std::string render_diff_text(const DiffReport& d, size_t width = kDiffTextWidth);

/// The same as Markdown: the files and the changes as lists, the table with every column.
std::string render_diff_markdown(const DiffReport& d);

/// The same, machine-readable.
nlohmann::json diff_json(const DiffReport& d);

}  // namespace ddpbench
