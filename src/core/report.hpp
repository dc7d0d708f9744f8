// Turning result files into scaling answers: weak- and strong-scaling tables, a
// comparison across GPU types (or files), and training cost. Torch-free.
// Every formula is in docs/METHODOLOGY.md with its source.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/text_table.hpp"

namespace ddpbench {

/// A result file and the name it is reported under (its path).
struct NamedResult {
  std::string name;
  ResultFile file;
};

/// Device type of a result file: the GPU name all ranks share, "mixed: A + B" when they
/// differ, or "CPU (<cpu model>)" ("CPU" when unrecorded) for CPU runs.
std::string device_type(const ResultFile& f);

/// Weak scaling (fixed batch per GPU).
struct WeakRow {
  int world_size = 1, nodes = 1;
  double per_gpu_ex_s = 0;    ///< batch per rank / p50
  double aggregate_ex_s = 0;  ///< world size * per_gpu_ex_s
  double efficiency = 0;      ///< per_gpu_ex_s(N) / per_gpu_ex_s(1)
  std::optional<double> exposed_comm;  ///< (t_DDP(N) - t_noDDP) / t_DDP(N), p50 times, when a baseline exists
  std::optional<double> tflops_per_gpu, mfu;  ///< achieved training TFLOP/s per GPU and MFU, when recorded
  double p5_s = 0, p50_s = 0, p95_s = 0;
};
struct WeakTable {
  std::string gpu, model, precision;  ///< precision with setup qualifiers ("fp32 (TF32 allowed)", ", channels_last", ...)
  std::string base_precision;         ///< without them
  int image_size = 0;
  long long batch_per_rank = 0;
  double baseline_per_gpu_ex_s = 0;  ///< per-GPU ex/s of the `baseline` row
  std::string baseline;              ///< "1-GPU DDP", else "no-DDP", else "<N>-GPU DDP" (the smallest N)
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
  std::optional<double> exposed_comm;
  double p5_s = 0, p95_s = 0;
};
struct StrongTable {
  std::string gpu, model, precision;
  int image_size = 0;
  long long global_batch = 0;
  std::vector<StrongRow> rows;
};

/// Per-GPU throughput of the same (model, precision, image size, scaling, batch per rank,
/// world size) across groups (device types, or files when all share one device type),
/// for configurations measured by at least two groups; ratio to the first group with a value.
struct ComparisonRow {
  std::string model, precision, scaling;
  int image_size = 0;
  long long batch_per_rank = 0;
  int world_size = 1;
  std::vector<std::optional<double>> per_gpu_ex_s;  ///< one per group
  std::vector<std::optional<double>> ratio;         ///< per_gpu / per_gpu of the first group with a value
};
struct Comparison {
  std::string by;                  ///< "device type" or "file"
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
  std::string gpu, model, precision, scaling;
  int image_size = 0;
  long long batch = 0;  ///< batch per GPU (weak) or global batch (strong)
  double gpu_hour_usd = 0;
  int epochs = 0;
  long long dataset_size = 0;
  std::vector<CostRow> rows;
  int best_world_size = 1;  ///< lowest cost per sample (the smaller N on a tie)
};

/// Options of `ddpbench report` that change numbers.
struct ReportOptions {
  std::optional<double> gpu_hour_usd;  ///< price of one GPU (or rank) for one hour
  int epochs = 90;
  long long dataset_size = 1281167;    ///< ImageNet-1k training set
};

/// Everything `ddpbench report` prints.
struct Report {
  std::vector<WeakTable> weak;
  std::vector<StrongTable> strong;
  Comparison comparison;
  std::vector<CostTable> cost;   ///< empty unless a GPU-hour price was given
  std::vector<nlohmann::json> files;  ///< per file: name, tool, created, device type, torch, cuda, nccl, backend, hosts
};

/// Builds the report. A configuration is identified by device type, model, precision and
/// setup (TF32 math on GPUs, channels_last, frozen backbone, Gloo on GPUs), image size,
/// scaling, batch per rank, world size and DDP or not; where several files measured the
/// same one, the row with the most samples is used (the first on a tie). Rows without a
/// positive p50 are skipped. Throws UsageError when `files` hold no DDP row or `opts` is invalid.
Report build_report(const std::vector<NamedResult>& files, const ReportOptions& opts);

/// The report's tables in print order: weak, strong, comparison, cost.
std::vector<TextTable> report_tables(const Report& r);

/// Output formats of the report.
std::string render_text(const Report& r);      ///< terminal tables
std::string render_markdown(const Report& r);  ///< GitHub-flavoured Markdown tables
std::string render_csv(const Report& r);       ///< one long CSV (RFC 4180), a row per table row
nlohmann::json report_json(const Report& r);   ///< the same numbers, machine-readable

}  // namespace ddpbench
