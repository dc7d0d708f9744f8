// validate's plan parser (core/validate/plan), its resume decisions and its own verdicts
// (core/validate/record), against hand-written plans and hand-computed expectations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/testutil.hpp"
#include "core/util/errors.hpp"
#include "core/validate/plan.hpp"
#include "core/validate/record.hpp"

namespace ddpbench {
namespace {

using testutil::usage_error;

std::string refusal(const std::string& text) {
  return usage_error([&] { parse_plan(text, "p.yaml"); });
}

TEST(ValidatePlan, ReadsStepsOptionsTargetsAndLaunch) {
  const Plan p = parse_plan(R"(ddpbench_plan: 1
description: two steps
launch: {nproc-per-node: 4}
steps:
  - env
  - run: {model: resnet50, world-sizes: [1, 2], breakdown: true, cpu: {image-size: 64}}
  - burn-in: {model: resnet18, duration: 2m}
targets:
  efficiency: 0.9
  busbw-gbs: 40
  models:
    resnet50: {ex-s-per-gpu: 700}
)",
                            "p.yaml");
  EXPECT_EQ(p.description, "two steps");
  ASSERT_TRUE(p.nproc_per_node);
  EXPECT_EQ(*p.nproc_per_node, 4);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].name(), "01-env");
  EXPECT_EQ(p.steps[1].name(), "02-run");
  EXPECT_EQ(p.steps[2].subcommand(), "run");
  const PlanStep& run = p.steps[1];
  ASSERT_EQ(run.options.size(), 3u);
  EXPECT_EQ(run.options[1].key, "world-sizes");
  EXPECT_TRUE(run.options[1].list);
  EXPECT_EQ(run.options[1].values, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(run.options[1].place.line, 6);
  ASSERT_EQ(run.cpu_options.size(), 1u);
  EXPECT_EQ(run.cpu_options[0].key, "image-size");
  EXPECT_EQ(run.fingerprint(), "run --model=resnet50 --world-sizes=[1,2] --breakdown=true cpu:--image-size=64");
  // A burn-in without world-sizes holds the whole job.
  EXPECT_EQ(p.steps[2].implied_args(), (std::vector<std::string>{"--world-sizes", "world"}));
  EXPECT_DOUBLE_EQ(*p.targets.efficiency, 0.9);
  EXPECT_DOUBLE_EQ(*p.targets.busbw_gbs, 40);
  EXPECT_FALSE(p.targets.exposed_comm);
  EXPECT_DOUBLE_EQ(*p.targets.models.at("resnet50").ex_s_per_gpu, 700);
}

TEST(ValidatePlan, PairsStepAddsPairs) {
  const Plan p = parse_plan("steps:\n  - pairs: {pair-unit: rank}\n", "p.yaml");
  EXPECT_EQ(p.steps[0].subcommand(), "comm");
  EXPECT_EQ(p.steps[0].implied_args(), (std::vector<std::string>{"--pairs"}));
}

