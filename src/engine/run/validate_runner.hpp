// `ddpbench validate PLAN --out DIR`: the runner of a cluster acceptance plan. It decides which
// steps to keep, resume or redo (core/validate/record), runs each step as a child `ddpbench`
// (every rank of a launch takes part, meeting on validate's own store), judges each step's
// result and writes the report, the verdict and the record into DIR.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/validate/plan.hpp"

namespace ddpbench {

/// What one `validate PLAN` invocation was asked to do.
struct ValidateRequest {
  std::string plan_path;         ///< the plan file (YAML)
  std::string dir;               ///< --out: folder of the steps' results, the record and the report
  int nproc = 0;                 ///< --nproc-per-node for run and comm steps (0: the plan's, else their default)
  double timeout_s = 300;        ///< validate's own rendezvous and gathers, s
  double step_timeout_s = 43200; ///< how long one step may run, s
  bool dry_run = false;          ///< check the plan and print each step's command; run nothing
  std::string redo;              ///< --redo: steps measured again although complete (comma list)
};

/// A step's options as its subcommand's command line (without the subcommand and --json), each
/// checked by that subcommand's own parser; `cpu`: with the step's cpu: options. Throws
/// UsageError "PLAN:LINE:COL: <kind>: <what>" naming the first bad option. The CLI provides it
/// (the parsers are its own).
using StepOptionsOf = std::function<std::vector<std::string>(const Plan& plan, const PlanStep& step, bool cpu)>;

/// Runs the plan `req` names into req.dir, resumable (complete steps whose plan entry is
/// unchanged are kept; a step cut short continues from its .partial). Prints one line per
/// step on stderr (rank 0) and the verdict line on stdout. Returns the exit code: 0 nothing
/// failed, 1 a target or a step failed. Throws UsageError on a bad plan, option or folder
/// (exit 2), std::runtime_error when a rank of the launch dies or stalls past req.timeout_s.
int run_validate(const ValidateRequest& req, const StepOptionsOf& step_options);

}  // namespace ddpbench
