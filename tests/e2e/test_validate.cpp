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
  EXPECT_THAT(report, HasSubstr("02-comm       PASS    allreduce float32 on 2 ranks busbw at 262144 bytes"));
  EXPECT_THAT(report, HasSubstr("03-pairs      not evaluated no slow node or link: 2 participants"));
  EXPECT_THAT(report, HasSubstr("Headline"));
  EXPECT_THAT(slurp(out / "report.html"), HasSubstr("<section id=\"validate\">"));
  // The tally: validate's own (env and pairs not evaluated with one node and two ranks, comm
  // PASS) and the report's; no FAIL since the exit code is 0.
  const std::string tally = last_line(o.out);
  EXPECT_EQ(tally.rfind("validate: ", 0), 0u) << o.out;
  EXPECT_THAT(tally, HasSubstr(" 0 FAIL, "));
  EXPECT_THAT(report, HasSubstr(tally));

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
  EXPECT_EQ(slurp(out / "02-comm.json.previous"), comm1);
  EXPECT_EQ(slurp(out / "03-run.json"), run1);
  const ValidateRecord rec2 = record_from_json(nlohmann::json::parse(slurp(out / "validate.json")), "validate.json");
  ASSERT_EQ(rec2.steps.size(), 3u);
  for (const auto& s : rec2.steps) EXPECT_EQ(s.status, "complete") << s.name;
  EXPECT_THAT(rec2.steps[1].fingerprint, HasSubstr("--iters=6"));
  EXPECT_EQ(rec2.steps[2].file_hash, rec.steps[2].file_hash);
}

}  // namespace
}  // namespace ddpbench::cli_tests
