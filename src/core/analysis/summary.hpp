// The report's executive summary: the measured rows held to stated targets (pass/fail), and
// recommendations derived by the rules of docs/METHODOLOGY.md "Executive summary and
// recommendations", each naming the table and launch its numbers come from. Torch-free.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/check.hpp"

namespace ddpbench {

struct Report;
struct NamedResult;

/// What the summary holds every weak-scaling table to, at its largest GPU count.
struct SummaryTargets {
  double min_efficiency = 0.85;            ///< weak-scaling efficiency, fraction in (0, 1]
  double max_exposed_comm = 0.15;          ///< exposed communication / step time, fraction in [0, 1]
  std::optional<double> min_per_gpu_ex_s;  ///< per-GPU ex/s; unchecked unless given (no default fits every model)
  std::vector<ReferenceEntry> pinned;      ///< `--targets FILE` (check's reference format), checked on every run file
  std::string pinned_source;               ///< that file's path; "" when none was given
};

/// One target against one row.
struct SummaryCheck {
  std::string what;  ///< the configuration: "resnet50, fp32 (cuDNN TF32), batch 32 per GPU, NVIDIA H100 80GB HBM3"
  int gpus = 0;      ///< distinct devices of the row (0: not known, a MISSING reference entry)
  int ranks = 0;     ///< its ranks
  std::string unit = "GPU";  ///< what `gpus` counts: "GPU", or "rank" on CPUs (unit_word)
  std::string metric;        ///< "weak-scaling efficiency", "exposed comm", "per-GPU ex/s", or a reference metric key
  std::string target;        ///< ">= 85.0%", "< 15.0%", "[1000, +inf] ex/s"
  std::string measured;      ///< as the report prints it ("92.5%"); "" when not measured
  /// "PASS", "FAIL", "FAIL (<why>)", "WARN (<warning code>)" (in range, but a warning of the
  /// row voids it: row_metrics undermining_warning), "MISSING", "not measured (<why>)".
  std::string status;
  std::string from;  ///< where the number is: "weak scaling, F2" ("F2 vs F1" when its baseline is another launch)
};

/// One sentence a rule derived from measured rows.
struct Recommendation {
  std::string topic;  ///< "world size", "DDP setting", "setup", "memory", "cost", "node"
  std::string text;   ///< one sentence; every number in it is printed in the rows `from` names
  std::string from;   ///< the table and launch labels: "optimization impact, F2 vs F1"
};

/// The summary a stakeholder reads first.
struct ExecutiveSummary {
  std::vector<SummaryCheck> checks;
  std::vector<std::string> notes;  ///< where the targets come from; what could not be evaluated and why
  std::vector<Recommendation> recommendations;
};

/// Gain a DDP setting or setup must beat before a rule recommends it: 5% of aggregate ex/s, or
/// more where the rows' launch-to-launch spread is larger (each row's own spread over several
/// launches; for a row of one launch the spread measured on its device type, diff.hpp
/// measured_launch_spread).
inline constexpr double kMinKnobGain = 0.05;

/// Holds the report's rows to `t` and applies the recommendation rules (docs/METHODOLOGY.md
/// "Executive summary and recommendations"): per weak-scaling table (a table whose DDP knobs
/// differ from the defaults only where no table of the same configuration with the defaults
/// exists: the variants are the optimization-impact table's business), its largest GPU count
/// against the efficiency, exposed-comm and per-GPU targets (efficiency and comm only when that
/// count is above one GPU); `t.pinned` against every run file of `files` (check_against, one
/// line per launch); then the rules: world size (the largest size meeting the efficiency
/// target), DDP setting (the best knob of an optimization-impact table when it beats
/// kMinKnobGain and its launches' spread; else keep the defaults), setup (the fastest strategy,
/// checkpointing and precision of a strategy table's world size, when it beats the slowest by
/// more than that floor), memory (the technique that
/// saves the most peak memory and what it costs), cost (the most cost-efficient size), node (a
/// named straggler's host, a slow node of `comm --pairs`). The world-size, DDP-setting and setup
/// rules say nothing when a deciding row failed its self-check or a warning voids its number.
ExecutiveSummary executive_summary(const Report& r, const std::vector<NamedResult>& files, const SummaryTargets& t);

}  // namespace ddpbench
