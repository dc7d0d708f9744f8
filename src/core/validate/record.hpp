// What `ddpbench validate` keeps in its output folder between runs (DIR/validate.json), how a
// rerun decides which steps to keep, continue or redo, and the verdicts of the steps the
// report does not judge (the nodes' environments, busbw, the pairs).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/summary.hpp"
#include "core/result/result.hpp"
#include "core/validate/plan.hpp"

namespace ddpbench {

/// One step as validate ran it.
struct StepRecord {
  std::string name;         ///< "05-run"
  std::string kind;         ///< run
  std::string fingerprint;  ///< PlanStep::fingerprint of the entry it ran
  std::vector<std::string> argv;  ///< the command line of this process's part (rank 0's)
  nlohmann::json launch = nlohmann::json::object();  ///< {launcher, world_size, nproc_per_node, master_port}
  /// "complete" (exit 0, or 1 where 1 is a verdict: pairs naming a slow node), "failed"
  /// (any other exit: the plan stopped there), "running" (written before it starts).
  std::string status;
  int exit_code = 0;  ///< the shell's convention: 128 + signal when a signal ended it
  double seconds = 0;
  std::string started_utc, finished_utc;
  std::string file;       ///< its result file's name in DIR ("05-run.json"); "" when none
  std::string file_hash;  ///< content_hash of that file when it completed
};

/// DIR/validate.json: the plan (path and text) and every step's record, in plan order.
struct ValidateRecord {
  std::string plan_path, plan_text;
  std::vector<StepRecord> steps;
  /// Earlier records of steps measured again (`--redo`, a changed plan entry, a failure), oldest
  /// first: each with its file renamed to "<name>.<k>.json" (k = 1, 2, ...) beside the new one.
  std::vector<StepRecord> history;
  /// The record of the step named `name`, or nullptr.
  const StepRecord* find(const std::string& name) const;
};

nlohmann::json record_json(const ValidateRecord& r);
/// Throws UsageError naming `source` when `j` is not a validate record.
ValidateRecord record_from_json(const nlohmann::json& j, const std::string& source);

/// A 64-bit FNV-1a hash of `bytes` as 16 hex digits: tells a kept file from a changed one.
std::string content_hash(const std::string& bytes);

/// What a run of validate does with one step.
enum class StepAction {
  kRun,     ///< never ran (or its record is gone): run it
  kKeep,    ///< complete, same plan entry and launch, its file unchanged: kept as it is
  kResume,  ///< a run step that stopped with rows in its .partial file: continued (--resume)
  kRedo,    ///< ran before but must run again (the note says why)
};

struct StepDecision {
  StepAction action = StepAction::kRun;
  std::string note;  ///< "kept", "continued from 05-run.json.partial", "redone: its plan entry changed", ...
};

/// Facts about DIR that decide_steps needs, so it stays a pure function.
struct DirFacts {
  /// content_hash of DIR/<file>, or nullopt when it does not exist.
  std::function<std::optional<std::string>(const std::string& file)> hash_of;
  /// DIR/<file> exists.
  std::function<bool(const std::string& file)> exists;
};

/// One decision per step of `plan`: keep a step whose record is complete, whose fingerprint
/// and launch equal this one's and whose file still has the recorded hash; continue a run or
/// burn-in step whose record is not complete, with the same entry and launch, when
/// DIR/<name>.json.partial exists; redo the rest (saying why); run steps without a record.
/// Once a step is redone or run, every later step that reads earlier results (none today)
/// would need redoing too; steps are independent, so the others are still kept.
std::vector<StepDecision> decide_steps(const Plan& plan, const std::optional<ValidateRecord>& old,
                                       const nlohmann::json& launch, const DirFacts& facts,
                                       const std::vector<std::string>& redo = {});

/// The steps `--redo LIST` names, each given as its name ("04-run"), its number ("4") or its
/// kind ("run": every step of that kind): their names, in plan order. Throws UsageError naming
/// an entry that is none of the plan's steps and listing them.
std::vector<std::string> redo_steps(const Plan& plan, const std::string& list);

/// The name the earlier result of step `name` keeps when the step is measured again:
/// "<name>.<k>.json" with k the step's count of earlier records in `history` plus 1.
std::string history_file(const std::vector<StepRecord>& history, const std::string& name);

/// What this job cannot evaluate of `plan`, said before anything runs: the env step with one
/// node, pairs with fewer than kMinPairParticipants participants (ranks with `pair-unit: rank`,
/// else nodes), the efficiency and exposed-comm targets with fewer than 2 devices for the run
/// steps, comm's busbw without a busbw-gbs target. `devices` counts the job's GPUs (its ranks
/// on CPU nodes).
std::vector<std::string> plan_preflight_notes(const Plan& plan, int nodes, int ranks, int devices, bool gpu);

/// One verdict of validate's own: the nodes' agreement, a busbw floor, the pairs, a step's exit.
struct ValidateCheck {
  std::string step;    ///< "01-env"
  std::string what;    ///< "nodes agree", "allreduce busbw at 128 MiB", "no slow node or link", "exit"
  std::string status;  ///< "PASS", "FAIL", "VOID" or "not evaluated"
  std::string detail;  ///< the numbers or names behind it
};

/// The env step: PASS when the nodes (an array of `ddpbench env --json` objects) agree on
/// driver, GPU model, CUDA, NCCL, cuDNN, torch and every NCCL_* variable (node_differences),
/// FAIL naming the fields and hosts otherwise.
std::vector<ValidateCheck> env_checks(const std::string& step, const nlohmann::json& nodes);

/// A comm step: per collective, busbw at its largest measured size against `floor_gbs`
/// (GB/s); "not evaluated" when no floor was given. A wrong result (#wrong > 0) is FAIL.
std::vector<ValidateCheck> comm_checks(const std::string& step, const ResultFile& f, std::optional<double> floor_gbs);

/// A pairs step: FAIL naming every slow node and slow link of f.comm_pairs, PASS when none,
/// "not evaluated" with fewer than 3 participants (nothing to compare).
std::vector<ValidateCheck> pairs_checks(const std::string& step, const ResultFile& f);

/// One of validate's own checks as the report holds it (SummaryTargets::external): its claim
/// (kind "validate_check") names the step, what it checks, the status and the detail, and rests
/// on the step's file (`file`, as given; "" for none).
SummaryCheck validate_summary_check(const ValidateCheck& c, const std::string& file);

/// `validate --compare`: two validations of one plan side by side, as text. Per step present
/// in both with the same plan entry: run and burn-in rows through `diff`'s rules and noise
/// floor (diff_results), comm's busbw at each collective's largest size, the pairs' named
/// outliers, find-max-bs's largest batch, the env's versions; steps in one only or whose
/// entries differ are listed. `load(dir, file)` reads a step's result file. Throws
/// UsageError when the two records come from plans with no step in common.
std::string compare_validations(const std::string& dir_a, const ValidateRecord& a, const std::string& dir_b,
                                const ValidateRecord& b,
                                const std::function<ResultFile(const std::string& dir, const std::string& file)>& load,
                                const std::function<nlohmann::json(const std::string& dir, const std::string& file)>& load_json);

/// `validate --compare DIR_A DIR_B`: the two validations of one plan side by side
/// (compare_validations on each folder's validate.json, step files read through load_result).
/// Throws UsageError when a folder holds no validate.json, or a step file that is not what
/// validate wrote.
std::string compare_validation_folders(const std::string& dir_a, const std::string& dir_b);

}  // namespace ddpbench
