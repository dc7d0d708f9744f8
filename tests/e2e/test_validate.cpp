// `ddpbench validate`: a plan of every step on two local ranks, the refusals of bad plans, a
// plan stopped by killing a rank mid-run and resumed, and --compare of two folders.
#include <signal.h>

#include <thread>

#include "core/launch/process.hpp"
#include "core/validate/record.hpp"
#include "e2e/cli_test_util.hpp"

namespace ddpbench::cli_tests {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
}

// Every refusal: exit 2, exactly this one line on stderr, nothing run or written.
TEST(Validate, RefusesABadPlanWithOneLineNamingItsPlace) {
  TempDir d;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"steps:\n  - run: {modle: resnet18}\n",
       "ddpbench: error: plan.yaml:2:11: run: unknown option 'modle' of 'ddpbench run'; see 'ddpbench run --help'"},
      {"steps:\n  - run: {model: resnet18, precision: fp99}\n",
       "ddpbench: error: plan.yaml:2:5: run: --precision 'fp99' is unknown; use fp32, fp32-strict, tf32, fp16 or bf16"},
      {"steps:\n  - env\n  - run: {model: resnet99}\n",
       "ddpbench: error: plan.yaml:3:11: run: unknown model 'resnet99'; choose one of: "},
      {"", "ddpbench: error: plan.yaml: the plan is empty; give it a 'steps:' list (plans/quick.yaml is an example)"},
      {"steps:\n  - run: {model: resnet18, breakdown: maybe}\n",
       "ddpbench: error: plan.yaml:2:28: run: breakdown is a flag; give it true or false, not 'maybe'"},
      {"steps:\n  - comm: {nproc-per-node: 4}\n",
       "ddpbench: error: plan.yaml:2:12: comm: 'nproc-per-node' cannot be set in a plan: it is the launch's: put it "
       "under 'launch:' or give validate --nproc-per-node"},
  };
  for (const auto& [plan, line] : cases) {
    SCOPED_TRACE(plan);
    write(d.path / "plan.yaml", plan);
    const Outcome o = run("cd " + d.path.string() + " && " + kBin + " validate plan.yaml --out out");
    EXPECT_EQ(o.code, 2);
    EXPECT_EQ(count_lines(o.err), 1u) << o.err;
    EXPECT_EQ(o.err.rfind(line, 0), 0u) << o.err;
    EXPECT_EQ(o.out, "");
    EXPECT_FALSE(fs::exists(d.path / "out"));
  }
}

// A cpu: option with a key the step has replaces that option on a CPU node (this machine):
// --dry-run prints the step's command with fp32, not bf16; a key twice within cpu: is refused.
TEST(Validate, CpuOptionReplacesTheStepsOptionOnACpuNode) {
  TempDir d;
  write(d.path / "plan.yaml",
        "steps:\n  - run: {model: resnet18, precision: bf16, breakdown: true, cpu: {precision: fp32, image-size: 32}}\n");
  Outcome o = run("cd " + d.path.string() + " && " + kBin + " validate plan.yaml --dry-run");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("01-run: ddpbench run --model resnet18 --breakdown --precision fp32 --image-size 32\n"));
  EXPECT_THAT(o.out, Not(HasSubstr("bf16")));
  write(d.path / "plan.yaml", "steps:\n  - run: {model: resnet18, cpu: {precision: fp32, precision: bf16}}\n");
  o = run("cd " + d.path.string() + " && " + kBin + " validate plan.yaml --dry-run");
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(count_lines(o.err), 1u) << o.err;
}

constexpr const char* kAllSteps = R"(ddpbench_plan: 1
description: every step on two local ranks
steps:
  - env
  - comm: {collectives: allreduce, minbytes: 64K, maxbytes: 256K, stepfactor: 4, iters: 5}
  - pairs: {pair-unit: rank, pair-bytes: 256K, confirm-runs: 1}
  - find-max-bs: {model: squeezenet1_0, image-size: 32, start: 2, memory-limit: 256M}
  - run: {model: squeezenet1_0, image-size: 32, batch-size: 2, iters: 3, warmup: 1, world-sizes: "1,2", breakdown: true}
  - burn-in: {model: squeezenet1_0, image-size: 32, batch-size: 2, warmup: 1, duration: 10s}