TEST(ValidatePlan, RefusesEachBadPlanWithItsPlaceAndFix) {
  EXPECT_EQ(refusal(""), "p.yaml: the plan is empty; give it a 'steps:' list (plans/quick.yaml is an example)");
  EXPECT_EQ(refusal("steps: []\n"),
            "p.yaml:1:1: steps: the list is empty; add at least one step (plans/quick.yaml is an example)");
  EXPECT_EQ(refusal("description: x\n"),
            "p.yaml: the plan has no 'steps:' list; add one (plans/quick.yaml is an example)");
  EXPECT_EQ(refusal("steps:\n  - env\nstepz: 1\n"),
            "p.yaml:3:1: unknown key 'stepz'; a plan has ddpbench_plan, description, launch, steps and targets");
  EXPECT_EQ(refusal("steps:\n  - rn: {model: resnet50}\n"),
            "p.yaml:2:5: unknown step 'rn'; use one of: env, comm, pairs, find-max-bs, run, burn-in");
  EXPECT_EQ(refusal("steps:\n  - run: {json: x.json}\n"),
            "p.yaml:2:11: run: 'json' cannot be set in a plan: validate writes each step's result to "
            "DIR/<nn>-<step>.json; remove it");
  EXPECT_EQ(refusal("steps:\n  - run: {model: {a: 1}}\n"),
            "p.yaml:2:18: run: model must be a value or a list of values, not a map");
  EXPECT_EQ(refusal("steps:\n  - run: {model: a, model: b}\n"),
            "p.yaml:2:21: run: 'model' is given twice; give each option once");
  EXPECT_EQ(refusal("steps:\n  - burn-in: {model: resnet18}\n"),
            "p.yaml:2:5: burn-in: no duration; add 'duration: 30m' (run --duration)");
  EXPECT_EQ(refusal("steps:\n  - env: {x: 1}\n"),
            "p.yaml:2:11: env: unknown option 'x'; env takes no options (write 'env' alone)");
  EXPECT_EQ(refusal("steps:\n  - env\ntargets: {efficiency: 1.5}\n"),
            "p.yaml:3:23: targets: efficiency 1.5 is out of range; use a number in (0, 1]");
  EXPECT_EQ(refusal("steps:\n  - env\ntargets: {busbw-gbs: fast}\n"),
            "p.yaml:3:22: targets: busbw-gbs must be a number above 0 (GB/s), not 'fast'");
  EXPECT_EQ(refusal("steps:\n  - env\ntargets: {speed: 1}\n"),
            "p.yaml:3:11: targets: unknown key 'speed'; use efficiency, exposed-comm, ex-s-per-gpu, busbw-gbs or models");
  EXPECT_EQ(refusal("steps:\n  - env\nlaunch: {nproc-per-node: 0}\n"),
            "p.yaml:3:26: launch: nproc-per-node '0' is not a rank count; use a whole number 1..4096");
  EXPECT_EQ(refusal("steps:\n  - env\nsteps:\n  - run: {model: resnet18}\n"),
            "p.yaml:3:1: 'steps' is given twice; give each key once");
  EXPECT_EQ(refusal("steps: [env]\ntargets: {efficiency: 0.9, efficiency: 0.8}\n"),
            "p.yaml:2:28: targets: 'efficiency' is given twice; give each key once");
  EXPECT_EQ(refusal("steps: [env\n"),
            "p.yaml:2:1: not a YAML plan: end of sequence flow not found; fix the YAML (plans/quick.yaml is an example)");
}

// Plans bounded and read exactly as their steps will be: one document, a size limit, values
// short enough for one argument, and no value the step's parser would read as an option.
TEST(ValidatePlan, RefusesWhatTheRealStepWouldNotRunAsGiven) {
  EXPECT_EQ(refusal("steps: [env]\n---\nsteps: [run]\n"),
            "p.yaml:2:1: the file holds 2 YAML documents; a plan is one: remove the '---' and merge what follows "
            "into the first");
  EXPECT_EQ(refusal("steps: [env]\n" + std::string(kMaxPlanBytes, '#')),
            "p.yaml: the plan is 1048589 bytes, more than the 1024 KiB a plan may have; give a plan of its steps and "
            "targets (plans/quick.yaml is an example)");
  EXPECT_EQ(refusal("steps:\n  - run: {model: " + std::string(kMaxPlanValueBytes + 1, 'a') + "}\n"),
            "p.yaml:2:18: run: model: the value is 4097 bytes, more than the 4096 an option's value may have; shorten "
            "it");
  EXPECT_EQ(refusal("steps:\n  - run: {world-sizes: [1, --json=x.json]}\n"),
            "p.yaml:2:28: run: world-sizes: the value '--json=x.json' starts with '-' and would be read as an option; "
            "give options as keys of the step");
  EXPECT_EQ(refusal("steps:\n  - run: {model: --help}\n"),
            "p.yaml:2:18: run: model: the value '--help' starts with '-' and would be read as an option; give options "
            "as keys of the step");
  EXPECT_EQ(refusal("steps: [env]\n...\nsteps: [run]\n"),
            "p.yaml:3:1: the file holds 2 YAML documents; a plan is one: remove the '---' and merge what follows "
            "into the first");
  // A leading '---', a closing '...' and comments are one document.
  EXPECT_EQ(parse_plan("%YAML 1.2\n---\n# c\nsteps: [env]\n...\n# end\n", "p.yaml").steps.size(), 1u);
  const Plan p = parse_plan("steps:\n  - run: {seed: -0, lr: -.5}\n", "p.yaml");  // numbers may be negative
  EXPECT_EQ(p.steps[0].options[1].values[0], "-.5");
}

