// Acceptance checks of a result against reference values with tolerances, as HPC
// regression suites (ReFrame's `reference` with lower/upper thresholds) express them.
// Every entry pins the configuration it was measured on, matched through ConfigKey
// (docs/METHODOLOGY.md, "check references"). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/result/config_key.hpp"
#include "core/result/result.hpp"

namespace ddpbench {

/// Major version of the reference-file format this ddpbench reads ("2.0": entries pin
/// batch_per_rank, image_size and setup; 1.x entries did not).
inline constexpr int kReferenceMajor = 2;

/// Metrics a reference can name: the checkable per-row metrics of core/result/row_metrics
/// (row_metric_keys(kCheckable)), then two the report's weak-scaling table computes:
/// weak_scaling_efficiency and ddp_overhead ((t_DDP - t_noDDP) / t_DDP at p50: DDP's whole
/// cost, communication included, as a fraction of the step; needs the no-DDP row).
const std::vector<std::string>& check_metrics();

/// The setup an entry was measured with: ConfigKey fields under their names. Omitted
/// fields are `ddpbench run`'s defaults — pinned values, never wildcards.
struct ReferenceSetup {
  std::string precision;            ///< a `run --precision` name: fp32, fp32-strict, tf32, fp16, bf16 (required)
  std::optional<std::string> math;  ///< ConfigKey math; default: what the precision name sets on GPUs
  bool channels_last = false;
  std::string frozen_backbone;   ///< head name, "" (or false in the file) for none
  std::string backend = "auto";  ///< "auto": nccl on GPUs, gloo on CPUs (what `run --backend auto` picks)
  double bucket_cap_mb = 25, first_bucket_cap_mb = 1;
  /// The DDP flag settings at DDP's defaults (core/config/ddp_settings.hpp), under their names.
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_MEMBER, _)
  std::string comm_hook = "none";  ///< as `run --comm-hook` names it ("fp16", "powersgd:2")
  int grad_accum = 1;              ///< micro-steps per optimizer step, 1..1e6
};

/// One expected value. ReFrame style: the measurement passes when
/// value * (1 + lower) <= measured <= value * (1 + upper); `lower` <= 0 and `upper` >= 0
/// are fractions, and an absent bound is unbounded (at least one bound is required).
struct ReferenceEntry {
  std::string device;  ///< device type as `ddpbench report` names it ("NVIDIA H100 80GB HBM3"), or "*"
  std::string model;
  int world_size = 1;
  long long batch_per_rank = 0;
  int image_size = 0;
  ReferenceSetup setup;
  std::string metric;  ///< one of check_metrics()
  /// Expected value in the metric's unit (RowMetric::unit): ex/s for ex_per_s_*, seconds per
  /// iteration for p50_s/p95_s, bytes for peak_memory_bytes, a fraction (0.9, not 90) for
  /// exposed_comm and weak_scaling_efficiency.
  double value = 0;
  std::optional<double> lower, upper;  ///< relative tolerances (fractions of `value`)
  std::string unit;                    ///< for display only
  std::string note;                    ///< for people only

  /// The configuration this entry expects of a row measured as `row`: `row` with every
  /// field the entry pins replaced by the entry's value (the device only when `device` is not
  /// "*"; math per `row`'s device). A row matches exactly when its key equals this.
  ConfigKey expected(const ConfigKey& row) const;
};

/// Parses a reference file (format 2.x):
/// {"ddpbench_reference": "2.0", "description": "...", "references": [{device, model,
///  world_size, batch_per_rank, image_size, setup: {precision, math?, channels_last?,
///  frozen_backbone?, backend?, bucket_cap_mb?, first_bucket_cap_mb?, the DDP flag settings
///  (broadcast_buffers?, gradient_as_bucket_view?, static_graph?, find_unused_parameters?, ...:
///  ddp_flag_settings()), comm_hook?, grad_accum?},
///  metric, value, lower?, upper?, unit?, note?}]}.
/// Throws UsageError (one line, naming `source`, the entry and the fix) on malformed input,
/// an unknown key (a typo such as "uppper"), or another format version.
std::vector<ReferenceEntry> parse_reference(const std::string& text, const std::string& source);

/// Outcome of one reference entry.
struct CheckRow {
  ReferenceEntry ref;
  std::optional<ConfigKey> row;  ///< the configuration compared (absent when MISSING)
  std::optional<double> measured;
  std::optional<double> lo, hi;  ///< allowed range
  /// "PASS", "FAIL", "FAIL (<why>)" when the run declared the row invalid (its gradient
  /// self-check failed, or fp16 steps were skipped among the timed ones) whatever its
  /// numbers, "WARN (<warning code>)" when the value is in range but a warning of the row
  /// voids it (row_metrics undermining_warning: e.g. p95 from too few samples), or "MISSING"
  /// (no such weak-scaling DDP row measured). Only PASS passes.
  std::string status;
  std::string invalid;    ///< why the row is invalid; "" when it is not
  std::string untrusted;  ///< the code of the warning that voids the value; "" when none does
  std::string nearest;    ///< MISSING: the closest DDP row measured and how it differs ("" none)
};

/// Checks the weak-scaling DDP rows of `result` against the entries whose device type
/// matches the result's exactly (or is "*"). `skipped` receives the number of entries
/// for other devices. An empty result means nothing applied: `check` fails then too.
std::vector<CheckRow> check_against(const ResultFile& result, const std::vector<ReferenceEntry>& refs, int& skipped);

/// A value of a check_metrics() `metric` as `report` prints it: the row metric's own format
/// (ex/s to one decimal, seconds to four, bytes as MiB/GiB), fractions (efficiency, DDP
/// overhead) as percentages.
std::string metric_text(const std::string& metric, double v);

/// A row's allowed range in the metric's units (metric_text): "[540.0, +inf]".
std::string allowed_range_text(const CheckRow& r);

/// Width of `check`'s terminal output (characters per line).
inline constexpr size_t kCheckTextWidth = 100;

/// Terminal text of the outcome: the device, then per configuration (consecutive entries that
/// pin the same model, setup, batch, image size and ranks) a table of metric, measured value,
/// reference, allowed range and status, then a one-line summary and notes (what WARN and
/// MISSING mean, the nearest row measured for each MISSING entry). Lines fit kCheckTextWidth
/// (sentences wrapped; a table wider than that in parts, each led by the metric).
std::string render_check_text(const std::vector<CheckRow>& rows, const std::string& device, int skipped);

}  // namespace ddpbench
