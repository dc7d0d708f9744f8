// The report's executive summary: the measured rows held to stated targets (pass/fail), and
// recommendations derived by the rules of docs/METHODOLOGY.md "Executive summary and
// recommendations", each naming the table and launch its numbers come from. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/check.hpp"
#include "core/analysis/claim.hpp"

namespace ddpbench {

struct Report;
struct NamedResult;

/// One target against one row.
struct SummaryCheck {
  std::string what;  ///< the configuration: "resnet50, fp32 (cuDNN TF32), batch 32 per GPU, NVIDIA H100 80GB HBM3"
  int gpus = 0;      ///< distinct devices of the row (0: not known, a MISSING reference entry)
  int ranks = 0;     ///< its ranks
  std::string unit = "GPU";  ///< what `gpus` counts: "GPU", or "rank" on CPUs (unit_word)
  std::string metric;        ///< "weak-scaling efficiency", "exposed comm", "per-GPU ex/s", or a reference metric key
  std::string target;        ///< ">= 85.0%", "< 15.0%", "[1000, +inf] ex/s"
  std::string measured;      ///< as the report prints it ("92.5%"); "" when not measured
  /// "PASS", "FAIL", "FAIL (<why>)" (the row's self-check failed), "VOID (<warning code>)"
  /// (a warning of a row the number rests on voids it, row_metrics undermining_warning: neither
  /// PASS nor FAIL, whichever side of the target it fell), "MISSING", "not measured (<why>)".
  std::string status;
  std::string from;  ///< where the number is: "weak scaling, F2" ("F2 vs F1" when its baseline is another launch)
  std::string void_warning;  ///< VOID: the warning's words, "oversubscribed: 4 threads ... share 2 CPUs"
  /// The check as a claim (kind "target"): the numbers, rows and warnings it rests on; its text
  /// is the check's line.
  Claim claim;
};

/// One model's own scaling targets (`report --target-for MODEL:METRIC=VALUE`): each value given
/// replaces SummaryTargets' global one for that model's tables; one not given keeps the global.
struct ModelTargets {
  std::optional<double> min_efficiency;    ///< weak-scaling efficiency, fraction in (0, 1] (metric "efficiency")
  std::optional<double> max_exposed_comm;  ///< exposed communication / step time, fraction in [0, 1] ("comm")
  std::optional<double> min_per_gpu_ex_s;  ///< per-GPU ex/s, > 0 ("ex-s")
};

/// What the summary holds every weak-scaling table to, at its largest GPU count.
struct SummaryTargets {
  double min_efficiency = 0.85;            ///< weak-scaling efficiency, fraction in (0, 1]
  double max_exposed_comm = 0.15;          ///< exposed communication / step time, fraction in [0, 1]
  std::optional<double> min_per_gpu_ex_s;  ///< per-GPU ex/s; unchecked unless given (no default fits every model)
  std::vector<ReferenceEntry> pinned;      ///< `--targets FILE` (check's reference format), checked on every run file
  std::string pinned_source;               ///< that file's path; "" when none was given
  /// Model name (as in the result files' rows) -> its overrides (`--target-for`); read them
  /// through targets_for, never directly.
  std::map<std::string, ModelTargets> per_model;
  /// Checks a caller made itself (validate's env, comm, pairs and step checks), each with its
  /// claim: held with the targets, listed in the Targets table and counted in every tally.
  std::vector<SummaryCheck> external;
};

/// The scaling targets one model's tables are held to.
struct AppliedTargets {
  double min_efficiency = 0.85;            ///< fraction in (0, 1]
  double max_exposed_comm = 0.15;          ///< fraction in [0, 1]
  std::optional<double> min_per_gpu_ex_s;  ///< per-GPU ex/s; absent: unchecked
  bool per_model = false;                  ///< the model has an entry in SummaryTargets::per_model
};

/// The one place that decides the targets of `model`'s tables (summary checks, world-size rule,
/// notes): t's global values, each replaced by the value the model's per_model entry gives.
AppliedTargets targets_for(const SummaryTargets& t, const std::string& model);

/// Reads one `--target-for` text, "MODEL:METRIC=VALUE" with METRIC one of "efficiency" (a
/// fraction in (0, 1]), "comm" (a fraction in [0, 1]) or "ex-s" (per-GPU ex/s, > 0), into
/// t.per_model[MODEL] (a later text for the same model and metric replaces an earlier one).
/// Throws UsageError, one line naming the text and the fix, when the text has no colon or no
/// "=", an empty model, an unknown metric, a value that is not a finite number or out of range.
void add_model_target(SummaryTargets& t, const std::string& text);

/// Checks the per-model values' ranges (those add_model_target would refuse); throws
/// UsageError naming the entry as "--target-for MODEL:METRIC=VALUE".
void check_model_targets(const SummaryTargets& t);

/// The models of t.per_model that no row (run result) of `files` measured, in name order: the
/// CLI warns about each (a misspelt name would otherwise hold nothing to its targets).
std::vector<std::string> absent_target_models(const SummaryTargets& t, const std::vector<NamedResult>& files);

/// How a check's status counts in the headline: "PASS", "FAIL", "VOID" or "not evaluated"
/// (not measured, MISSING).
std::string verdict_class(const std::string& status);

/// The tally of `checks` as a claim: "<lead>: P PASS, F FAIL (each FAIL by its target, measured
/// value, threshold, size, model, launch and its rows' warnings), V VOID (each, and what voids
/// it), N not evaluated (why)". Lead "Targets" is the headline's (kind "tally"); another lead is
/// validate's verdict line (kind "validate_tally", "validate: ..."). `unit` names the devices
/// ("GPU", "rank") in the reasons.
Claim tally_claim(const std::vector<SummaryCheck>& checks, const std::string& lead, const std::string& unit);

/// One model's line of the headline: its best throughput, how it scales, what communication
/// costs and what a sample costs, each with the row it comes from.
struct HeadlineModel {
  std::string model;
  std::string unit = "GPU";  ///< "GPU", or "rank" on CPUs
  /// The highest per-GPU ex/s among the model's DDP rows (weak and strong scaling, not rows
  /// whose ranks shared a GPU, not rows whose warnings void their throughput when another row
  /// is clean), with its setup ("fp16, channels_last, batch 256 per GPU"), size and launch.
  std::optional<double> best_per_gpu_ex_s;
  std::string best_setup;  ///< its setup and batch; with the device when the files hold several device types
  std::string best_file;
  int best_gpus = 0;
  /// Weak-scaling efficiency at the largest GPU count measured (above one GPU, a real
  /// baseline, no shared GPU) of any of the model's target tables; absent: "not measured".
  std::optional<double> efficiency;
  int efficiency_gpus = 0;
  std::string efficiency_void;  ///< the warning code voiding it, "" when none
  std::string efficiency_file;  ///< launch labels ("F2", "F2 vs F1"); with the device first when the files hold several
  std::string efficiency_device;  ///< the device type of the efficiency's table
  /// The largest size below it whose efficiency no warning voids, when efficiency is void.
  std::optional<double> trusted_efficiency;
  int trusted_gpus = 0;
  std::optional<double> exposed_comm;  ///< at the efficiency's row (breakdown); absent: not measured
  /// Without a weak-scaling efficiency: the strong-scaling efficiency at the largest size above
  /// one device of the model's strong tables (speedup / devices), its size and launch.
  std::optional<double> strong_efficiency;
  int strong_gpus = 0;
  std::string strong_file;
  /// The lowest USD per 1M samples of the model's priced rows, at which size and launch.
  std::optional<double> usd_per_million;
  int usd_gpus = 0;
  std::string usd_file;
  /// The best row's warnings as the headline names them ("few_samples: 5 iterations",
  /// "noisy: cv 20.5%"), so a best number that rests on a short or unsteady series says so.
  std::vector<std::string> best_warnings;
  std::vector<ClaimRow> rows;  ///< the rows its numbers rest on (best, efficiency and its baseline, cheapest)
};

/// A section the files could not fill, and the command that would.
struct NotMeasured {
  std::string section;  ///< "Scaling beyond one GPU", "Where the time goes", "Cost", "Communication"
  std::string why;      ///< "every table ran on 1 GPU"
  std::string command;  ///< the exact ddpbench command line
};

/// The headline: what a manager reads first, in every format (docs/METHODOLOGY.md "Executive
/// summary and recommendations", "Headline"). Built from the report's tables; headline_lines
/// gives it as about ten sentences, report_tables as its first table, JSON as this object.
struct Headline {
  // Scope.
  int files = 0;     ///< result files given
  int launches = 0;  ///< of them distinct (a repeat counts once)
  int nodes = 0;     ///< the most nodes of any row
  int gpus = 0;      ///< the most distinct devices (GPUs, or CPU ranks) of any row
  int ranks = 0;     ///< the most ranks of any row
  std::string unit = "GPU";          ///< "GPU", or "rank" when every device is a CPU
  std::vector<std::string> devices;  ///< device types, in file order
  std::vector<std::string> torch, cuda, nccl, backends;  ///< distinct versions and backends, in file order
  std::string first_date, last_date;                     ///< YYYY-MM-DD of the first and last launch
  // Verdicts of the targets (ExecutiveSummary::checks, plus the targets of tables measured on one device).
  int pass = 0, fail = 0, void_count = 0, not_evaluated = 0;
  std::vector<std::string> void_reasons;           ///< "efficiency 38.4% on 4 ranks: oversubscribed"
  std::vector<std::string> not_evaluated_reasons;  ///< "10 tables ran on 1 GPU only (efficiency, exposed comm)"
  std::vector<HeadlineModel> models;               ///< one per model, in the order of the tables
  // Data quality of the rows the scaling tables show.
  int rows = 0;           ///< DDP rows shown in the weak and strong tables
  int noisy = 0;          ///< of them with the warning noisy
  int few_samples = 0;    ///< of them with fewer than 20 iterations (few_samples)
  std::string few_rows;   ///< "resnet18 F2: 5" (model, launch, iterations)
  int capped = 0;         ///< stopped at --max-iters or --max-time before their CI target
  int voided = 0;         ///< with a warning that voids their throughput
  std::string worst_noisy;   ///< "resnet50 F5, cv 28.7%"
  std::string capped_rows;   ///< "F5 at --max-iters, CI 1.78% of the mean against 1.00%"
  std::string voided_rows;   ///< "F1 at 4 ranks: oversubscribed"
  int shared = 0;            ///< rows whose ranks shared a GPU (sharing, not scaling)
  std::string shared_rows;   ///< "F1 (2 ranks on 1 GPU)"
  /// The no-DDP rows the weak tables' DDP overhead (and no-DDP efficiency) rest on, each once.
  int baseline_rows = 0;
  int baseline_noisy = 0;            ///< of them with the warning noisy
  std::string baseline_noisy_rows;   ///< the noisiest of them: "resnet50 F1, cv 9.1%"
  std::optional<double> max_spread;  ///< the largest launch-to-launch spread of a row (fraction)
  std::string spread_what;           ///< its model and launches: "resnet50: F3, F4, F5"
  int repeated_launches = 0;         ///< rows (or whole files) given twice, counted once
  std::vector<std::string> repeats;  ///< "F2 repeats F1 (the same content)"
  std::vector<NotMeasured> not_measured;
  /// The headline's sentences as claims, in print order (scope, tally, one per model, data
  /// quality, one per section not measured): headline_lines is their texts.
  std::vector<Claim> claims;
};

/// The headline as sentences, at most about ten: scope, targets, one per model, data
/// quality, one per section not measured (with its command): the texts of h.claims. None for
/// files without a training row or target (collectives, pairs, find-max-bs alone).
std::vector<std::string> headline_lines(const Headline& h);

/// The headline as JSON data: every field of Headline, and "lines" (headline_lines).
nlohmann::json headline_json(const Headline& h);

/// One sentence a rule derived from measured rows.
struct Recommendation {
  std::string topic;  ///< "world size", "DDP setting", "setup", "memory", "cost", "node"
  std::string text;   ///< one sentence (claim.text); every number in it is printed in the rows `from` names
  std::string from;   ///< the table and launch labels: "optimization impact, F2 vs F1"
  Claim claim;        ///< what the sentence is rendered from
};

/// The summary a stakeholder reads first.
struct ExecutiveSummary {
  Headline headline;  ///< printed first in every format
  std::vector<SummaryCheck> checks;
  std::vector<std::string> notes;  ///< where the targets come from; what could not be evaluated and why
  std::vector<Recommendation> recommendations;
  /// Every claim of the summary: the headline's, each target's, each recommendation's.
  std::vector<Claim> claims() const;
};

/// Gain a DDP setting must beat before the DDP-setting rule recommends changing it: 5% of
/// aggregate ex/s (below that a change is not worth a job's configuration), whatever the noise;
/// above it the gain must also beat the launch-to-launch noise (docs/METHODOLOGY.md "Noise floors").
inline constexpr double kMinKnobGain = 0.05;

/// Holds the report's rows to `t` and applies the recommendation rules (docs/METHODOLOGY.md
/// "Executive summary and recommendations"): per weak-scaling table (a table whose DDP knobs
/// differ from the defaults only where no table of the same configuration with the defaults
/// exists: the variants are the optimization-impact table's business), its largest GPU count
/// against the efficiency, exposed-comm and per-GPU targets (efficiency and comm only when that
/// count is above one GPU); `t.pinned` against every run file of `files` (check_against, one
/// line per launch); then the rules: world size (the largest size meeting the efficiency
/// target), DDP setting (the best knob of an optimization-impact table when it beats
/// kMinKnobGain and the launch-to-launch noise of both rows), setup (the fastest strategy,
/// checkpointing and precision of a strategy table's world size, and every other setup within
/// noise of it), memory (the technique that saves the most peak memory and what it costs), cost
/// (the most cost-efficient size), node (a named straggler's host, a slow node of `comm --pairs`).
/// A noise floor comes only from launches of the same configurations (RowLaunch::spread); where
/// none was measured the claim says so and how many launches would measure it. The world-size,
/// DDP-setting and setup rules say nothing when a deciding row failed its self-check or a warning
/// voids its number; a target resting on such a number is VOID. Rows whose ranks shared a GPU are
/// held to no scaling target. Last, the headline (Headline) from all of it. Every sentence is a
/// Claim (core/analysis/claim.hpp).
ExecutiveSummary executive_summary(const Report& r, const std::vector<NamedResult>& files, const SummaryTargets& t);

}  // namespace ddpbench
