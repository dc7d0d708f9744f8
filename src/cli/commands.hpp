// Subcommands of the ddpbench binary, one file each (cmd_<name>.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ddpbench::cli {

/// A registered subcommand: its CLI11 app and what runs when it was chosen.
/// `run` returns the process exit code; it throws UsageError (exit 2) on bad input.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// Thrown to end the process with `code` without printing anything (e.g. ranks
/// other than 0 after rank 0 reported a configuration error everyone shares).
struct SilentExit {
  int code;
};

/// `ddpbench run`: the DDP training benchmark sweep. `argv` is the whole command
/// line, recorded in the result file and reused to start ranks.
Command add_run_command(CLI::App& parent, const std::vector<std::string>& argv);

/// `ddpbench models`: lists the models with their parameter counts.
Command add_models_command(CLI::App& parent);

/// `ddpbench report FILE...`: scaling tables, comparison, cost, plots, HTML.
Command add_report_command(CLI::App& parent);

/// `ddpbench diff BASE TEST` or `ddpbench diff BASE... -- TEST...`: configuration differences and
/// per-row changes of the same configuration (--match), with a noise verdict over launches.
Command add_diff_command(CLI::App& parent);

/// `ddpbench check FILE --reference REF`: PASS/FAIL per reference entry; exit 1 on any failure.
Command add_check_command(CLI::App& parent);

}  // namespace ddpbench::cli
