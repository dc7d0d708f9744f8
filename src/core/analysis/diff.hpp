// A/B comparison of result files, one or several launches per side: PyTorch's
// benchmarks/distributed/ddp/diff.py (rows paired by model, batch and GPU count; what changed
// between the files as the header; the test's sec/iter and ex/sec with the change at each
// percentile, + faster), with a verdict per row that accounts for launch-to-launch variation
// and the rows' own warnings (docs/METHODOLOGY.md, "diff: noise and launches"). Each verdict
// is a Claim (core/analysis/claim.hpp). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/claim.hpp"
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

/// The fields rows pair on by default (diff.py's rows: a model at a batch size on N GPUs, with
/// or without DDP): model, batch_per_rank, image_size, scaling, mode, world_size, ddp. The
/// settings an A/B changes (precision, channels_last, the DDP knobs, the backend) are left out,
/// so such files pair without --match.
FieldSet diff_default_fields();

/// Options of `ddpbench diff`.
struct DiffOptions {
  /// ConfigKey fields two rows must share to be compared (`--match`); the other fields may
  /// differ and are shown per row. Absent: diff_default_fields, plus the fewest fields that
  /// vary between the rows of one side where those alone leave rows alike (a sweep of several
  /// strategies or precisions in each file).
  std::optional<FieldSet> match;
  /// Launch-to-launch noise floor, a fraction of the base time (`--noise-floor PCT` / 100):
  /// with one launch per side the bootstrap interval is widened by it, and a change beyond it
  /// is a confirmed verdict. Absent: no floor is assumed (see DiffRow::verdict).
  std::optional<double> noise_floor;
  /// `--all-fields`: every value that differs between the files in the header (job ids, paths,
  /// GPU UUIDs, git SHAs, schema versions too); default: the measured settings only.
  bool all_fields = false;
};

/// A configuration or environment value that differs between the sides.
struct ConfigChange {
  std::string key;         ///< dotted path, e.g. "environment.nccl"
  std::string base, test;  ///< the side's value; "a | b" when the side's launches differ; "(absent)"
};

/// One percentile of a row on both sides, as diff.py prints it: each side's pooled percentile of
/// the step time (mean over its launches) and diff = -(test - base) / base (+ is faster).
struct DiffPercentile {
  int p = 50;
  double base_s = 0, test_s = 0;
  double diff = 0;
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
  /// p50, p75 and p95 of the pooled step times (benchmark.py's and diff.py's statistic).
  std::vector<DiffPercentile> percentiles;
  /// 95% interval of test_s - base_s (s), as the verdict used it (noise floor included);
  /// absent when there is no verdict.
  std::optional<Interval> ci;
  /// "bootstrap" (one launch per side, within-launch noise only), "bootstrap + noise floor"
  /// (--noise-floor), "bootstrap + control" (the floor measured by the control rows of the same
  /// launches), "Welch t" or "pooled t" (launches).
  std::string method;
  double noise_floor = 0;   ///< the floor applied (fraction of base), when the method adds one
  std::string floor_basis;  ///< "--noise-floor", or the control row whose change it is
  /// "faster", "slower", "within noise"; "faster, unconfirmed" / "slower, unconfirmed" (one
  /// launch per side, no floor: only the within-launch interval excludes 0, and the
  /// launch-to-launch noise is unmeasured); "void (CODE)" (a warning of either side voids the
  /// p50: row_metrics undermining_warning); "control" (a row the recorded change cannot affect:
  /// the no-DDP row when only communication settings changed, a bucket-cap or NCCL A/B; its change
  /// is launch-to-launch noise); "too few samples" (a launch with < 5 iterations), "no samples".
  std::string verdict;
  bool control = false;  ///< the row is a control (verdict "control")
  /// Each side's warning codes (recomputed from the rows' data for every schema) and the words
  /// they are shown with ("noisy (cv 6.6%)", "few_samples (10 iterations)").
  std::vector<std::string> base_warnings, test_warnings;
  std::string base_warning_words, test_warning_words;
  /// One per kInDiff metric of core/result/row_metrics, in catalogue order: the mean over each
  /// side's launches, nullopt where some launch of that side lacks it. Shown, not tested:
  /// the verdict is about the step time only.
  struct Metric {
    std::string key;
    std::optional<double> base, test;
  };
  std::vector<Metric> metrics;
  Claim claim;  ///< the verdict as a claim (kind "diff_row")
};