targets:
  efficiency: 0.01
  exposed-comm: 1
  busbw-gbs: 0.001
)";

// The whole plan: every step's file, the record, the report with validate's verdicts first,
// the tally as the last line; then --compare of the folder with a copy of itself.
TEST(Validate, EveryStepOnTwoLocalRanksThenCompare) {
  TempDir d;
  write(d.path / "plan.yaml", kAllSteps);
  const Outcome o = run("cd " + d.path.string() + " && OMP_NUM_THREADS=1 " + kBin +
                        " validate plan.yaml --out out --nproc-per-node 2");
  ASSERT_EQ(o.code, 0) << o.err;
  const fs::path out = d.path / "out";
  for (const char* f : {"01-env.json", "02-comm.json", "03-pairs.json", "04-find-max-bs.json", "05-run.json",
                        "06-burn-in.json", "validate.json", "plan.yaml", "report.txt", "report.md", "report.html"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  const ValidateRecord rec = record_from_json(nlohmann::json::parse(slurp(out / "validate.json")), "validate.json");
  ASSERT_EQ(rec.steps.size(), 6u);
  for (const auto& s : rec.steps) {
    EXPECT_EQ(s.status, "complete") << s.name;
    EXPECT_EQ(s.launch.at("world_size"), 2) << s.name;
    EXPECT_EQ(s.file_hash, content_hash(slurp(out / s.file))) << s.name;
  }
  // The burn-in held the whole job: one DDP size, 2 ranks.
  EXPECT_NE(std::find(rec.steps[5].argv.begin(), rec.steps[5].argv.end(), "world"), rec.steps[5].argv.end());
  const std::string report = slurp(out / "report.txt");
  EXPECT_EQ(report.rfind("ddpbench validate: plan.yaml (every step on two local ranks)\n", 0), 0u) << report;
  // What one node with two ranks cannot evaluate, said before it ran (and in the report).
  EXPECT_THAT(o.err, HasSubstr("ddpbench: validate: note: the env step runs on one node"));
  EXPECT_THAT(o.err, HasSubstr("ddpbench: validate: note: 03-pairs has 2 participants (ranks)"));
  EXPECT_THAT(report, HasSubstr("note: 03-pairs has 2 participants (ranks)"));
  EXPECT_THAT(report, HasSubstr("02-comm       PASS    allreduce float32 on 2 ranks busbw at 256 KiB"));
  EXPECT_THAT(report, HasSubstr("03-pairs      not evaluated no slow node or link: 2 participants"));
  EXPECT_THAT(report, HasSubstr("Headline"));
  EXPECT_THAT(slurp(out / "report.html"), HasSubstr("<section id=\"validate\">"));
  // The tally: validate's own (env and pairs not evaluated with one node and two ranks, comm
  // PASS) and the report's; no FAIL since the exit code is 0. The report's headline counts the
  // same checks, and verdict.json carries the verdict as a claim with every claim it rests on.
  const std::string tally = last_line(o.out);
  EXPECT_EQ(tally.rfind("validate: ", 0), 0u) << o.out;
  EXPECT_THAT(tally, HasSubstr(" 0 FAIL, "));
  EXPECT_THAT(report, HasSubstr(tally));
  const auto verdict = nlohmann::json::parse(slurp(out / "verdict.json"));
  EXPECT_EQ(verdict["verdict"]["kind"], "validate_tally");
  EXPECT_EQ(verdict["verdict"]["text"], tally);
  const auto headline = nlohmann::json::parse(slurp(out / "report.json"))["headline"]["verdicts"];
  for (const char* k : {"pass", "fail", "void", "not_evaluated"})
    EXPECT_EQ(headline[k].get<double>(), verdict["verdict"]["numbers"][k]["value"].get<double>()) << k;
  // The pairs step itself says the same as validate: with two participants nothing is judged.
  EXPECT_THAT(o.out, HasSubstr("pairs: not evaluated: 2 participants"));
  // `report DIR` reads the folder: its result files, the others left out with a note.
  const Outcome r = run(kBin + " report " + out.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("01-env.json is a validate env step, not a result file: left out"));
  EXPECT_THAT(r.err, HasSubstr("validate.json is validate's record, not a result file: left out"));
  EXPECT_THAT(r.out, HasSubstr("Headline"));
  const Outcome glob = run("cd " + out.string() + " && " + kBin + " report *.json");
  EXPECT_EQ(glob.code, 0) << glob.err;

  // --compare with a copy: every step is compared, comm unchanged.
  fs::copy(out, d.path / "copy", fs::copy_options::recursive);
  const Outcome c = run(kBin + " validate --compare " + out.string() + " " + (d.path / "copy").string());
  ASSERT_EQ(c.code, 0) << c.err;
  for (const char* s : {"## 01-env", "## 02-comm", "## 03-pairs", "## 04-find-max-bs", "## 05-run", "## 06-burn-in"})
    EXPECT_THAT(c.out, HasSubstr(s));
  EXPECT_THAT(c.out, HasSubstr("(+0.0%)"));
  const Outcome bad = run(kBin + " validate --compare " + out.string() + " " + d.path.string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "ddpbench: error: " + d.path.string() +
                         " holds no validate.json; give folders written by ddpbench validate --out\n");
}

// The children of `pid` (from /proc).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid) out.push_back(std::stoi(name));
  }
  return out;
}

