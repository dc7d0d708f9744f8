// Subcommands of the ddpbench binary, one file each (cmd_<name>.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "core/result/result.hpp"
#include "core/render/report_page.hpp"
#include "core/result/row_validation.hpp"
#include "core/util/errors.hpp"
#include "core/util/parse.hpp"

namespace ddpbench {
struct NamedResult;
struct Report;
}  // namespace ddpbench

namespace ddpbench::cli {

/// CLI11's help layout with one fix: an option whose name and type end one column before the
/// description column (CLI11 then leaves a single blank between them) gets its description on
/// the next line, as longer ones do, so readers and help2man (the man pages) see where the
/// option ends. Set on the root app before the subcommands are added: they inherit it.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    std::string s = CLI::Formatter::make_option(opt, is_positional);
    const size_t w = get_column_width();
    const size_t eol = s.find('\n');
    if (w >= 2 && eol != std::string::npos && eol > w && s[w - 1] == ' ' && s[w - 2] != ' ' && s[w] != ' ')
      s.insert(w, "\n" + std::string(w, ' '));
    return s;
  }
};

/// CLI11 check of a 64-bit integer option's text, before CLI11 converts it: decimal digits
/// with an optional sign, within 64 bits. CLI11 alone would clamp 99999999999999999999 to
/// 2^63-1 and read 010 as octal; leading zeros are dropped here. Ranges are checked later,
/// where the configuration is validated.
inline CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!is_decimal(text)) return "'" + text + "' is not a whole number";
        try {
          text = std::to_string(parse_int(text, "value"));  // canonical decimal: no leading zeros, no '+'
        } catch (const UsageError&) {
          return text + " is out of range (beyond 64 bits)";
        }
        return std::string();
      },
      "", "whole number");
}

/// `validate`'s check of a plan before anything runs: with DDPBENCH_CHECK_ONLY=1 in `env`, run,
/// comm and find-max-bs check their flags as a launch would (the same errors, exit 2) and then
/// return exit 0 without starting a rank, a trial or writing a file.
inline bool check_only(const EnvMap& env) {
  const auto it = env.find("DDPBENCH_CHECK_ONLY");
  return it != env.end() && it->second == "1";
}

/// A registered subcommand: its CLI11 app and what runs when it was chosen.
/// `run` returns the process exit code; it throws UsageError (exit 2) on bad input.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// The inputs of `report`: each path a result file, or a folder whose *.json files are read in
/// name order (validate's --out). A file ddpbench wrote that is no result file (validate's
/// record, verdict and env steps, a report's JSON) is left out with one "ddpbench: note:" line,
/// wherever it was named. Each file through load_result. Throws UsageError as load_result, and
/// when no result file is left.
std::vector<NamedResult> load_report_inputs(const std::vector<std::string>& paths);


/// `ddpbench run`: the DDP training benchmark sweep. `argv` is the whole command
/// line, recorded in the result file and reused to start ranks.
Command add_run_command(CLI::App& parent, const std::vector<std::string>& argv);

/// `ddpbench comm`: nccl-tests-style collective benchmark (time, algbw, busbw, #wrong per
/// size) on the launchers and process groups of `run`. `argv` as for add_run_command.
Command add_comm_command(CLI::App& parent, const std::vector<std::string>& argv);

/// `ddpbench find-max-bs`: the largest batch per device that trains a few steps (grow, then
/// bisect, out of memory caught) and a recommendation backed off by --margin
/// (engine/bench/max_batch.hpp). `argv` is recorded in the result file.
Command add_find_max_bs_command(CLI::App& parent, const std::vector<std::string>& argv);
/// `ddpbench dataparallel`: single-process multi-GPU DataParallel, libtorch's data_parallel and the
/// same step from its primitives, training and inference (engine/bench/data_parallel.hpp).
/// GPU only: without a GPU, UsageError (exit 2). `argv` is recorded in the result file.
Command add_dataparallel_command(CLI::App& parent, const std::vector<std::string>& argv);

/// `ddpbench validate PLAN --out DIR`: the steps of a YAML acceptance plan (env, comm, pairs,
/// find-max-bs, run, burn-in) in order under the launcher that started it, each step's result
/// in DIR/<nn>-<step>.json, resumable, then DIR/report.{txt,md,html} and one tally line; and
/// `validate --compare DIR_A DIR_B`. Exit 0 nothing failed, 1 a target or step failed, 2 a bad plan.
Command add_validate_command(CLI::App& parent);

/// `ddpbench env`: this node's environment (driver, GPUs, topology, CUDA/NCCL/cuDNN/torch
/// versions, CPU, kernel, NCCL_* variables), readable or as JSON (--json) in the shape of a
/// result file's environment.nodes[]. Also in the build without libtorch (torch "none").
Command add_env_command(CLI::App& parent);

/// `ddpbench models`: lists the models with their parameter counts.
Command add_models_command(CLI::App& parent);

/// `ddpbench report FILE...`: scaling tables, comparison, cost, plots, HTML.
Command add_report_command(CLI::App& parent);

/// `ddpbench diff BASE TEST` or `ddpbench diff BASE... -- TEST...`: configuration differences and
/// per-row changes of the same configuration (--match), with a noise verdict over launches.
Command add_diff_command(CLI::App& parent);

/// `ddpbench check FILE --reference REF`: PASS/FAIL per reference entry; exit 1 on any failure.
Command add_check_command(CLI::App& parent);

/// `ddpbench predict RUN... --comm COMM...`: alpha-beta fits of the comm results and the
/// predicted step time and weak-scaling efficiency at other world sizes (core/analysis/predict.hpp).
Command add_predict_command(CLI::App& parent);

}  // namespace ddpbench::cli