/// How diff names a row, as diff.py does: its GPU count (CPU ranks on CPUs) and benchmark.py's
/// label, "2 GPUs 1M/2G", "1 CPU no ddp"; "1M/1G -> 1M/2G" where the sides' labels differ.
std::string diff_row_name(const DiffRow& r);

/// A --match that pairs rows of two sides (suggest_match).
struct MatchSuggestion {
  FieldSet fields;   ///< the fields to pass to --match
  size_t pairs = 0;  ///< how many rows of each side it pairs
};

/// Everything `ddpbench diff` prints.
struct DiffReport {
  std::vector<std::string> base_files, test_files;
  /// What changed: the measured settings that differ (configuration, then environment, then
  /// the tool's version); with DiffOptions::all_fields every value that differs.
  std::vector<ConfigChange> changes;
  /// Values that differ but name the launch rather than its setup (job ids, paths, GPU UUIDs,
  /// git SHAs, schema versions, a null written where the other side has none): counted, shown
  /// with --all-fields.
  int hidden_changes = 0;
  std::vector<DiffRow> rows;
  std::vector<std::string> only_base, only_test;  ///< rows of one side only (ConfigKey::describe)
  /// When rows of both sides are left unpaired: the --match that pairs more of them (absent
  /// when none does).
  std::optional<MatchSuggestion> better_match;
  DiffOptions opts;
  FieldSet match;  ///< the fields rows were paired on (opts.match, or the default's)
  /// Every row's verdict claim, DDP rows first.
  std::vector<Claim> claims() const;
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
/// one row (a launch given twice counts once); a base and a test row pair when their keys
/// agree on the match (DiffOptions::match). Rows come DDP first (by model, then world size),
/// the no-DDP rows last. Verdicts: see DiffRow and docs/METHODOLOGY.md. Values that always
/// differ between launches (creation time, argv, ports, the spawner's pid, the JSON path,
/// per-rank placements) are never listed; values that name the launch are listed only with
/// all_fields. Throws UsageError when a side is empty, when a row pairs ambiguously (add fields
/// to --match), or when no row pairs at all (the message names the fields the closest rows
/// differ in and the --match of suggest_match).
DiffReport diff_results(const std::vector<NamedResult>& base, const std::vector<NamedResult>& test,
                        const DiffOptions& opts = {});

/// The same for one file per side.
DiffReport diff_results(const ResultFile& base, const ResultFile& test, const DiffOptions& opts = {});

/// Why `diff --fail-if-slower PCT` (PCT = 100 x `fraction`) fails the gate, one line per
/// reason; empty when it passes. A gate cannot pass on what it did not see: a row "slower"
/// (confirmed or unconfirmed) by more than `fraction`, a paired row without a verdict (too few
/// or no samples, a warning voiding it), and a base row the test side lacks (e.g. the test run
/// died after its first rows) each fail it. A control row never does.
std::vector<std::string> gate_failures(const DiffReport& d, double fraction);

/// Width of `diff`'s terminal output unless --wide is given (characters per line).
inline constexpr size_t kDiffTextWidth = 100;

/// Terminal rendering: the files; what changed (the measured settings, and how many other values
/// differ); per benchmark (model, batch, image size) diff.py's table: per row (DDP rows by GPU
/// count, then the no-DDP row) the test's sec/iter and ex/sec at p50, p75 and p95 and the diff
/// against the base (+ is faster); then one sentence per row with its verdict, the interval and
/// each side's warnings (the claim's text); the row metrics of both sides; notes (how the
/// intervals were made, rows that did not pair). `width` > 0: no line is longer than `width`
/// (sentences wrapped, wide tables in parts); `width` 0 (--wide): one line per row, the verdict
/// and warnings beside it.
std::string render_diff_text(const DiffReport& d, size_t width = kDiffTextWidth);

/// The same as Markdown: the files and the changes as lists, the table with every column.
std::string render_diff_markdown(const DiffReport& d);

/// The same, machine-readable.
nlohmann::json diff_json(const DiffReport& d);

}  // namespace ddpbench
