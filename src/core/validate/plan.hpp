// A validation plan: the checks and targets of a cluster acceptance, read from YAML
// (`ddpbench validate PLAN`; docs/guide/cluster-validation.md gives the format).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddpbench {

/// Where something is in the plan file: 1-based line and column (0: unknown).
struct PlanPlace {
  int line = 0, column = 0;
};

/// One option of a step as the plan gives it: `model: resnet50` or `world-sizes: [1, 2]`.
struct PlanOption {
  std::string key;                  ///< the subcommand's long option without "--": "model"
  std::vector<std::string> values;  ///< the scalar, or each element of a list
  bool list = false;                ///< given as a YAML list
  PlanPlace place;                  ///< of the key
};

/// One step: a subcommand and its own options.
struct PlanStep {
  int index = 0;     ///< 1-based position in the plan
  std::string kind;  ///< env, comm, pairs, find-max-bs, run, burn-in
  std::vector<PlanOption> options;
  /// `cpu: {memory-limit: 4G}`: options used only where the step runs without a GPU (CPU
  /// nodes), after `options`; a key also in `options` replaces that option there
  /// (`precision: bf16, cpu: {precision: fp32}`).
  std::vector<PlanOption> cpu_options;
  PlanPlace place;
  /// "<nn>-<kind>": the step's file name in the output folder without ".json" ("05-run").
  std::string name() const;
  /// The ddpbench subcommand that runs it: env, comm (also pairs), find-max-bs, run (also burn-in).
  std::string subcommand() const;
  /// The options the kind itself adds before the plan's: {"--pairs"} for pairs; for a burn-in
  /// without world-sizes {"--world-sizes", "world"} (the whole job only); {} otherwise.
  std::vector<std::string> implied_args() const;
  /// The step's identity for resuming: kind and options, one canonical line (key order kept).
  std::string fingerprint() const;
};

/// Targets of one model, overriding the plan's global ones where given.
struct PlanModelTargets {
  std::optional<double> efficiency, exposed_comm, ex_s_per_gpu;
};

/// The report's and validate's targets.
struct PlanTargets {
  std::optional<double> efficiency;    ///< weak-scaling efficiency, fraction in (0, 1]
  std::optional<double> exposed_comm;  ///< exposed communication / step, fraction in [0, 1]
  std::optional<double> ex_s_per_gpu;  ///< per-GPU ex/s, > 0
  std::optional<double> busbw_gbs;     ///< comm: busbw at each collective's largest size, GB/s, > 0
  std::map<std::string, PlanModelTargets> models;
  std::vector<std::pair<std::string, PlanPlace>> model_places;  ///< each model key's place, plan order
};

/// A parsed plan.
struct Plan {
  std::string path;  ///< as given, for messages
  std::string description;
  std::optional<int> nproc_per_node;  ///< launch: nproc-per-node (the built-in launcher's ranks)
  std::vector<PlanStep> steps;
  PlanTargets targets;
};

/// The step kinds a plan may hold, in the order validate documents them.
const std::vector<std::string>& plan_step_kinds();

/// Options a step may not set, each with why: validate sets them itself (json, resume,
/// overwrite, nproc-per-node, pairs) or they would stop the run (help, version).
const std::map<std::string, std::string>& plan_reserved_options();

/// The largest plan file validate reads (bytes): a plan is a few KiB; a bigger one is refused
/// before it is parsed (yaml-cpp's DOM takes about 86 bytes of memory per plan byte).
inline constexpr long long kMaxPlanBytes = 1 << 20;

/// The longest value one option of a step may have (bytes): each is one argument of the
/// step's command line, and Linux refuses an argument over 128 KiB (MAX_ARG_STRLEN).
inline constexpr std::size_t kMaxPlanValueBytes = 4096;

/// Parses plan `text` read from `path`. Throws UsageError with one line
/// "PATH:LINE:COL: <what is wrong>; <the fix>" for text that is not YAML, an empty plan,
/// an unknown key or step kind, a value of the wrong shape (a map where a scalar belongs),
/// a reserved option, a burn-in without duration, a target out of range, text over
/// kMaxPlanBytes, more than one YAML document, a value over kMaxPlanValueBytes, and a value
/// starting with '-' but not a number (the step's parser would read it as an option). The options'
/// own values are checked later against the subcommand's parser (cli/cmd_validate).
Plan parse_plan(const std::string& text, const std::string& path);

/// "PATH:LINE:COL: " (or "PATH: " without a place), the prefix of a plan error.
std::string plan_where(const std::string& path, const PlanPlace& place);

/// Throws UsageError "PLAN:LINE:COL: <what>: unknown model 'M'; choose one of: ..." unless `m`
/// is one of `models` (the zoo's names).
void check_plan_model_name(const Plan& plan, const PlanPlace& place, const std::string& what, const std::string& m,
                           const std::vector<std::string>& models);

}  // namespace ddpbench
