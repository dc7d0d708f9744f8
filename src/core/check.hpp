// Acceptance checks of a result against reference values with tolerances, as HPC
// regression suites (ReFrame's `reference` with lower/upper thresholds) express them.
// Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace ddpbench {

/// Metrics a reference can name, as in the result file's summary, plus the weak-scaling
/// efficiency the report computes.
const std::vector<std::string>& check_metrics();

/// One expected value. ReFrame style: the measurement passes when
/// value * (1 + lower) <= measured <= value * (1 + upper); `lower` <= 0 and `upper` >= 0
/// are fractions, and an absent bound is unbounded.
struct ReferenceEntry {
  std::string gpu;        ///< device type as `ddpbench report` names it ("NVIDIA H100 80GB HBM3"), or "*"
  std::string model, precision = "fp32";
  int world_size = 1;
  std::string metric;     ///< one of check_metrics()
  /// Expected value in the metric's unit: ex/s for ex_per_s_*, seconds per iteration for
  /// p50_s/p95_s, a fraction (0.9, not 90) for weak_scaling_efficiency.
  double value = 0;
  std::optional<double> lower, upper;  ///< relative tolerances (fractions of `value`)
  std::string unit;       ///< for display only
  std::optional<long long> batch_per_rank;  ///< when set, only rows with this batch per rank
  std::optional<int> image_size;            ///< when set, only rows with this image size
};

/// Parses a reference file: {"ddpbench_reference": "1.0", "description": "...",
/// "references": [{gpu, model, precision, world_size, metric, value, lower, upper, unit,
/// batch_per_rank?, image_size?}]}.
/// Throws UsageError (one line, naming `source` and the entry) on malformed input.
std::vector<ReferenceEntry> parse_reference(const std::string& text, const std::string& source);

/// Outcome of one reference entry.
struct CheckRow {
  ReferenceEntry ref;
  std::optional<double> measured;
  std::optional<double> lo, hi;  ///< allowed range
  std::string status;            ///< "PASS", "FAIL", or "MISSING" (no such DDP row measured)
};

/// Checks the DDP rows of `result` (weak scaling) against the entries whose device type
/// matches the result's exactly (or is "*"). `skipped` receives the number of entries
/// for other devices. An empty result means nothing applied: `check` fails then too.
std::vector<CheckRow> check_against(const ResultFile& result, const std::vector<ReferenceEntry>& refs, int& skipped);

/// Terminal table of the outcome with a one-line summary.
std::string render_check_text(const std::vector<CheckRow>& rows, const std::string& device, int skipped);

}  // namespace ddpbench