// A fake folder: files and their hashes.
DirFacts facts_of(const std::map<std::string, std::string>& hashes) {
  DirFacts f;
  f.hash_of = [hashes](const std::string& file) -> std::optional<std::string> {
    auto it = hashes.find(file);
    if (it == hashes.end()) return std::nullopt;
    return it->second;
  };
  f.exists = [hashes](const std::string& file) { return hashes.count(file) > 0; };
  return f;
}

TEST(ValidateResume, KeepsCompleteStepsContinuesAStoppedRunAndRedoesChangedOnes) {
  const Plan p = parse_plan(R"(steps:
  - env
  - comm: {minbytes: 1M}
  - run: {model: resnet18}
  - run: {model: resnet50}
  - find-max-bs: {model: resnet18}
)",
                            "p.yaml");
  const nlohmann::json launch = {{"launcher", "none"}, {"world_size", 2}, {"nproc_per_node", 2}};
  ValidateRecord old;
  const auto rec = [&](const PlanStep& s, const std::string& status, const std::string& hash) {
    StepRecord r;
    r.name = s.name();
    r.kind = s.kind;
    r.fingerprint = s.fingerprint();
    r.launch = launch;
    r.status = status;
    r.exit_code = status == "complete" ? 0 : 137;
    r.file = s.name() + ".json";
    r.file_hash = hash;
    return r;
  };
  old.steps.push_back(rec(p.steps[0], "complete", "aa"));
  StepRecord changed = rec(p.steps[1], "complete", "bb");
  changed.fingerprint = "comm --minbytes=2M";
  old.steps.push_back(changed);
  old.steps.push_back(rec(p.steps[2], "failed", ""));
  old.steps.push_back(rec(p.steps[3], "complete", "dd"));
  // 05 has no record.
  const auto d = decide_steps(p, old, launch,
                              facts_of({{"01-env.json", "aa"},
                                        {"02-comm.json", "bb"},
                                        {"03-run.json.partial", "cc"},
                                        {"04-run.json", "changed"}}));
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].action, StepAction::kKeep);
  EXPECT_EQ(d[1].action, StepAction::kRedo);
  EXPECT_EQ(d[1].note, "redone: its plan entry changed");
  EXPECT_EQ(d[2].action, StepAction::kResume);
  EXPECT_EQ(d[2].note, "continued from 03-run.json.partial");
  EXPECT_EQ(d[3].action, StepAction::kRedo);
  EXPECT_EQ(d[3].note, "redone: 04-run.json changed since it was written");
  EXPECT_EQ(d[4].action, StepAction::kRun);

  // Launched differently: nothing is kept.
  const nlohmann::json other = {{"launcher", "slurm"}, {"world_size", 16}, {"nproc_per_node", 0}};
  const auto e = decide_steps(p, old, other, facts_of({{"01-env.json", "aa"}}));
  EXPECT_EQ(e[0].action, StepAction::kRedo);
  EXPECT_NE(e[0].note.find("redone: launched differently"), std::string::npos);
}