// Whether `pid` is gone: no such process, or a zombie (a re-parented one waits for its reaper).
bool gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

// validate started with a plan whose run step lasts until it is stopped; returns once the
// step's launcher and its 2 ranks are up: {validate's index, launcher, rank pids}.
std::vector<pid_t> start_long_validate(Supervisor& sup, const fs::path& dir, size_t& index) {
  write(dir / "plan.yaml", std::string(R"(steps:
  - run: {model: )") + testutil::kTinyModel + R"(, image-size: 32, batch-size: 2, iters: 100000, warmup: 1, world-sizes: "2", quiet: true}
)");
  ProcessOptions po;
  po.cwd = dir.string();
  po.env["OMP_NUM_THREADS"] = "1";
  index = sup.start({kBin, "validate", "plan.yaml", "--out", "out", "--nproc-per-node", "2"}, po);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (sup.running() && std::chrono::steady_clock::now() < deadline) {
    sup.step(0.2);
    for (pid_t launcher : children_of(sup.pid(index)))
      if (const auto ranks = children_of(launcher); ranks.size() == 2) return {launcher, ranks[0], ranks[1]};
  }
  return {};
}

// One folder, one validate: a second one on the same --out is refused (exit 2, naming the
// first's pid) while the first runs. Killed with SIGKILL, validate takes its step with it (the
// launcher and both ranks end: parent-death signal), and the folder's lock is free again.
// Without the lock the second validate runs beside the first; without the parent-death signal
// the ranks run on.
TEST(Validate, OneValidatePerFolderAndNoStepOutlivesAKill) {
  TempDir d;
  Supervisor sup(2.0);
  size_t v = 0;
  const auto step = start_long_validate(sup, d.path, v);
  ASSERT_EQ(step.size(), 3u) << "the step never started: " << sup.err(v);
  const Outcome second = run("cd " + d.path.string() + " && " + kBin + " validate plan.yaml --out out");
  EXPECT_EQ(second.code, 2) << second.err;
  EXPECT_EQ(second.err, "ddpbench: error: --out out is in use by another ddpbench validate (pid " +
                            std::to_string(sup.pid(v)) + "); wait for it to end, or give another --out\n");
  ::kill(sup.pid(v), SIGKILL);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline && !(gone(step[0]) && gone(step[1]) && gone(step[2]))) {
    sup.step(0.2);
  }
  for (pid_t p : step) EXPECT_TRUE(gone(p)) << "pid " << p << " of the step outlived validate's SIGKILL";
  while (sup.running()) sup.step(0.2);
  EXPECT_EQ(run("flock -n " + (d.path / "out" / ".validate.lock").string() + " true").code, 0)
      << "the folder is still locked after its validate died";
}

