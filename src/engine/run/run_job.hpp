// One rank of `ddpbench run`: it joins the job, prints and records the header (rank 0), keeps
// the rows a stopped run measured (--resume), runs the sweep (engine/bench/sweep.hpp) and
// writes the result file. The CLI (cli/cmd_run.cpp) parses and checks the options first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/run_config.hpp"
#include "core/launch/launch_env.hpp"
#include "engine/dist/process_group.hpp"

namespace ddpbench {

/// What a rank of `run` is asked to do: its configuration and the settings of this launch
/// that are not part of it.
struct RunJob {
  RunConfig cfg;              ///< validated, world sizes resolved; --batch-size max sets batch_size
  std::string defaults_note;  ///< what the machine-dependent defaults chose and why ("" when none)
  std::vector<std::string> argv;  ///< the command line, recorded in the result file
  std::string resume;             ///< --resume PATH.partial; "" when not resuming
  bool overwrite = false;         ///< --overwrite: an existing --json file (and trace) may be replaced
  bool batch_max = false;         ///< --batch-size max: find-max-bs on every rank before the sweep
  std::optional<long long> memory_limit_bytes;  ///< --memory-limit of the batch search, bytes
  bool no_malloc_tuning = false;                ///< --no-malloc-tuning
  bool profile = false;                         ///< --profile given (cfg.profile_dir)
};

/// Runs this rank's part of the job and returns the exit code (0). Throws UsageError when the
/// ranks disagree, when --resume's file cannot be continued in this environment, or as the
/// sweep throws (SelfCheckError for a failed self-check, runtime errors for a rank that died).
int run_rank(RunJob& job, const LaunchInfo& li, const EnvMap& env, bool use_cuda, BackendKind backend, int threads);

/// run --resume's one line when this launch's measurement environment is not the stopped
/// run's (`why`: resume_environment_mismatch): its rows and ours would not be comparable.
std::string resume_environment_refusal(const std::string& partial, const std::string& why);

/// --profile DIR: created (with parents) where missing; must be a writable directory that
/// holds no trace of an earlier run (DIR/*-rank<R>.json), unless `overwrite`. Every rank calls
/// it on its own host, before the rendezvous (so before any trace of this run exists). Throws
/// UsageError naming the problem and the fix.
void prepare_profile_dir(const std::string& dir, bool overwrite);

}  // namespace ddpbench