// --redo names steps by name, number or kind; a redone step's earlier result gets the next
// history name, never one already taken.
TEST(ValidateResume, RedoNamesStepsAndHistoryNeverOverwrites) {
  const Plan p = parse_plan("steps:\n  - env\n  - comm: {minbytes: 1M}\n  - run: {model: resnet18}\n  - run: {model: "
                            "resnet50}\n",
                            "p.yaml");
  EXPECT_EQ(redo_steps(p, "run"), (std::vector<std::string>{"03-run", "04-run"}));
  EXPECT_EQ(redo_steps(p, "2,01-env"), (std::vector<std::string>{"01-env", "02-comm"}));
  try {
    redo_steps(p, "07-run");
    FAIL() << "an unknown step was accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--redo '07-run': '07-run' is none of the plan's steps; give a step's name, number or kind "
                           "(01-env, 02-comm, 03-run, 04-run)");
  }
  std::vector<StepRecord> history;
  EXPECT_EQ(history_file(history, "02-comm"), "02-comm.1.json");
  StepRecord h;
  h.name = "02-comm";
  history.push_back(h);
  history.push_back(h);
  h.name = "03-run";
  history.push_back(h);
  EXPECT_EQ(history_file(history, "02-comm"), "02-comm.3.json");
  EXPECT_EQ(history_file(history, "03-run"), "03-run.2.json");
  // A complete step kept otherwise is redone when --redo names it.
  const nlohmann::json launch = {{"launcher", "none"}, {"world_size", 2}, {"nproc_per_node", 2}};
  ValidateRecord old;
  StepRecord r;
  r.name = p.steps[1].name();
  r.kind = "comm";
  r.fingerprint = p.steps[1].fingerprint();
  r.launch = launch;
  r.status = "complete";
  r.file = "02-comm.json";
  r.file_hash = "bb";
  old.steps.push_back(r);
  EXPECT_EQ(decide_steps(p, old, launch, facts_of({{"02-comm.json", "bb"}}))[1].action, StepAction::kKeep);
  const auto d = decide_steps(p, old, launch, facts_of({{"02-comm.json", "bb"}}), {"02-comm"});
  EXPECT_EQ(d[1].action, StepAction::kRedo);
  EXPECT_EQ(d[1].note, "redone: --redo (the earlier record is kept in validate.json's history)");
}

// What one node cannot evaluate is said before anything runs.
TEST(ValidatePlan, PreflightNotesWhatOneNodeCannotEvaluate) {
  const Plan p = parse_plan(R"(steps:
  - env
  - comm: {minbytes: 1M}
  - pairs: {pair-unit: rank}
  - run: {model: resnet18}
targets: {efficiency: 0.85, exposed-comm: 0.15}
)",
                            "p.yaml");
  const auto one_gpu = plan_preflight_notes(p, 1, 1, 1, true);
  ASSERT_EQ(one_gpu.size(), 4u);
  EXPECT_EQ(one_gpu[0], "the env step runs on one node: there is no other node to compare its environment with, so "
                        "'nodes agree' will be not evaluated");
  EXPECT_EQ(one_gpu[1], "03-pairs has 1 participant (ranks): at least 3 are needed to tell a slow node from its peer, "
                        "so 'no slow node or link' will be not evaluated");
  EXPECT_EQ(one_gpu[2], "this job has 1 GPU: the efficiency and exposed-comm targets need 2 or more, so they will be "
                        "not evaluated");
  EXPECT_EQ(one_gpu[3], "the plan has no busbw-gbs target: comm's busbw will be reported, not evaluated");
  // Four nodes of 8 GPUs: everything can be evaluated but comm's busbw (no target).
  const auto big = plan_preflight_notes(p, 4, 32, 32, true);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_THAT(big[0], ::testing::HasSubstr("no busbw-gbs target"));
}

