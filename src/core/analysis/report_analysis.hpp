// Turning result files into scaling answers: weak- and strong-scaling tables, a
// comparison across GPU types (or files), and training cost. Torch-free.
// Every formula is in docs/METHODOLOGY.md with its source.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/convergence.hpp"
#include "core/analysis/summary.hpp"
#include "core/result/config_key.hpp"
#include "core/result/result.hpp"
#include "core/util/table.hpp"

namespace ddpbench {

/// A result file and the name it is reported under (its path).
struct NamedResult {
  std::string name;
  ResultFile file;
};

/// "GPU" for a key measured on GPUs, "rank" on CPUs (tables say "ranks", never "GPUs", there).
std::string unit_word(const ConfigKey& k);

/// What a row says about itself beyond its times.
struct RowFacts {
  std::optional<bool> self_check_passed;  ///< checks.grad_check_passed (DDP rows)
  /// The row's per-row metrics (core/result/row_metrics row_metric_values), in row_metrics() order.
  std::vector<std::optional<double>> metrics;
  std::vector<RowWarning> warnings;
  Stopping stopping;
  std::string peak_basis;             ///< compute.peak_basis: which peak MFU divides by ("" if unrecorded)
  std::optional<double> peak_tflops;  ///< compute.peak_tflops
  /// Coefficient of variation of the per-iteration means (row_cv: from the row's series in every
  /// schema, else summary.cv; fraction, 0 unknown).
  double cv = 0;
  /// Half-width of the 95% CI of the mean step time as a fraction of the mean (row_ci_fraction);
  /// 0 unknown.
  double ci = 0;
  int iterations = 0;  ///< measured iterations (row_iterations)

