// `ddpbench validate PLAN --out DIR`: a cluster acceptance from one plan file, resumable;
// `ddpbench validate --compare DIR_A DIR_B`: two acceptances of one plan side by side.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/config/run_config.hpp"
#include "core/util/install_dirs.hpp"
#include "core/validate/plan.hpp"
#include "core/validate/record.hpp"
#include "engine/models/registry.hpp"
#include "engine/run/validate_runner.hpp"

namespace ddpbench::cli {

namespace {

/// The subcommands a plan's steps run, registered on `root` so their own parsers check the
/// steps' options. The Commands own the variables the options write to: keep them while
/// `root` parses.
std::vector<Command> register_step_parsers(CLI::App& root) {
  static const std::vector<std::string> argv = {"ddpbench"};
  return {add_run_command(root, argv), add_comm_command(root, argv), add_find_max_bs_command(root, argv),
          add_env_command(root)};
}

/// Parses `args` (subcommand first) with a fresh parser; "" when CLI11 accepts them, else
/// its message. `ignore_required`: a missing required option is not an error (one option
/// alone is being checked).
std::string parse_error(const std::vector<std::string>& args, bool ignore_required) {
  CLI::App root{"ddpbench", "ddpbench"};
  root.require_subcommand(1);
  const std::vector<Command> keep = register_step_parsers(root);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 reads a vector from its back
  try {
    root.parse(reversed);
  } catch (const CLI::RequiredError& e) {
    if (!ignore_required) return first_line(e.what());
  } catch (const CLI::ParseError& e) {
    return first_line(e.what());
  }
  return "";
}

/// The option's words on a command line: "--key v1 v2" (a flag: "--key" for true, nothing
/// for false). Throws UsageError at the option's place for an unknown option or a flag
/// given something other than true/false.
std::vector<std::string> option_words(const Plan& plan, const PlanStep& step, const PlanOption& o,
                                      CLI::App& sub) {
  const std::string where = plan_where(plan.path, o.place) + step.kind + ": ";
  CLI::Option* opt = sub.get_option_no_throw("--" + o.key);
  if (!opt)
    throw UsageError(fmt::format("{}unknown option '{}' of 'ddpbench {}'; see 'ddpbench {} --help'", where, o.key,
                                 step.subcommand(), step.subcommand()));
  if (opt->get_expected_max() == 0) {  // a flag (CLI11: expected(0))
    const std::string v = o.values.size() == 1 ? o.values[0] : "";
    if (v == "true" || v == "yes" || v == "on") return {"--" + o.key};
    if (v == "false" || v == "no" || v == "off") return {};
    throw UsageError(fmt::format("{}{} is a flag; give it true or false, not '{}'", where, o.key,
                                 o.list ? "a list" : v));
  }
  std::vector<std::string> words = {"--" + o.key};
  for (const auto& v : o.values) words.push_back(v);
  return words;
}

/// The step's options as its subcommand's command line (without the subcommand and without
/// --json), each checked by the subcommand's own parser and the model names against the zoo;
/// `cpu`: with the step's cpu: options (this node has no GPU), each in place of the step's option
/// of the same key. Throws UsageError
/// "PLAN:LINE:COL: <kind>: <what>" naming the first bad option.
std::vector<std::string> step_options(const Plan& plan, const PlanStep& step, bool cpu) {
  CLI::App root{"ddpbench", "ddpbench"};
  const std::vector<Command> keep = register_step_parsers(root);
  CLI::App* sub = root.get_subcommand(step.subcommand());
  std::vector<std::string> all = step.implied_args();
  const std::vector<std::string> models = model_names();
  std::vector<const PlanOption*> given;
  for (const auto& o : step.options) given.push_back(&o);
  for (const auto& o : step.cpu_options) given.push_back(&o);  // checked on every node, used on CPU nodes
  for (const PlanOption* op : given) {
    const PlanOption& o = *op;
    const std::vector<std::string> words = option_words(plan, step, o, *sub);
    std::vector<std::string> alone = {step.subcommand()};
    alone.insert(alone.end(), words.begin(), words.end());
    const std::string err = parse_error(alone, true);
    if (!err.empty())
      throw UsageError(fmt::format("{}{}: {}; see 'ddpbench {} --help'", plan_where(plan.path, o.place), step.kind, err,
                                   step.subcommand()));
    if (o.key == "model" && step.kind != "comm" && step.kind != "pairs")
      for (const auto& v : o.values)
        for (const auto& m : split_list(v)) check_plan_model_name(plan, o.place, step.kind, m, models);
    const bool cpu_only = op >= step.cpu_options.data() && op < step.cpu_options.data() + step.cpu_options.size();
    const bool replaced_on_cpu = !cpu_only && std::any_of(step.cpu_options.begin(), step.cpu_options.end(),
                                                          [&](const PlanOption& c) { return c.key == o.key; });
    if (cpu_only ? cpu : !(cpu && replaced_on_cpu)) all.insert(all.end(), words.begin(), words.end());
  }
  std::vector<std::string> whole = {step.subcommand()};
  whole.insert(whole.end(), all.begin(), all.end());
  const std::string err = parse_error(whole, false);
  if (!err.empty())
    throw UsageError(fmt::format("{}{}: {}; see 'ddpbench {} --help'", plan_where(plan.path, step.place), step.kind,
                                 err, step.subcommand()));
  return all;
}

}  // namespace

Command add_validate_command(CLI::App& parent) {
  struct Flags {
    std::string plan, out;
    std::vector<std::string> compare;
    int nproc = 0;
    double timeout_s = 300, step_timeout_s = 43200;
    bool dry_run = false;
    std::string redo;
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand(
      "validate", "Run a cluster acceptance plan (YAML: env, comm, pairs, find-max-bs, run, burn-in, targets) into "
                  "one folder and one report, resumable; or compare two such folders");
  app->add_option("plan", f->plan,
                  "The plan file (plans/quick.yaml, plans/acceptance.yaml); a relative path not found here, or a "
                  "name (quick, acceptance, one-gpu), is taken from the plans installed with ddpbench");
  app->add_option("--out", f->out, "Folder for the steps' results (NN-step.json), the record and the report");
  app->add_option("--compare", f->compare, "Two folders of validations of one plan: show them side by side")
      ->expected(2);
  app->add_option("--nproc-per-node", f->nproc, "Built-in launcher: ranks per node for run and comm steps")
      ->check(CLI::Range(1, 4096));
  app->add_option("--timeout", f->timeout_s, "Seconds for validate's own rendezvous and gathers")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  app->add_option("--step-timeout", f->step_timeout_s, "Seconds a step may run before it is stopped")
      ->check(CLI::Range(1.0, 604800.0))
      ->capture_default_str();
  app->add_option("--redo", f->redo,
                  "Measure these steps again although complete (comma list of step names, numbers or kinds: "
                  "04-run, 4, run); each earlier result is kept as DIR/<step>.<k>.json and in validate.json's "
                  "history");
  app->add_flag("--dry-run", f->dry_run,
                "Check the plan (every step's options against its command's own parser) and print each step's "
                "command; run nothing");
  app->footer(
      "Exit codes: 0 nothing failed; 1 a target failed, a step named a slow node or link, or a step failed (run "
      "the same command again to resume); 2 a bad plan or option.");
  return {app, [f]() -> int {
            if (!f->compare.empty()) {
              if (!f->plan.empty() || !f->out.empty())
                throw UsageError("--compare takes two folders and no plan or --out; use 'ddpbench validate --compare "
                                 "DIR_A DIR_B'");
              write_stdout(compare_validation_folders(f->compare[0], f->compare[1]));
              return kExitOk;
            }
            if (f->plan.empty())
              throw UsageError("no plan given; use 'ddpbench validate PLAN --out DIR' (plans/quick.yaml)");
            ValidateRequest req;
            req.plan_path = resolve_plan_path(f->plan);
            req.dir = f->out;
            req.nproc = f->nproc;
            req.timeout_s = f->timeout_s;
            req.step_timeout_s = f->step_timeout_s;
            req.dry_run = f->dry_run;
            req.redo = f->redo;
            return run_validate(req, step_options);
          }};
}

}  // namespace ddpbench::cli