TEST(ValidateRecord, RoundTripsAndRefusesAForeignFile) {
  ValidateRecord r;
  r.plan_path = "plans/quick.yaml";
  r.plan_text = "steps: [env]\n";
  StepRecord s;
  s.name = "01-env";
  s.kind = "env";
  s.fingerprint = "env";
  s.argv = {"ddpbench", "env"};
  s.status = "complete";
  s.seconds = 0.5;
  s.file = "01-env.json";
  s.file_hash = content_hash("x");
  r.steps.push_back(s);
  const ValidateRecord back = record_from_json(record_json(r), "v.json");
  ASSERT_EQ(back.steps.size(), 1u);
  EXPECT_EQ(back.steps[0].file_hash, s.file_hash);
  EXPECT_EQ(back.plan_text, r.plan_text);
  EXPECT_EQ(usage_error([] { record_from_json(nlohmann::json{{"a", 1}}, "v.json"); }),
            "v.json is not a validate record (no \"ddpbench_validate\": 1); give the folder ddpbench validate --out "
            "wrote");
  // FNV-1a 64 of "a" (the published test vector).
  EXPECT_EQ(content_hash("a"), "af63dc4c8601ec8c");
}

TEST(ValidateChecks, EnvPassesWhenNodesAgreeAndFailsNamingTheField) {
  const nlohmann::json a = {{"host", "n1"}, {"driver", "550.54"}, {"torch", "2.11"}, {"kernel", "6.1"},
                            {"env", {{"NCCL_IB_HCA", "mlx5"}}}};
  nlohmann::json b = a;
  b["host"] = "n2";
  b["kernel"] = "6.2";  // kernels may differ
  auto c = env_checks("01-env", nlohmann::json::array({a, b}));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, "PASS");
  b["driver"] = "535.1";
  b["env"]["NCCL_IB_HCA"] = "mlx4";
  c = env_checks("01-env", nlohmann::json::array({a, b}));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].status, "FAIL");
  EXPECT_NE(c[0].detail.find("driver"), std::string::npos);
  EXPECT_NE(c[1].detail.find("NCCL_IB_HCA"), std::string::npos);
  EXPECT_EQ(env_checks("01-env", nlohmann::json::array({a}))[0].status, "not evaluated");
}

TEST(ValidateChecks, BusbwFloorAtTheLargestSizeAndWrongResults) {
  ResultFile f;
  const auto row = [](long long bytes, double busbw, long long wrong) {
    CommResult c;
    c.collective = "allreduce";
    c.dtype = "float32";
    c.world_size = 8;
    c.bytes = bytes;
    c.busbw_gbps = busbw;
    c.wrong = wrong;
    return c;
  };
  f.comm_results = {row(1 << 20, 5.0, 0), row(1 << 28, 90.0, 0)};
  auto c = comm_checks("02-comm", f, 100.0);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, "FAIL");  // 90 at the largest size, below 100
  EXPECT_EQ(c[0].detail, "90.00 GB/s against >= 100.00 GB/s");
  EXPECT_EQ(comm_checks("02-comm", f, 80.0)[0].status, "PASS");
  EXPECT_EQ(comm_checks("02-comm", f, std::nullopt)[0].status, "not evaluated");
  f.comm_results[1].wrong = 3;
  EXPECT_EQ(comm_checks("02-comm", f, 80.0)[0].status, "FAIL");
}

TEST(ValidateChecks, PairsNameTheSlowNode) {
  ResultFile f;
  f.comm_pairs = {{"participants", nlohmann::json::array({1, 2, 3})},
                  {"slow_nodes", nlohmann::json::array({{{"message", "node2: every pair with it is slow (2 of 2)"}}})},
                  {"slow_links", nlohmann::json::array()}};
  auto c = pairs_checks("03-pairs", f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, "FAIL");
  EXPECT_EQ(c[0].detail, "node2: every pair with it is slow (2 of 2)");
  f.comm_pairs["slow_nodes"] = nlohmann::json::array();
  EXPECT_EQ(pairs_checks("03-pairs", f)[0].status, "PASS");
  f.comm_pairs["participants"] = nlohmann::json::array({1, 2});
  EXPECT_EQ(pairs_checks("03-pairs", f)[0].status, "not evaluated");
}

}  // namespace
}  // namespace ddpbench