  /// Reads them from a row; fields a row lacks stay empty.
  static RowFacts of(const BenchResult& r);
  /// The metric `key` of row_metrics(); throws std::logic_error for a key the catalogue lacks.
  std::optional<double> metric(const std::string& key) const;
  /// The i-th metric of row_metrics(); nullopt for facts built without metrics.
  std::optional<double> metric_at(size_t i) const { return i < metrics.size() ? metrics[i] : std::nullopt; }
};

/// One row of a breakdown table: where a step's time went (docs/METHODOLOGY.md "Where the
/// time goes") and what its `communication` object records.
struct BreakdownRow {
  bool ddp = true;  ///< false: the no-DDP baseline (listed first)
  int world_size = 1;
  long long batch_per_rank = 0;
  /// Mean over ranks of each rank's mean seconds per step, in kBreakdownComponents order
  /// (forward, backward compute, backward comm, overlap, exposed comm, optimizer, other,
  /// step); absent when the row has no breakdown (schema < 1.5).
  std::optional<std::array<double, kNumBreakdownComponents>> mean_s;
  std::optional<double> buckets;                   ///< communication.buckets
  std::optional<double> allreduce_bytes_per_step;  ///< communication.allreduce_bytes_per_step (gradient bytes)
  std::optional<double> effective_busbw_gbps;      ///< communication.effective_busbw_gbps, as `run` recorded it
  std::string note;                                ///< breakdown.note, when the row has one
  std::string file;                                ///< launch label of the row ("F2")
};

/// A row given again: the same launch in a second file (the same content, or the same job id
/// and start time, `results[].launch`). It is counted once, as the first file given.
struct RepeatedLaunch {
  std::string file;  ///< label of the file that repeats it ("F2")
  std::string of;    ///< label of the file it was first given in ("F1")
  /// "the same content", or "the same job id 4711 started 2026-11-22T22:38:19Z"
  std::string why;
};

/// Which launch a row's numbers come from. Rows of several files that measured one
/// configuration are never mixed: the row is the launch with the median p50 among them, for
/// an even count the slower of the two middle ones (the conservative choice: of two launches,
/// never the faster), with how many launches there were and how far apart
/// (docs/METHODOLOGY.md "Several launches of one configuration"). A launch given twice
/// (RepeatedLaunch) counts once.
struct RowLaunch {
  std::string file;              ///< the result file's label in this report ("F2"; the files table names it)
  std::string source;            ///< that file as given (its path)
  int row = -1;                  ///< the row's index in that file's results (BenchResult::index_in_file)
  /// Every launch of the configuration, in file order: the rows a claim resting on this row
  /// names (role "launch"), with their p50 (s) as numbers.
  struct Ref {
    std::string label, source;
    int row = -1;
    double p50_s = 0;
  };
  std::vector<Ref> refs;
  int launches = 1;              ///< distinct launches that measured this configuration
  std::vector<std::string> all;  ///< their labels, in file order
  std::optional<double> spread;  ///< (slowest - fastest) / the chosen launch's p50 (fraction), when launches > 1
  std::vector<RepeatedLaunch> repeats;  ///< files that gave one of these launches again, counted once
};

/// The label of the index-th result file given to `report` ("F1" for the first): how every
/// row names the launch it comes from; the files table lists them.
std::string file_label(size_t index);

/// "F2", "F2: the median p50 of 3 launches (F1, F2, F3), spread 21.4%", "F1: the slower
/// middle p50 of 2 launches (F1, F2), spread 10.8%"; then "; F3 repeats F1 (the same content):
/// counted once" for each repeat.
std::string launch_words(const RowLaunch& l);

/// The peak a row's MFU divides by, named per row so that MFUs of different peaks are never
/// read as a ranking (docs/METHODOLOGY.md "FLOPs and MFU").
struct MfuPeak {
  std::string unit;            ///< "FP32", "TF32", "FP16" or "BF16" (gpu_peaks mfu_basis); "" unknown
  std::string basis;           ///< compute.peak_basis, else mfu_basis's label from the row's math
  std::optional<double> tflops;  ///< compute.peak_tflops (dense, TFLOP/s)
  /// "TF32 494.5 TFLOP/s" ("" when neither is known): the text a row's "MFU peak" cell shows.
  std::string short_label() const;
  /// Same unit and the same TFLOP/s: the only MFUs that may be compared or ranked.
  bool same_as(const MfuPeak& o) const { return unit == o.unit && tflops == o.tflops; }
};

/// DDP overhead vs no-DDP (docs/METHODOLOGY.md "Scaling analysis"): the share of one GPU's
/// no-DDP throughput that DDP costs, 1 - per-GPU ex/s under DDP / the no-DDP row's ex/s (both
/// at p50, fractions). With one rank per GPU and as many examples per step it equals
/// (t_DDP - t_noDDP) / t_DDP; where ranks shared a GPU it compares what the GPU delivered
/// rather than a step of twice the samples with a step of one rank's.
double ddp_overhead_by_throughput(double per_gpu_ex_s, double no_ddp_ex_s);

/// Weak scaling (fixed batch per GPU).
struct WeakRow {
  int world_size = 1, nodes = 1;
  /// Distinct devices of the row's ranks (GPU UUID, else host and bus id; environment.ranks):
  /// fewer than world_size when ranks shared a GPU. Per-GPU numbers, efficiency and cost count
  /// these, never ranks. world_size on CPUs and where the file does not say.
  int devices = 1;
  RowLaunch launch;
  std::string baseline_file;  ///< label of the file whose no-DDP row ddp_overhead used ("" none)
  std::string baseline_source;  ///< that file as given ("" none)
  int baseline_row = -1;        ///< the no-DDP row's index in it (-1 none)
  double baseline_ex_s = 0;     ///< the no-DDP row's ex/s (batch x grad_accum / p50; 0 none)
  /// The no-DDP row's warnings and self-check: a warning there voids what rests on it (the DDP
  /// overhead; the efficiency where the table's baseline is the no-DDP row).
  RowFacts baseline_facts;
  /// Ranks shared a GPU (devices < world_size): the row measures sharing, not scaling. Plots and
  /// cost leave such rows out of every scaling curve and price (its efficiency is no scaling
  /// efficiency); tables show them with their overhead by throughput and a note.
  bool shared_gpu = false;
  double per_gpu_ex_s = 0;    ///< aggregate_ex_s / devices
  double aggregate_ex_s = 0;  ///< world size * examples per rank per step (batch per rank x grad_accum) / p50
  double efficiency = 0;      ///< per_gpu_ex_s(N) / per_gpu_ex_s(1); not a scaling efficiency when shared_gpu
  /// DDP overhead vs no-DDP by throughput: 1 - per_gpu_ex_s / the no-DDP row's ex/s (p50), when a
  /// baseline exists (ddp_overhead_by_throughput). With one rank per GPU and the same examples
  /// per step this is (t_DDP - t_noDDP) / t_DDP.
  std::optional<double> ddp_overhead;
  /// Exposed communication as a fraction of the DDP step: breakdown mean_over_ranks
  /// exposed_comm_s / step_s (absent without a breakdown).
  std::optional<double> exposed_comm;
  /// ddp_overhead - exposed_comm: DDP's cost beyond exposed communication (bucket copies,
  /// buffer broadcast, Reducer work); absent unless both are known.
  std::optional<double> other_overhead;
  std::optional<double> tflops_per_gpu, mfu;  ///< achieved training TFLOP/s per GPU and MFU, when recorded
  MfuPeak mfu_peak;                           ///< what `mfu` divides by
  double p5_s = 0, p50_s = 0, p95_s = 0;
  double mean_s = 0;  ///< duration_step_s of the row (row_metrics): the step statistic of epoch time and cost
  RowFacts facts;
};
struct WeakTable {
  ConfigKey key;                     ///< of the group's rows (world_size, global_batch: those of the first row)
  double baseline_per_gpu_ex_s = 0;  ///< per-GPU ex/s of the `baseline` row
  std::string baseline;  ///< "1-GPU DDP", else "no-DDP", else "<N>-GPU DDP" (the smallest N); "rank" on CPUs
  /// Which row `baseline` names: efficiency means scaling only against a 1-rank DDP row or the
  /// no-DDP row; against the smallest group (last resort) that group is 100% by definition.
  enum class Baseline { one_rank, no_ddp, smallest_group } baseline_kind = Baseline::one_rank;
  std::optional<double> no_ddp_p50_s;
  std::vector<WeakRow> rows;  ///< DDP rows by world size
  /// The no-DDP baseline then the DDP rows by world size; empty unless some row has a breakdown.
  std::vector<BreakdownRow> breakdown;
};

/// Strong scaling (fixed global batch B, B/N per GPU).
struct StrongRow {
  int world_size = 1, nodes = 1;
  int devices = 1;          ///< as WeakRow::devices
  bool shared_gpu = false;  ///< as WeakRow::shared_gpu: never plotted or priced as scaling
  RowLaunch launch;
  std::string baseline_file;  ///< as WeakRow::baseline_file
  long long batch_per_rank = 0;
  double step_s = 0;                   ///< p50 time per global step
  double speedup = 0;                  ///< t(1) / t(N) x the first row's devices
  double efficiency = 0;               ///< speedup / devices
  double aggregate_ex_s = 0;           ///< global batch x grad_accum / step_s
  std::optional<double> ddp_overhead;  ///< as WeakRow::ddp_overhead, against the no-DDP row of the same batch per rank
  std::optional<double> exposed_comm, other_overhead;  ///< as in WeakRow
  double p5_s = 0, p95_s = 0;
  double mean_s = 0;  ///< as WeakRow::mean_s
  RowFacts facts;
};
struct StrongTable {
  ConfigKey key;  ///< of the group's rows (world_size, batch_per_rank: those of the first row)
  long long global_batch = 0;
  std::vector<StrongRow> rows;
  /// The no-DDP row at the first row's batch per rank, then the DDP rows; empty unless some
  /// row has a breakdown.
  std::vector<BreakdownRow> breakdown;
};

/// One line of the optimization-impact table (a cluster benchmark report's "Communication Optimization
/// Impact", from measured rows only): a DDP run with some knobs changed against the plain
/// run (every knob at Python DDP's default) of the same configuration and world size.
struct ImpactRow {
  std::string technique;  ///< ConfigKey::knob_label() of the variant; "baseline (DDP defaults)"
  RowLaunch launch;
  bool baseline = false;
  double step_s = 0;          ///< p50 seconds per optimizer step
  double aggregate_ex_s = 0;  ///< world size * batch per rank * grad_accum / step_s
  /// aggregate_ex_s / the baseline's: t_base / t when both accumulate as many micro-steps.
  std::optional<double> speedup;
  std::optional<double> exposed_comm_s;    ///< breakdown mean over ranks, seconds per optimizer step
  std::optional<double> exposed_change_s;  ///< exposed_comm_s - the baseline's
  std::optional<double> exposed_change;    ///< exposed_change_s / the baseline's exposed_comm_s (fraction)
  RowFacts facts;                          ///< the row's warnings and self-check (the summary's rules read them)
};
struct ImpactTable {
  ConfigKey key;                ///< the configuration with every knob at its default (ConfigKey::with_default_knobs)
  bool has_baseline = false;    ///< false: no plain run was measured; speedups are absent
  std::vector<ImpactRow> rows;  ///< the baseline first (when measured), then the variants in ConfigKey order
};

/// One line of the strategy comparison (a cluster benchmark report's "Throughput Scaling" table with its
/// "Strategy Comparison", from measured rows): one training row of one world size with its
/// strategy, activation checkpointing and precision (docs/METHODOLOGY.md "Memory per rank
/// and inference mode").
struct StrategyRow {
  int world_size = 1;
  RowLaunch launch;
  std::string strategy = "ddp";  ///< BenchResult::strategy: "ddp", "zero2", "fsdp"
  bool activation_checkpointing = false;
  std::string precision = "fp32";  ///< ConfigKey::precision_label: the precision with the math that ran
  double aggregate_ex_s = 0;       ///< world size * batch per rank * grad_accum / step p50
  /// aggregate_ex_s / (N * aggregate ex/s of the same line on 1 rank), else of the no-DDP row
  /// of the same precision, checkpointing and batch per rank (weak scaling); absent without either.
  std::optional<double> efficiency;
  double step_s = 0;                   ///< p50 seconds per optimizer step
  std::optional<double> exposed_comm;  ///< breakdown exposed_comm_s / step_s (mean over ranks)
  std::optional<double> peak_allocated_bytes, peak_reserved_bytes;  ///< memory.max_over_ranks (GPU rows)
  std::optional<double> peak_rss_bytes;     ///< memory.max_over_ranks (CPU rows: process peak RSS)
  std::optional<double> model_state_bytes;  ///< memory.model_state_bytes.total (rank 0), bytes
  /// row_peak_memory_bytes (core/result/row_memory): the peak the scaling tables print as
  /// "peak mem", in every schema (the telemetry's copy for files before the memory section).
  std::optional<double> peak_memory_bytes;
  RowFacts facts;                           ///< the row's warnings and self-check (the summary's rules read them)
};
struct StrategyTable {
  ConfigKey key;  ///< of the first line; precision, math, world size and global batch vary within the table
  std::vector<StrategyRow> rows;  ///< by world size, then ddp, zero2, fsdp, checkpointing off/on, precision
};

/// One technique of the memory table (a cluster benchmark report's "Memory Optimization", measured): a row
/// against the fp32 DDP row (no checkpointing) of the same model, world size and batch.
struct MemoryRow {
  int world_size = 1;
  RowLaunch launch;           ///< of the technique's row
  std::string baseline_file;  ///< label of the file of the fp32 DDP row it is compared with
  std::string baseline_source;  ///< that file as given
  int baseline_row = -1;        ///< the fp32 DDP row's index in it
  std::string technique;  ///< "mixed precision (bf16)", "activation checkpointing", "zero2", "fsdp", joined with " + "
  double baseline_peak_bytes = 0;          ///< the fp32 DDP row's peak memory per rank (RowMemory::peak_bytes)
  double peak_bytes = 0;                   ///< this row's
  double saved_bytes = 0;                  ///< baseline_peak_bytes - peak_bytes (negative: it costs memory)
  double saved = 0;                        ///< saved_bytes / baseline_peak_bytes (fraction)
  double baseline_step_s = 0, step_s = 0;  ///< p50 seconds per optimizer step
  double time_paid = 0;                    ///< step_s / baseline_step_s - 1 (fraction; negative: faster)
  std::optional<double> model_state_bytes, baseline_model_state_bytes;  ///< memory.model_state_bytes.total
};
struct MemoryTable {
  ConfigKey key;                ///< of the baseline rows (precision fp32)
  std::string peak_kind;        ///< "peak allocated" (GPU rows) or "peak RSS" (CPU rows)
  std::vector<MemoryRow> rows;  ///< by world size, then as the strategy table
};

/// One row of `run --mode inference` (forward only, no DDP): throughput over the group and
/// the per-batch forward latency.
struct InferenceRow {
  int world_size = 1;
  RowLaunch launch;
  double aggregate_ex_s = 0;                ///< world size * batch per rank / p50
  double p50_s = 0, p95_s = 0;              ///< per-batch forward time, pooled over ranks
  std::optional<double> peak_memory_bytes;  ///< row_peak_memory_bytes (core/result/row_memory)
};
struct InferenceTable {
  ConfigKey key;  ///< of the first row (world size varies)
  std::vector<InferenceRow> rows;
};

/// The results of one collective of `ddpbench comm` on one group of ranks, in one file
/// (nccl-tests' columns).
struct CommTable {
  std::string source;  ///< the file
  std::string device;  ///< device_type of the file
  std::string collective;
  int world_size = 1, nodes = 1;
  std::string label;             ///< "<nodes>M/<ranks><G|C>"
  std::vector<CommResult> rows;  ///< by dtype, redop, then size
};

/// Per-GPU throughput of the same configuration (every ConfigKey field but the device)
/// across groups (device types, or files when all share one device type), for
/// configurations measured by at least two groups; ratio to the first group with a value.
struct ComparisonRow {
  ConfigKey key;                                    ///< device ""
  std::vector<std::optional<double>> per_gpu_ex_s;  ///< one per group
  std::vector<std::optional<double>> ratio;         ///< per_gpu / per_gpu of the first group with a value
};
struct Comparison {
  std::string by;            ///< "device type" or "file"
  std::string unit = "GPU";  ///< "rank" when a CPU device takes part (see unit_word)
  std::vector<std::string> groups;
  std::vector<ComparisonRow> rows;
};

/// Cost of training one model, every setup and world size measured side by side, for `epochs`
/// over `dataset_size` samples. Every duration and price uses the one step statistic of epoch
/// time (row_metrics duration_step_s: the mean step), so a row's epoch time x epochs is the time
/// priced here.
struct CostRow {
  std::string setup;    ///< the scaling table's setup and batch: "fp16, channels_last, batch 256 per GPU"
  ConfigKey key;        ///< of that scaling table
  int world_size = 1;   ///< N: the GPUs billed (distinct devices; WeakRow::devices)
  int ranks = 1;        ///< the row's ranks (never more than N: rows whose ranks shared a GPU are not priced)
  std::string file;     ///< the launch label of the scaling row it prices ("F2")
  std::string source;   ///< that file as given
  int row = -1;         ///< the row's index in it
  /// Examples per second over the whole run: examples of one optimizer step (all ranks) / mean_step_s.
  double ex_s_mean_step = 0;
  double usd_per_million = 0;  ///< price * N / 3600 * 1e6 / ex_s_mean_step
  /// The cheapest row's usd_per_million / this row's: 1 for the cheapest, 0.5 for a row that costs
  /// twice as much per sample (cost efficiency relative to the cheapest).
  double relative = 0;
  /// epochs * steps_per_epoch(dataset_size, examples per step) * mean_step_s / 3600
  double hours = 0;
  double usd = 0;          ///< hours * N * price
  double mean_step_s = 0;  ///< the row's duration_step_s
};
struct CostTable {
  ConfigKey key;        ///< of the first priced scaling table (the model, device and image size it names)
  std::string model;
  double gpu_hour_usd = 0;
  int epochs = 0;
  long long dataset_size = 0;
  std::vector<CostRow> rows;  ///< by setup (the scaling tables' order), then world size
  size_t best = 0;            ///< index of the cheapest row (lowest cost per sample; the smaller N on a tie)
  /// Rows of the scaling tables not priced because their ranks shared a GPU: "2 ranks on 1 GPU (F1)".
  std::vector<std::string> not_priced;
};

/// Options of `ddpbench report` that change numbers.
/// Bounds of the cost options (build_report throws UsageError outside them).
inline constexpr double kMaxGpuHourUsd = 1e6;                            ///< --gpu-hour-cost: (0, 1e6] USD
inline constexpr int kMaxEpochs = 1'000'000;                             ///< --epochs: 1..1e6
inline constexpr long long kMaxReportDatasetSize = 1'000'000'000'000LL;  ///< --dataset-size: 1..1e12

struct ReportOptions {
  /// `--per-rank`: add each straggler entry's per-rank table and the per-rank telemetry of
  /// each model's largest group (the named stragglers are in the headline either way).
  bool per_rank = false;
  std::optional<double> gpu_hour_usd;  ///< price of one GPU (or rank) for one hour, (0, kMaxGpuHourUsd]
  int epochs = 90;                     ///< 1..kMaxEpochs
  long long dataset_size = 1281167;    ///< ImageNet-1k training set; 1..kMaxReportDatasetSize
  /// What the executive summary holds the rows to: min_efficiency in (0, 1], max_exposed_comm
  /// in [0, 1], min_per_gpu_ex_s > 0, the same for each per_model value (build_report throws
  /// UsageError outside).
  SummaryTargets targets;
};

/// What one result file holds for cluster validation (schema 1.6; docs/METHODOLOGY.md
/// "Reading the cluster-validation report"), copied from the file as recorded.
struct ClusterFile {
  std::string source;  ///< the file
  std::string label;   ///< its label in the report (file_label: "F3")
  std::string device;  ///< device_type of the file
  /// Rows with per-rank telemetry.sampled (schema 1.6) or a burn_in (schema 1.6), in file order.
  std::vector<BenchResult> rows;
  nlohmann::json stragglers = nlohmann::json::array();   ///< ResultFile.stragglers (schema 1.6)
  std::vector<CommResult> pair_rows;                     ///< `comm --pairs` rows (extra.pair, extra.round; schema 1.6)
  nlohmann::json comm_pairs = nlohmann::json::object();  ///< ResultFile.comm_pairs
  nlohmann::json max_batch = nlohmann::json::object();   ///< ResultFile.max_batch (kind "find-max-bs")
};

/// Mean over ranks, minimum, maximum of one telemetry quantity of a row; absent where no rank has it.
struct TelemetryRowSummary {
  int ranks = 0;                            ///< ranks with a telemetry.sampled object
  int gpu_ranks = 0;                        ///< of those, ranks whose GPU metrics are available
  std::optional<double> min_sm_util_pct;    ///< min over ranks of each rank's mean SM utilization, %
  std::optional<double> max_temperature_c;  ///< max over ranks of each rank's max temperature, C
  std::optional<double> min_sm_clock_mhz;   ///< min over ranks of each rank's min SM clock, MHz
  std::optional<double> max_power_w;        ///< max over ranks of each rank's max power, W
  /// max over ranks of each rank's largest memory used (NVML: every process on the GPU) as a
  /// share of the card's memory, %
  std::optional<double> max_mem_used_pct;
  int throttled_ranks = 0;                    ///< ranks with throttled_fraction > 0
  std::vector<std::string> throttle_reasons;  ///< union over ranks, sorted
  std::optional<double> mean_cpu_util_pct;    ///< mean over ranks of each rank's mean CPU utilization, %
  std::optional<double> max_peak_rss_bytes;   ///< max over ranks of peak RSS, bytes
  std::optional<double> mean_net_rx_bytes_per_s, mean_net_tx_bytes_per_s;  ///< mean over ranks of each rank's mean
  std::vector<std::string> gpu_unavailable;  ///< the distinct reasons of ranks without GPU metrics
};

/// Summarises the per-rank telemetry.sampled objects of `row` (schema 1.6).
TelemetryRowSummary summarize_telemetry(const BenchResult& row);

/// The row of `rows` whose ranks' telemetry stands for model `model`: its DDP row with the
/// largest world size that has sampled telemetry (the no-DDP row when there is no DDP one);
/// nullptr when none has telemetry.
const BenchResult* largest_group(const std::vector<BenchResult>& rows, const std::string& model);

/// The headline sentence of one straggler entry (schema 1.6) of the file labelled `file`
/// ("F2"; "" names none): "Straggler (resnet18, batch 16 per rank, 2 ranks, F2): rank 1 (host
/// node0, local rank 1, CPU) has score 0.52 < 0.95" (one sentence per named rank, GPU index,
/// UUID and bus id where the rank has a GPU), or "No straggler (...): every score >= 0.95
/// (lowest: rank 2, 0.97)" (no_straggler_words, which also says why a low score is not named).
std::vector<std::string> straggler_sentences(const nlohmann::json& entry, const std::string& file = "");

/// Burn-in tables show one column per rank up to this many ranks, else min/median/max over ranks.
inline constexpr size_t kBurnInRankColumns = 8;

/// Everything `ddpbench report` prints.
struct Report {
  /// Targets with pass/fail and the recommendations (core/analysis/summary.hpp): printed first.
  ExecutiveSummary summary;
  std::vector<WeakTable> weak;
  std::vector<StrongTable> strong;
  Comparison comparison;
  std::vector<CostTable> cost;  ///< one per model; empty unless a GPU-hour price was given
  /// One per configuration (but the DDP knobs) and world size > 1 that measured a variant.
  std::vector<ImpactTable> impact;
  /// Per configuration (precision, world size aside) where some world size has two or more
  /// strategies / checkpointing / precisions: the strategy comparison.
  std::vector<StrategyTable> strategy;
  /// The same groups where a technique row and its fp32 DDP row both have peak memory.
  std::vector<MemoryTable> memory;
  /// `run --mode inference` rows, one table per configuration (world size aside).
  std::vector<InferenceTable> inference;
  std::vector<CommTable> comm;  ///< one per file, collective and group of ranks (`ddpbench comm` files)
  /// Per file: label (file_label), name, tool, created, device type, torch, cuda, nccl, backend, hosts; complete,
  /// rows, rows_planned and warning (incomplete_warning: "" for a complete file).
  std::vector<nlohmann::json> files;
  /// Schema 1.6: per file with telemetry, stragglers, burn-in, pair rows or a find-max-bs search.
  std::vector<ClusterFile> cluster;
  bool per_rank = false;  ///< ReportOptions::per_rank
  /// Sentences of the executive summary's findings: the named stragglers (or that none was),
  /// the slow nodes and links of `comm --pairs`, find-max-bs recommendations.
  std::vector<std::string> findings;
  /// Files, or rows of files, that repeat a launch given earlier: each counted once (the
  /// executive summary's data-quality line and the rows' launch notes name them).
  std::vector<RepeatedLaunch> repeats;
  /// Labels of the files wholly equal to an earlier one (a subset of `repeats`' files): none of
  /// their sections is counted.
  std::vector<std::string> repeated_files;
  /// Time-to-loss rows (--data), per file, model and dataset (core/render/report_convergence.hpp).
  std::vector<ConvergenceGroup> convergence;
};

/// Builds the report. Files of kind "find-max-bs" and files with only stragglers are
/// reported too. Rows are identified by their ConfigKey (config_key.hpp); a launch given in
/// two files (the same content, or the same job id and start time) counts once
/// (Report::repeats); where several launches measured the same configuration, the median one
/// by p50 is used (of an even count the slower middle one), named with how many launches there
/// were and their spread (RowLaunch). Rows without a positive p50 are
/// skipped. The executive summary is built last, from the tables (executive_summary). Throws UsageError when
/// `files` hold neither a DDP row, a collective result (`ddpbench comm`), stragglers nor a
/// find-max-bs search, or `opts` is invalid.
Report build_report(const std::vector<NamedResult>& files, const ReportOptions& opts);

/// The time-to-loss groups of `files` (rows whose convergence object is non-empty), in file order.
std::vector<ConvergenceGroup> convergence_groups(const std::vector<NamedResult>& files);

}  // namespace ddpbench
