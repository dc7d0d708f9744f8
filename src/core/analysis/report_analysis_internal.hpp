// Internal to `ddpbench report`'s analysis (core/analysis/report_analysis*.cpp), not part of its
// interface: a measured row as the analysis compares it (Point) and one builder per report
// section, which build_report (report_analysis.cpp) calls. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/report_analysis.hpp"
#include "core/analysis/report_detail.hpp"

namespace ddpbench {
using report_detail::gpu_available;
using report_detail::int_at;
using report_detail::max_batch_sentence;
using report_detail::num_at;
using report_detail::straggler_what;
}  // namespace ddpbench

namespace ddpbench::report_analysis_internal {

// One measured row with what identifies it across files.
struct Point {
  std::string source;  // file it came from
  RowLaunch launch;    // its label ("F2"); with several launches of the key, how many and how far apart
  int devices = 1;     // distinct devices of its ranks (distinct_devices)
  ConfigKey key;
  int nodes = 1;
  Summary summary;                            // as written by `run` (pooled over ranks)
  std::optional<double> tflops_per_gpu, mfu;  // from the row's compute section, when recorded
  double p5_s = 0;                            // 5th percentile of the pooled raw samples (p50 when none)
  RowFacts facts;
  BreakdownRow breakdown;  // the row's breakdown and communication facts (world size etc. filled in)
  // Schema 1.7: the memory of the row (its strategy, checkpointing and mode are in the key).
  std::optional<double> peak_allocated_bytes, peak_reserved_bytes, peak_rss_bytes, model_state_bytes;
  std::optional<double> peak_memory_bytes;  // row_peak_memory_bytes (core/result/row_memory)
};

// Examples one rank processes per optimizer step: the batch of each of grad_accum micro-steps.
inline double examples_per_step(const ConfigKey& k) { return static_cast<double>(k.batch_per_rank) * k.grad_accum; }

// ---- reading the files (report_analysis_launches.cpp)

/// Flattens every row of every file into Points; a row repeating a row of an earlier file (the
/// same configuration and either the same content or the same launch object) is counted once
/// and named in `repeats`.
std::vector<Point> collect_points(const std::vector<NamedResult>& files, std::vector<RepeatedLaunch>& repeats);
/// One Point per configuration: of several launches, the one with the median p50 (of an even
/// count the slower middle one), with the launches' count and spread. Keys in first-seen order.
std::vector<Point> median_launches(const std::vector<Point>& pts);
/// The appendix's object of one result file (label, name, kind, versions, sizes, argv, nodes).
nlohmann::json file_info(const NamedResult& nf, size_t index);

// ---- scaling (report_analysis_scaling.cpp)

/// The no-DDP row of `p`'s configuration: from the same file when there is one, else from any.
const Point* no_ddp_baseline(const std::vector<Point>& all, const Point& p);
/// The label of the file whose no-DDP row ddp_overhead uses for `p`; "" when none.
std::string baseline_file(const std::vector<Point>& all, const Point& p);
/// Exposed communication as a fraction of the step (the row's breakdown, mean over ranks).
std::optional<double> exposed_fraction(const Point& p);
/// DDP rows of `scaling` grouped on `on`, each group sorted by world size, groups by their first key.
std::vector<std::vector<const Point*>> ddp_groups(const std::vector<Point>& pts, const std::string& scaling,
                                                  const FieldSet& on);
/// The weak-scaling table of one group of rows (`all`: where no-DDP baselines are found).
WeakTable weak_table(const std::vector<Point>& all, const std::vector<const Point*>& rows);
/// The strong-scaling table of one group of rows.
StrongTable strong_table(const std::vector<Point>& all, const std::vector<const Point*>& rows);
/// Per-device throughput of the same configuration across devices or files.
Comparison comparison(const std::vector<Point>& all, const std::vector<Point>& best);
// One row of a scaling table as the cost table prices it.
struct CostPoint {
  ConfigKey key;                 // of its scaling table
  std::string setup;             // that table's setup and batch ("fp32, batch 32 per GPU")
  int ranks = 1, devices = 1;
  double examples_per_step = 0;  // examples of one optimizer step over all ranks
  double mean_step_s = 0;        // duration_step_s: the step statistic of every duration and cost
  RowLaunch launch;              // of the row
  bool shared = false;           // ranks shared a device: not priced
};
/// The cost table of one model: every priced row of its scaling tables, each at its mean step time.
CostTable cost_table(const std::string& model, const std::vector<CostPoint>& pts, const ReportOptions& opts);
/// The optimization impact of DDP's knobs, one table per configuration and group size.
std::vector<ImpactTable> impact_tables(const std::vector<Point>& pts);

// ---- strategies, memory and inference (report_analysis_strategy.cpp, schema 1.7)

/// A plain DDP training row (strategy "ddp", no checkpointing, training mode): what the
/// scaling tables compare.
bool plain_training(const Point& p);
/// zero2/fsdp and checkpointing side by side, one table per configuration.
std::vector<StrategyTable> strategy_tables(const std::vector<Point>& every, const std::vector<Point>& launches);
/// The memory each technique saves against the fp32 DDP row of the same configuration.
std::vector<MemoryTable> memory_tables(const std::vector<Point>& launches);
/// Inference rows (forward only), one table per configuration.
std::vector<InferenceTable> inference_tables(const std::vector<Point>& launches);

// ---- collectives and cluster validation (report_analysis_cluster.cpp, schema 1.6)

/// nccl-tests' table of each collective of each `comm` file.
std::vector<CommTable> comm_tables(const std::vector<NamedResult>& files);
/// What a file holds for cluster validation (telemetry rows, stragglers, pairs, find-max-bs).
ClusterFile cluster_of(const NamedResult& nf);
/// True when cluster_of found nothing to show.
bool cluster_empty(const ClusterFile& c);

}  // namespace ddpbench::report_analysis_internal
