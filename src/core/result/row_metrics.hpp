// The catalogue of per-row metrics: every number a result row carries that people compare
// (tables, `check`, `diff`) is one entry here, with its key, header, unit, formatter,
// definition and the function that reads it from a row. A new metric is one entry in
// row_metrics() plus its measurement; `run`'s line, `report`'s scaling tables (text,
// Markdown, CSV, JSON, HTML), `check`'s metric names and `diff`'s rows follow from it.
// A per-rank metric (RowMetric::per_rank) also gets its transport to rank 0, its fields
// in the row (RankSamples::metrics, BenchResult::metrics) and its JSON from the entry: its
// capture is one StepMetrics::add per measured step where the value is born.
// Torch-free.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result/result.hpp"
#include "core/util/table.hpp"

namespace ddpbench {

/// Where a metric appears (a bit mask; RowMetric::uses).
enum MetricUse : unsigned {
  kInReportTables = 1u << 0,  ///< a column of report's weak and strong scaling tables when some row has it
  kCheckable = 1u << 1,       ///< a `check` reference may name it ("metric": key)
  kInDiff = 1u << 2,          ///< `diff` shows base and test values per row (its JSON, CSV and text)
  kFromStepTimes = 1u << 3,   ///< computed from the measured step times (a timing warning undermines it)
};

/// How a per-rank metric's values combine (PerRankReduction).
enum class Reduce { kMean, kMax, kMin, kSum };

/// Every Reduce of a stream of values without keeping them: their count, sum, minimum, maximum.
struct RunningReduction {
  long long n = 0;
  double sum = 0, min = 0, max = 0;
  void add(double v);
  /// `how` of the values added (kMean: the arithmetic mean); nullopt when none was.
  std::optional<double> value(Reduce how) const;
};

/// `how` over `values` (RunningReduction); nullopt when `values` is empty.
std::optional<double> reduce_over(Reduce how, const std::vector<double>& values);

/// A metric measured on every rank: one value per measured step, reduced over the rank's
/// steps to the rank's value (RankSamples::metrics, in the JSON `ranks[].metrics`), then over
/// the row's ranks that have one to the row's value (BenchResult::metrics, `metrics`).
struct PerRankReduction {
  Reduce over_steps = Reduce::kMean;
  Reduce over_ranks = Reduce::kMax;
};

/// One per-row metric.
struct RowMetric {
  const char* key;     ///< machine name: CSV header, JSON field, `check`'s "metric" value
  const char* header;  ///< column header for people, e.g. "peak mem"
  const char* unit;    ///< unit of the raw value: "s", "ex/s", "bytes", "fraction"
  /// Text for people (table.hpp's fmtcol); CSV and JSON get the raw value.
  std::function<std::string(const Value&)> format;
  /// One sentence: what the number is and how it is computed (a table note; the docs).
  const char* definition;
  unsigned uses;  ///< MetricUse bits
  /// Label in `run`'s line after a row (e.g. "peak" -> "  peak 3.50 GiB"); nullptr: not shown there.
  const char* run_label;
  /// The row's value; nullopt when the row does not carry it (older schema, not measured,
  /// a metric of another kind of row). Never throws, whatever shape a file's sections have.
  /// Left empty for a per-rank metric: row_metrics() makes it read BenchResult::metrics[key].
  std::function<std::optional<double>(const BenchResult&)> of;
  /// Set for a metric measured on every rank (its capture: StepMetrics::add in the timed
  /// series); unset for a metric computed from the row's other fields.
  std::optional<PerRankReduction> per_rank{};

  /// The metric as a table column (table.hpp).
  Column column() const;
  bool used_in(MetricUse u) const { return (uses & u) != 0; }
};

/// Every per-row metric, in the order tables show them.
const std::vector<RowMetric>& row_metrics();

/// The per-rank metrics (RowMetric::per_rank set), in catalogue order: the order of the
/// values StepMetrics::values returns and each rank sends to rank 0.
const std::vector<const RowMetric*>& per_rank_metrics();

/// One rank's per-step values of the per-rank metrics over a measured series, kept as
/// running reductions (enough for every Reduce).
class StepMetrics {
 public:
  /// Adds one measured step's value of per-rank metric `key` (a non-finite value is skipped).
  /// Throws std::logic_error when the catalogue has no per-rank metric `key`.
  void add(const std::string& key, double value);
  /// The rank's value of every per_rank_metrics() entry, reduced over its steps by the
  /// entry's over_steps, in that order; nullopt for a metric no step added.
  std::vector<std::optional<double>> values() const;

 private:
  std::vector<RunningReduction> acc_;  // per per_rank_metrics() entry
};

/// Sets every per-rank metric of `row` (BenchResult::metrics) from its ranks' values
/// (RankSamples::metrics), reduced by the entry's over_ranks over the ranks that have one;
/// a metric no rank has is left out.
void reduce_rank_metrics(BenchResult& row);

/// The metric named `key`; nullptr when there is none.
const RowMetric* find_row_metric(const std::string& key);

/// The keys of the metrics with use `u`, in catalogue order.
std::vector<std::string> row_metric_keys(MetricUse u);

/// The value of every metric of `row`, in row_metrics() order (nullopt where it has none).
std::vector<std::optional<double>> row_metric_values(const BenchResult& row);

/// The step time every duration and cost derived from a row uses: the mean of the pooled
/// step times (Summary::mean_s), because a run's time is the sum of its steps (n x mean); the
/// p50 only where a file records no mean. Epoch time (epoch_time_s) and `report`'s training
/// time and cost both read it, so a row's epoch time x epochs is its priced training time
/// (docs/METHODOLOGY.md "Statistics", epoch time). Seconds.
double duration_step_s(const Summary& s);

/// Optimizer steps of one epoch: ceil(dataset_size / examples_per_step), the examples of one
/// optimizer step over all ranks (global batch x grad_accum); 0 when either is not positive.
long long steps_per_epoch(long long dataset_size, long long examples_per_step);

/// The first of a row's `warnings` that makes its `metric` untrustworthy, nullptr when none
/// does (docs/METHODOLOGY.md "Warnings that void a number"): few_samples and noisy void p95_s
/// (a tail percentile needs samples and a steady series); oversubscribed, negative_ddp_overhead,
/// throughput_drift and gpu_throttled void every metric computed from step times. `metric` is a
/// row_metrics() key or a metric derived from step times ("weak_scaling_efficiency",
/// "ddp_overhead": any key the catalogue lacks counts as one). `check` marks such a value WARN,
/// never PASS; the report's executive summary does the same.
const RowWarning* undermining_warning(const std::vector<RowWarning>& warnings, const std::string& metric);

}  // namespace ddpbench