// SIGTERM (or SIGINT) to validate goes to its step: the step's launcher and ranks end, validate
// records the step as failed with 128 + 15, writes its report and says how to resume.
TEST(Validate, TerminatedValidateStopsItsStepAndSaysHowToResume) {
  TempDir d;
  Supervisor sup(2.0);
  size_t v = 0;
  const auto step = start_long_validate(sup, d.path, v);
  ASSERT_EQ(step.size(), 3u) << "the step never started: " << sup.err(v);
  ::kill(sup.pid(v), SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sup.running() && std::chrono::steady_clock::now() < deadline) sup.step(0.2);
  ASSERT_TRUE(sup.exited(v)) << sup.err(v);
  for (pid_t p : step) EXPECT_TRUE(gone(p)) << "pid " << p << " of the step outlived validate's SIGTERM";
  EXPECT_EQ(sup.status(v).code, 1) << sup.err(v);
  EXPECT_THAT(sup.err(v), HasSubstr("ddpbench: validate: Terminated: the step was stopped with it"));
  EXPECT_THAT(sup.err(v), HasSubstr("stopped: step 01-run (run) exited 143;"));
  const ValidateRecord rec =
      record_from_json(nlohmann::json::parse(slurp(d.path / "out" / "validate.json")), "validate.json");
  ASSERT_EQ(rec.steps.size(), 1u);
  EXPECT_EQ(rec.steps[0].status, "failed");

  // A truncated .partial (a full disk, an edit) is not continued for ever: the next validate
  // keeps it aside under a name of its own and measures the step again.
  const fs::path partial = d.path / "out" / "01-run.json.partial";
  write(partial, "{\"schema_version\": \"1.19.0\", \"results\": [");
  Supervisor sup2(2.0);
  ProcessOptions po;
  po.cwd = d.path.string();
  po.env["OMP_NUM_THREADS"] = "1";
  const size_t v2 = sup2.start({kBin, "validate", "plan.yaml", "--out", "out", "--nproc-per-node", "2"}, po);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sup2.running() && std::chrono::steady_clock::now() < until &&
         sup2.err(v2).find(": ddpbench run") == std::string::npos)
    sup2.step(0.2);
  ::kill(sup2.pid(v2), SIGTERM);
  while (sup2.running()) sup2.step(0.2);
  EXPECT_THAT(sup2.err(v2), HasSubstr("[1/1] 01-run: redone: its .partial is not a readable result ("));
  EXPECT_THAT(sup2.err(v2), HasSubstr("kept as 01-run.unreadable.partial"));
  EXPECT_EQ(sup2.err(v2).find("--resume"), std::string::npos) << sup2.err(v2);
  EXPECT_EQ(slurp(d.path / "out" / "01-run.unreadable.partial"), "{\"schema_version\": \"1.19.0\", \"results\": [");
}

