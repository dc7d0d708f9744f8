// The options of `ddpbench run`, one entry each: the catalogue the CLI registers, the result
// file's config writer and its identity rules, and docs/guide/options.md come from. Torch-free
// and CLI11-free (cli/cmd_run.cpp registers the entries with CLI11).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/config/run_config.hpp"

namespace ddpbench {

/// Where a `run` option's value goes: a RunConfig member that CLI11 sets directly, or
/// std::monostate when the CLI reads the text and parses it (a comma list, "auto", "max", a
/// launcher setting outside RunConfig).
using RunField = std::variant<std::monostate, bool RunConfig::*, int RunConfig::*, long long RunConfig::*,
                              double RunConfig::*, std::string RunConfig::*, std::optional<bool> RunConfig::*,
                              std::optional<double> RunConfig::*>;

/// One option of `ddpbench run`.
struct RunOption {
  /// How CLI11 reads the text before it reaches `field` (or the CLI's own variable).
  enum class Check {
    kNone,
    kWholeNumber,  ///< decimal digits within 64 bits (cli whole_number)
    kWholeOrMax,   ///< a whole number or "max" (--batch-size)
    kSize,         ///< bytes with K/M/G suffixes (CLI::AsSizeValue)
  };
  std::string flag;   ///< CLI11 names: "--warmup"; former names after a comma ("--per-rank-series,--telemetry-series")
  std::string group;  ///< the --help group ("Workload", "Measurement", ...)
  std::string help;   ///< the --help line
  RunField field;     ///< the member it sets; monostate: the CLI parses the text
  bool flag_only = false;     ///< takes no value (a switch)
  bool negated = false;       ///< a switch that sets its bool member to false ("--no-cudnn-benchmark")
  bool show_default = false;  ///< --help shows the default
  Check check = Check::kNone;
  /// Closed bounds of an integer member, checked by check_option_bounds with the one-line error
  /// "--FLAG V is out of range; use LO..HI<unit>"; unset: validate() checks it by its own rule.
  std::optional<long long> lo, hi;
  std::string unit;  ///< appended to the bounds' error (" milliseconds")
  /// The result file's config key it is recorded under; "" when it is not recorded there.
  std::string json_key;
  /// How json_key bears on a row's identity (every option sharing a key gives the same rule).
  ConfigJsonKey::From from = ConfigJsonKey::From::kNot;
  /// Why rows that differ in it are comparable (kNot), the ConfigKey field it decides, or,
  /// without a json_key, where the setting is recorded instead and why it is not in the config.
  std::string why;

  /// The first CLI11 name ("--per-rank-series").
  std::string name() const;
};

/// Every option of `ddpbench run`, in --help order (grouped). The DDP flag settings come from
/// ddp_flag_settings() (core/config/ddp_settings.hpp).
const std::vector<RunOption>& run_options();

/// The entry whose name() is `name` ("--warmup"); nullptr when there is none.
const RunOption* find_run_option(const std::string& name);

/// Checks the integer members of `cfg` that have catalogue bounds (RunOption::lo/hi). Throws
/// UsageError "--warmup -1 is out of range; use 0..100000000" on the first one outside.
void check_option_bounds(const RunConfig& cfg);

}  // namespace ddpbench
