// Turning result files into scaling answers: weak- and strong-scaling tables, a
// comparison across GPU types (or files), and training cost. Torch-free.
// Every formula is in docs/METHODOLOGY.md with its source.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/config_key.hpp"
#include "core/result.hpp"
#include "core/table.hpp"

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
  std::optional<bool> self_check_passed;    ///< checks.grad_check_passed (DDP rows)
  std::optional<double> peak_memory_bytes;  ///< telemetry.peak_memory_bytes_max_over_ranks
  std::vector<RowWarning> warnings;
  Stopping stopping;
  std::string peak_basis;                   ///< compute.peak_basis: which peak MFU divides by ("" if unrecorded)
  std::optional<double> peak_tflops;        ///< compute.peak_tflops

  /// Reads them from a row; fields a row lacks stay empty.
  static RowFacts of(const BenchResult& r);
};

/// Weak scaling (fixed batch per GPU).
struct WeakRow {
  int world_size = 1, nodes = 1;
  double per_gpu_ex_s = 0;    ///< batch per rank / p50
  double aggregate_ex_s = 0;  ///< world size * per_gpu_ex_s
  double efficiency = 0;      ///< per_gpu_ex_s(N) / per_gpu_ex_s(1)
  /// DDP overhead vs no-DDP: (t_DDP(N) - t_noDDP) / t_DDP(N), p50 times, when a baseline exists.
  std::optional<double> ddp_overhead;
  std::optional<double> tflops_per_gpu, mfu;  ///< achieved training TFLOP/s per GPU and MFU, when recorded
  double p5_s = 0, p50_s = 0, p95_s = 0;
  RowFacts facts;
};
struct WeakTable {
  ConfigKey key;  ///< of the group's rows (world_size, global_batch: those of the first row)
  double baseline_per_gpu_ex_s = 0;  ///< per-GPU ex/s of the `baseline` row
  std::string baseline;              ///< "1-GPU DDP", else "no-DDP", else "<N>-GPU DDP" (the smallest N); "rank" on CPUs
  std::optional<double> no_ddp_p50_s;
  std::vector<WeakRow> rows;         ///< DDP rows by world size
};

/// Strong scaling (fixed global batch B, B/N per GPU).
struct StrongRow {
  int world_size = 1, nodes = 1;
  long long batch_per_rank = 0;
  double step_s = 0;      ///< p50 time per global step
  double speedup = 0;     ///< t(1) / t(N)
  double efficiency = 0;  ///< speedup / N
  double aggregate_ex_s = 0;  ///< global batch / step_s
  std::optional<double> ddp_overhead;  ///< as WeakRow::ddp_overhead, against the no-DDP row of the same batch per rank
  double p5_s = 0, p95_s = 0;
  RowFacts facts;
};
struct StrongTable {
  ConfigKey key;  ///< of the group's rows (world_size, batch_per_rank: those of the first row)
  long long global_batch = 0;
  std::vector<StrongRow> rows;
};

/// Per-GPU throughput of the same configuration (every ConfigKey field but the device)
/// across groups (device types, or files when all share one device type), for
/// configurations measured by at least two groups; ratio to the first group with a value.
struct ComparisonRow {
  ConfigKey key;  ///< device ""
  std::vector<std::optional<double>> per_gpu_ex_s;  ///< one per group
  std::vector<std::optional<double>> ratio;         ///< per_gpu / per_gpu of the first group with a value
};
struct Comparison {
  std::string by;                  ///< "device type" or "file"
  std::string unit = "GPU";        ///< "rank" when a CPU device takes part (see unit_word)
  std::vector<std::string> groups;
  std::vector<ComparisonRow> rows;
};

/// Cost of training at each world size, for `epochs` over `dataset_size` samples.
struct CostRow {
  int world_size = 1;
  double aggregate_ex_s = 0;
  double usd_per_million = 0;  ///< price * N / 3600 * 1e6 / aggregate_ex_s
  double hours = 0;            ///< epochs * dataset_size / aggregate_ex_s / 3600
  double usd = 0;              ///< hours * N * price
};
struct CostTable {
  ConfigKey key;        ///< of the scaling table it prices
  long long batch = 0;  ///< batch per GPU (weak) or global batch (strong)
  double gpu_hour_usd = 0;
  int epochs = 0;
  long long dataset_size = 0;
  std::vector<CostRow> rows;
  int best_world_size = 1;  ///< lowest cost per sample (the smaller N on a tie)
};

/// Options of `ddpbench report` that change numbers.
/// Bounds of the cost options (build_report throws UsageError outside them).
inline constexpr double kMaxGpuHourUsd = 1e6;                       ///< --gpu-hour-cost: (0, 1e6] USD
inline constexpr int kMaxEpochs = 1'000'000;                        ///< --epochs: 1..1e6
inline constexpr long long kMaxReportDatasetSize = 1'000'000'000'000LL;  ///< --dataset-size: 1..1e12

struct ReportOptions {
  std::optional<double> gpu_hour_usd;  ///< price of one GPU (or rank) for one hour, (0, kMaxGpuHourUsd]
  int epochs = 90;                     ///< 1..kMaxEpochs
  long long dataset_size = 1281167;    ///< ImageNet-1k training set; 1..kMaxReportDatasetSize
};

/// Everything `ddpbench report` prints.
struct Report {
  std::vector<WeakTable> weak;
  std::vector<StrongTable> strong;
  Comparison comparison;
  std::vector<CostTable> cost;   ///< empty unless a GPU-hour price was given
  /// Per file: name, tool, created, device type, torch, cuda, nccl, backend, hosts; complete,
  /// rows, rows_planned and warning (incomplete_warning: "" for a complete file).
  std::vector<nlohmann::json> files;
};

/// Builds the report. Rows are identified by their ConfigKey (config_key.hpp); where
/// several files measured the same configuration, the row with the narrowest relative 95% CI
/// of the mean is used
/// (the first on a tie). Rows without a positive p50 are skipped. Throws UsageError when
/// `files` hold no DDP row or `opts` is invalid.
Report build_report(const std::vector<NamedResult>& files, const ReportOptions& opts);

/// The report's tables in print order: weak, strong, comparison, cost.
std::vector<Table> report_tables(const Report& r);

/// The report in `format` (render_tables of report_tables); JSON adds the files:
/// {"tables": [...], "files": [...]}.
std::string render_report(const Report& r, TableFormat format);

}  // namespace ddpbench