// validate owns its --out or refuses it, exit 2, the files untouched: a folder of the user's
// files without validate.json, a plan that is one of the files validate writes there, and a
// target for a model the zoo lacks.
TEST(Validate, RefusesAFolderItDoesNotOwnAndATargetOfAnUnknownModel) {
  TempDir d;
  write(d.path / "plan.yaml", "steps: [env]\n");
  fs::create_directories(d.path / "mine");
  write(d.path / "mine" / "report.txt", "my own report\n");
  Outcome o = run("cd " + d.path.string() + " && " + kBin + " validate plan.yaml --out mine");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(o.err, "ddpbench: error: --out mine holds files validate did not write (report.txt, and no "
                   "validate.json); give a new or empty folder, or one an earlier validate wrote\n");
  EXPECT_EQ(slurp(d.path / "mine" / "report.txt"), "my own report\n");
  EXPECT_FALSE(fs::exists(d.path / "mine" / "plan.yaml"));

  o = run("cd " + d.path.string() + " && " + kBin + " validate plan.yaml --out out");
  ASSERT_EQ(o.code, 0) << o.err;
  // No step of this plan is reportable (env only): no report.json, and one an earlier plan left
  // does not stay behind as if it were this plan's.
  EXPECT_FALSE(fs::exists(d.path / "out" / "report.json"));
  write(d.path / "out" / "report.json", "{\"from\": \"an earlier plan\"}\n");
  o = run("cd " + d.path.string() + " && " + kBin + " validate plan.yaml --out out");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(d.path / "out" / "report.json"));
  EXPECT_THAT(o.err, HasSubstr("wrote out/report.txt, report.md, report.html, verdict.json and validate.json"));
  fs::copy_file(d.path / "plan.yaml", d.path / "out" / "report.txt", fs::copy_options::overwrite_existing);
  const std::string before = slurp(d.path / "out" / "report.txt");
  o = run("cd " + d.path.string() + " && " + kBin + " validate out/report.txt --out out");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(o.err, "ddpbench: error: the plan out/report.txt is a file validate writes in --out out; give the plan "
                   "from outside the folder\n");
  EXPECT_EQ(slurp(d.path / "out" / "report.txt"), before);

  write(d.path / "typo.yaml", "steps: [env]\ntargets:\n  models:\n    resnt50: {ex-s-per-gpu: 100}\n");
  o = run("cd " + d.path.string() + " && " + kBin + " validate typo.yaml --out typo");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("ddpbench: error: typo.yaml:4:5: targets: models: unknown model 'resnt50'; choose one of: "));
  EXPECT_FALSE(fs::exists(d.path / "typo"));
}

// A plan stopped by killing a rank mid-run: validate exits 1 and says how to resume; run again,
// the complete steps are kept byte for byte, the run continues from its .partial file and one
// report is written.
TEST(Validate, StoppedByAKilledRankThenResumed) {
  TempDir d;
  write(d.path / "plan.yaml", R"(steps:
  - env
  - comm: {collectives: allreduce, minbytes: 64K, maxbytes: 64K, iters: 5}
  - run: {model: squeezenet1_0, image-size: 32, batch-size: 2, iters: 40, warmup: 1, world-sizes: "1,2"}
targets: {efficiency: 0.01, exposed-comm: 1}
)");
  const fs::path out = d.path / "out";
  Supervisor sup(2.0);
  ProcessOptions po;
  po.cwd = d.path.string();
  po.env["OMP_NUM_THREADS"] = "1";
  const size_t v = sup.start({kBin, "validate", "plan.yaml", "--out", "out", "--nproc-per-node", "2"}, po);
  // Wait for the run's first rows, then kill rank 1.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  bool killed = false;
  while (sup.running() && std::chrono::steady_clock::now() < deadline) {
    sup.step(0.2);
    if (killed || !fs::exists(out / "03-run.json.partial")) continue;
    for (pid_t launcher : children_of(sup.pid(v))) {
      const auto ranks = children_of(launcher);
      if (ranks.size() == 2) {
        ::kill(std::max(ranks[0], ranks[1]), SIGKILL);
        killed = true;
      }
    }
  }
  ASSERT_TRUE(killed) << "the run never reached its first row: " << sup.err(v);
  while (sup.running()) sup.step(0.5);
  EXPECT_EQ(sup.status(v).code, 1) << sup.err(v);
  EXPECT_THAT(sup.err(v), HasSubstr("stopped: step 03-run (run) exited 137; the steps after it did not run. Run the "
                                    "same command again to resume: complete steps are kept, this one continues from "
                                    "03-run.json.partial"));
  const std::string env1 = slurp(out / "01-env.json"), comm1 = slurp(out / "02-comm.json");
  ASSERT_FALSE(env1.empty());
  ASSERT_FALSE(comm1.empty());

  // The same environment as the stopped launch (a run continues only where it was measured).
  const Outcome o = run("cd " + d.path.string() + " && OMP_NUM_THREADS=1 " + kBin +
                        " validate plan.yaml --out out --nproc-per-node 2");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.err, HasSubstr("[1/3] 01-env: kept (complete, plan entry unchanged)"));
  EXPECT_THAT(o.err, HasSubstr("[2/3] 02-comm: kept (complete, plan entry unchanged)"));
  EXPECT_THAT(o.err, HasSubstr("--resume out/03-run.json.partial --nproc-per-node 2 (continued)"));
  EXPECT_EQ(slurp(out / "01-env.json"), env1);
  EXPECT_EQ(slurp(out / "02-comm.json"), comm1);
  const ResultFile run_file = read_result_file((out / "03-run.json").string());
  EXPECT_TRUE(run_file.complete);
  EXPECT_EQ(static_cast<int>(run_file.results.size()), run_file.rows_planned);
  const ValidateRecord rec = record_from_json(nlohmann::json::parse(slurp(out / "validate.json")), "validate.json");
  ASSERT_EQ(rec.steps.size(), 3u);
  for (const auto& s : rec.steps) EXPECT_EQ(s.status, "complete") << s.name;
  EXPECT_EQ(count_lines(slurp(out / "report.txt")) > 0, true);
  EXPECT_EQ(last_line(o.out).rfind("validate: ", 0), 0u);

  // A changed entry in the middle: that step is redone (its old result kept beside), the
  // steps around it kept, and the record holds each once, complete.
  const std::string run1 = slurp(out / "03-run.json");
  std::string plan = slurp(d.path / "plan.yaml");
  plan.replace(plan.find("iters: 5"), 8, "iters: 6");
  write(d.path / "plan.yaml", plan);
  const Outcome again = run("cd " + d.path.string() + " && OMP_NUM_THREADS=1 " + kBin +
                            " validate plan.yaml --out out --nproc-per-node 2");
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("[1/3] 01-env: kept"));
  EXPECT_THAT(again.err, HasSubstr("[2/3] 02-comm: redone: its plan entry changed"));
  EXPECT_THAT(again.err, HasSubstr("[3/3] 03-run: kept"));
  EXPECT_EQ(slurp(out / "02-comm.1.json"), comm1);  // the earlier result, kept as history
  EXPECT_EQ(slurp(out / "03-run.json"), run1);
  const ValidateRecord rec2 = record_from_json(nlohmann::json::parse(slurp(out / "validate.json")), "validate.json");
  ASSERT_EQ(rec2.steps.size(), 3u);
  for (const auto& s : rec2.steps) EXPECT_EQ(s.status, "complete") << s.name;
  EXPECT_THAT(rec2.steps[1].fingerprint, HasSubstr("--iters=6"));
  EXPECT_EQ(rec2.steps[2].file_hash, rec.steps[2].file_hash);
  ASSERT_EQ(rec2.history.size(), 1u);
  EXPECT_EQ(rec2.history[0].file, "02-comm.1.json");

  // --redo: a complete step measured again on request, the earlier one kept as the next history
  // entry (never overwritten); an unknown step is refused naming the plan's steps.
  const std::string comm2 = slurp(out / "02-comm.json");
  const Outcome redo = run("cd " + d.path.string() + " && OMP_NUM_THREADS=1 " + kBin +
                           " validate plan.yaml --out out --nproc-per-node 2 --redo comm");
  EXPECT_EQ(redo.code, 0) << redo.err;
  EXPECT_THAT(redo.err, HasSubstr("[2/3] 02-comm: redone: --redo"));
  EXPECT_THAT(redo.err, HasSubstr("[3/3] 03-run: kept"));
  EXPECT_EQ(slurp(out / "02-comm.1.json"), comm1);
  EXPECT_EQ(slurp(out / "02-comm.2.json"), comm2);
  const ValidateRecord rec3 = record_from_json(nlohmann::json::parse(slurp(out / "validate.json")), "validate.json");
  EXPECT_EQ(rec3.history.size(), 2u);
  const Outcome unknown = run("cd " + d.path.string() + " && " + kBin +
                              " validate plan.yaml --out out --nproc-per-node 2 --redo 07-run");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.err, "ddpbench: error: --redo '07-run': '07-run' is none of the plan's steps; give a step's name, "
                         "number or kind (01-env, 02-comm, 03-run)\n");
}

}  // namespace
}  // namespace ddpbench::cli_tests
