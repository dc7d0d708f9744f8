// The sbatch templates of scripts/slurm/, submitted as they are to the loopback Slurm
// (tests/cluster/local-slurm.sh) with the CPU override their headers document
// (--gpus-per-task=0, DDPBENCH_DEVICE=cpu: no GRES on this cluster) and a tiny model;
// the container variant through a stand-in `apptainer` that records its arguments and runs
// the command; the validate template runs a tiny plan and a second job on its folder keeps
// every step. Without Slurm, the weak-scaling template's world-size list and the validate
// template's folder and exit code are checked with a stand-in `srun`.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>
#include <regex>
#include <string>

#include "cluster/slurm_fixture.hpp"
#include "common/testutil.hpp"
#include "core/result/result.hpp"

namespace ddpbench {
namespace {

using nlohmann::json;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kTemplates = DDPBENCH_SOURCE_DIR "/scripts/slurm/";
const std::string kTinyArgs = testutil::kTinyArgs + " --iters 2 --warmup 1";

void write_executable(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
  ::chmod(p.c_str(), 0755);
}

// The job id sbatch --parsable printed ("42" or "42;cluster").
long long job_id(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("^([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

/// Checks a template's result file of a 2-rank CPU job on the one loopback node.
void expect_cpu_job(const ResultFile& f, const std::vector<int>& world_sizes) {
  EXPECT_TRUE(f.complete);
  EXPECT_EQ(f.environment.at("launcher"), "slurm");
  EXPECT_EQ(f.environment.at("world_size"), 2);
  EXPECT_EQ(f.environment.at("device_type"), "cpu");
  EXPECT_EQ(f.config.at("world_sizes"), json(world_sizes));
  // --cpus-per-task=1: the template's OMP_NUM_THREADS, and ddpbench's threads per rank.
  EXPECT_EQ(f.environment.at("env").value("OMP_NUM_THREADS", ""), "1");
  EXPECT_EQ(f.environment.at("threads_per_rank"), 1);
  const json& nodes = f.environment.at("nodes");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].at("ranks"), json::array({0, 1}));
  EXPECT_EQ(f.environment.at("node_differences"), json::array());
  ASSERT_FALSE(f.results.empty());
  const auto& last = f.results.back();
  EXPECT_EQ(last.world_size, 2);
  EXPECT_EQ(last.ranks.size(), 2u);
  EXPECT_TRUE(last.checks.grad_check_passed.value());
}

TEST_F(Slurm, NodeTemplateRunsOnCpusWithoutGres) {
  TempDir d;
  const auto out = d.path / "job.out";
  const auto o =
      sbatch_wait(slurm_env() + "DDPBENCH=" + kBin + " DDPBENCH_DEVICE=cpu DDPBENCH_TIMEOUT=60 DDPBENCH_RESULTS=" +
                  d.path.string() + " DDPBENCH_ARGS='" + kTinyArgs +
                  " --world-sizes 2' sbatch --parsable --gpus-per-task=0 --ntasks-per-node=2 --cpus-per-task=1 "
                  "--overcommit -o " +
                  out.string() + " " + kTemplates + "ddpbench-node.sbatch");
  ASSERT_EQ(o.code, 0) << o.err << testutil::slurp(out);
  const long long id = job_id(o.out);
  ASSERT_GT(id, 0) << o.out;
  const auto path = d.path / ("ddpbench-node-" + std::to_string(id) + ".json");
  ASSERT_TRUE(std::filesystem::exists(path)) << testutil::slurp(out);
  const ResultFile f = read_result_file(path.string());
  expect_cpu_job(f, {2});  // the 2 tasks of the node as one group
  EXPECT_EQ(f.environment.at("slurm_job_id"), std::to_string(id));
  EXPECT_NE(testutil::slurp(out).find("ddpbench-node: wrote " + path.string()), std::string::npos);
}

TEST_F(Slurm, WeakScalingTemplateRunsInAContainer) {
  TempDir d;
  const auto out = d.path / "job.out";
  const auto bin = d.path / "bin";
  std::filesystem::create_directory(bin);
  const auto log = d.path / "apptainer.log";
  // A stand-in for `apptainer exec [--nv] --bind DIR IMAGE CMD...`: records the arguments,
  // then runs CMD on the host.
  write_executable(bin / "apptainer", "#!/bin/sh\necho \"$@\" >> " + log.string() +
                                          "\nwhile [ $# -gt 0 ] && [ \"$1\" != ddpbench.sif ]; do shift; done\n"
                                          "shift\nexec \"$@\"\n");
  const auto o = sbatch_wait(
      slurm_env() + "PATH=" + bin.string() + ":$PATH DDPBENCH=" + kBin +
      " DDPBENCH_CONTAINER=ddpbench.sif DDPBENCH_DEVICE=cpu DDPBENCH_TIMEOUT=60 DDPBENCH_RESULTS=" + d.path.string() +
      " DDPBENCH_ARGS='" + kTinyArgs +
      "' sbatch --parsable -N 1 --gpus-per-task=0 --ntasks-per-node=2 --cpus-per-task=1 "
      "--overcommit -o " +
      out.string() + " " + kTemplates + "ddpbench-weak-scaling.sbatch");
  ASSERT_EQ(o.code, 0) << o.err << testutil::slurp(out);
  const long long id = job_id(o.out);
  const auto path = d.path / ("ddpbench-weak-" + std::to_string(id) + ".json");
  ASSERT_TRUE(std::filesystem::exists(path)) << testutil::slurp(out);
  expect_cpu_job(read_result_file(path.string()), {2});  // 1 node x 2 tasks
  // Both ranks ran through the container runtime, without --nv on CPUs.
  const std::string calls = testutil::slurp(log);
  EXPECT_EQ(testutil::count_lines(calls), 2u) << calls;
  EXPECT_NE(
      calls.find("exec --bind " + d.path.string() + " ddpbench.sif " + kBin + " run --device cpu --world-sizes 2"),
      std::string::npos)
      << calls;
  EXPECT_EQ(calls.find("--nv"), std::string::npos) << calls;
}

// A tiny CPU acceptance plan: the env, comm and run steps of a 2-rank job, and targets the
// 2 ranks of this 2-core machine meet (weak-scaling efficiency 1%, exposed communication
// under 100% of the step instead of the report's 15%). 5 iterations are noisy: a target may
// be VOID (e.g. negative_ddp_overhead when the cold no-DDP baseline is the slowest row), never
// FAIL.
const std::string kTinyPlan = R"(description: tiny CPU plan of the Slurm template test
steps:
  - env
  - comm:
      collectives: allreduce
      minbytes: 64K
      maxbytes: 256K
      stepfactor: 4
      iters: 5
  - run:
      model: resnet18
      image-size: 32
      batch-size: 8
      iters: 5
      warmup: 1
      world-sizes: "1,2"
targets:
  efficiency: 0.01
  exposed-comm: 1
)";

// The last `validate: ...` line of a job log ("" when none).
std::string last_validate_line(const std::string& log) {
  std::string last;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("validate: ", 0) == 0) last = line;
  return last;
}

// The validate template runs the plan on every task (2 ranks), writes the folder named after
// the job, and a second job on the same folder (a requeue's situation: validate run again on
// it with the same plan and ranks) keeps every complete step, its file untouched.
TEST_F(Slurm, ValidateTemplateRunsAPlanAndResumesAfterRequeue) {
  TempDir d;
  const auto plan = d.path / "plan.yaml";
  std::ofstream(plan) << kTinyPlan;
  const auto submit = [&](const std::string& extra_env, const std::filesystem::path& out) {
    return sbatch_wait(slurm_env() + "DDPBENCH=" + kBin + " DDPBENCH_DEVICE=cpu DDPBENCH_TIMEOUT=60 DDPBENCH_RESULTS=" +
                       d.path.string() + " DDPBENCH_PLAN=" + plan.string() + " " + extra_env +
                       " sbatch --parsable -N 1 --gpus-per-task=0 --ntasks-per-node=2 --cpus-per-task=1 "
                       "--overcommit -o " +
                       out.string() + " " + kTemplates + "ddpbench-validate.sbatch");
  };
  const auto out1 = d.path / "job1.out";
  const auto o = submit("", out1);
  const std::string log1 = testutil::slurp(out1);
  ASSERT_EQ(o.code, 0) << o.err << log1;  // the job COMPLETED: the template exited 0
  const long long id = job_id(o.out);
  ASSERT_GT(id, 0) << o.out;
  const auto dir = d.path / ("ddpbench-validate-" + std::to_string(id));
  const std::vector<std::string> steps = {"01-env", "02-comm", "03-run"};
  for (const auto& f : {"01-env.json", "02-comm.json", "03-run.json", "validate.json", "report.txt", "report.md",
                        "report.html"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f << "\n" << log1;
  const json rec = json::parse(testutil::slurp(dir / "validate.json"));
  ASSERT_EQ(rec.at("steps").size(), 3u) << rec.dump(2);
  for (size_t i = 0; i < 3; ++i) {
    const json& s = rec.at("steps")[i];
    EXPECT_EQ(s.at("name"), steps[i]);
    EXPECT_EQ(s.at("status"), "complete") << s.dump();
    EXPECT_EQ(s.at("exit_code"), 0) << s.dump();
    EXPECT_EQ(s.at("launch").at("launcher"), "slurm") << s.dump();
    EXPECT_EQ(s.at("launch").at("world_size"), 2) << s.dump();
  }
  // Both ranks took part: the env step has the one node with its 2 ranks, the run step's
  // last row is the 2-rank group, launched by Slurm under this job.
  const json env = json::parse(testutil::slurp(dir / "01-env.json"));
  ASSERT_EQ(env.at("nodes").size(), 1u) << env.dump(2);
  EXPECT_EQ(env.at("nodes")[0].at("ranks"), json::array({0, 1})) << env.dump(2);
  const ResultFile run_file = read_result_file((dir / "03-run.json").string());
  expect_cpu_job(run_file, {1, 2});
  EXPECT_EQ(run_file.environment.at("slurm_job_id"), std::to_string(id));
  EXPECT_TRUE(read_result_file((dir / "02-comm.json").string()).complete);
  std::smatch m;
  const std::string tally = last_validate_line(log1);
  ASSERT_TRUE(std::regex_match(tally, m, std::regex(R"(validate: ([0-9]+) PASS, 0 FAIL, ([0-9]+) VOID(?: \(.*\))?, 2 not evaluated \(01-env nodes agree: one node: .*; 02-comm allreduce float32 on 2 ranks busbw at 256 KiB: .*no busbw-gbs target in the plan\))")))
      << log1;
  // Both targets judged on the 2-rank row (PASS, or VOID by a noise warning, which the tally
  // names in parentheses with the warnings that voided it); not evaluated:
  // env's one node (nothing to compare) and comm's busbw (no target in the plan).
  EXPECT_EQ(std::stoi(m[1]) + std::stoi(m[2]), 2) << log1;
  EXPECT_NE(testutil::slurp(dir / "report.txt").find(tally + "\n"), std::string::npos) << testutil::slurp(dir / "report.txt");
  EXPECT_NE(log1.find("ddpbench-validate: exit 0; report " + (dir / "report.txt").string()), std::string::npos) << log1;

  // Again on the same folder: nothing runs again, the files stay byte for byte.
  std::map<std::string, std::string> before;
  for (const auto& s : steps) before[s] = testutil::slurp(dir / (s + ".json"));
  const auto out2 = d.path / "job2.out";
  const auto o2 = submit("DDPBENCH_VALIDATE_DIR=" + dir.string(), out2);
  const std::string log2 = testutil::slurp(out2);
  ASSERT_EQ(o2.code, 0) << o2.err << log2;
  EXPECT_NE(job_id(o2.out), id);
  EXPECT_FALSE(std::filesystem::exists(d.path / ("ddpbench-validate-" + std::to_string(job_id(o2.out)))));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NE(log2.find("[" + std::to_string(i + 1) + "/3] " + steps[i] + ": kept"), std::string::npos)
        << steps[i] << "\n" << log2;
    EXPECT_EQ(testutil::slurp(dir / (steps[i] + ".json")), before[steps[i]]) << steps[i];
  }
  EXPECT_EQ(log2.find(": ddpbench "), std::string::npos) << log2;  // no step was started
  EXPECT_EQ(last_validate_line(log2), tally) << log2;  // the same verdicts, from the kept files
  const json rec2 = json::parse(testutil::slurp(dir / "validate.json"));
  ASSERT_EQ(rec2.at("steps").size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(rec2.at("steps")[i], rec.at("steps")[i]) << steps[i];
}

// The weak-scaling list for node counts this machine cannot have: the template run
// outside Slurm with a job's variables and a stand-in srun that prints its arguments.
TEST(SlurmTemplates, WeakScalingCoversEveryPowerOfTwoNodeCountAndAll) {
  TempDir d;
  write_executable(d.path / "srun", "#!/bin/sh\necho \"$@\"\n");
  const auto world_sizes = [&](int nodes, int per_node, const std::string& extra = "") {
    const auto o =
        run("PATH=" + d.path.string() + ":$PATH SLURM_JOB_ID=7 SLURM_JOB_NUM_NODES=" + std::to_string(nodes) +
            " SLURM_NTASKS=" + std::to_string(nodes * per_node) + " SLURM_CPUS_PER_TASK=4 DDPBENCH_RESULTS=" +
            d.path.string() + " " + extra + " bash " + kTemplates + "ddpbench-weak-scaling.sbatch");
    EXPECT_EQ(o.code, 0) << o.err;
    std::smatch m;
    return std::regex_search(o.out, m, std::regex("--world-sizes ([0-9,]+)")) ? m[1].str() : "(none): " + o.out;
  };
  EXPECT_EQ(world_sizes(1, 8), "8");
  EXPECT_EQ(world_sizes(2, 8), "8,16");
  EXPECT_EQ(world_sizes(8, 8), "8,16,32,64");
  EXPECT_EQ(world_sizes(6, 4), "4,8,16,24");
  EXPECT_EQ(world_sizes(4, 8, "DDPBENCH_WORLD_SIZES=32"), "32");
}

// A requeued job keeps its job id, so its result path too: the template continues the sweep
// that path's .partial holds (run --resume), and starts afresh without one or for comm.
TEST(SlurmTemplates, ARequeuedJobResumesItsPartialResult) {
  TempDir d;
  write_executable(d.path / "srun", "#!/bin/sh\necho \"$@\"\n");
  const auto args = [&](const std::string& tmpl, const std::string& extra = "") {
    const auto o = run("PATH=" + d.path.string() + ":$PATH SLURM_JOB_ID=7 SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=2 " +
                       "SLURM_JOB_NODELIST=localhost SLURM_CPUS_PER_TASK=1 DDPBENCH_RESULTS=" + d.path.string() + " " +
                       extra + " bash " + kTemplates + tmpl);
    EXPECT_EQ(o.code, 0) << o.err;
    return o.out;
  };
  for (const std::string t : {"node", "weak"}) {
    const std::string tmpl = t == "node" ? "ddpbench-node.sbatch" : "ddpbench-weak-scaling.sbatch";
    const std::string json = (d.path / ("ddpbench-" + t + "-7.json")).string();
    EXPECT_EQ(args(tmpl).find("--resume"), std::string::npos) << t;  // a first run
    std::ofstream(json + ".partial") << "{}\n";
    EXPECT_NE(args(tmpl).find("--json " + json + " --resume " + json + ".partial"), std::string::npos) << t;
    EXPECT_EQ(args(tmpl, "DDPBENCH_COMMAND=comm").find("--resume"), std::string::npos) << t;  // run only
  }
}

// The validate template's folder without Slurm: a stand-in srun prints its arguments and
// exits with STAND_IN_RC. The folder is named after the job id (a requeued job keeps it),
// DDPBENCH_VALIDATE_DIR pins it, a relative plan is the submission directory's, and the
// job exits with validate's code.
TEST(SlurmTemplates, ValidateFolderFollowsTheJobIdAndExitCodeIsValidates) {
  TempDir d;
  write_executable(d.path / "srun", "#!/bin/sh\necho \"$@\"\nexit ${STAND_IN_RC:-0}\n");
  std::filesystem::create_directories(d.path / "plans");
  std::ofstream(d.path / "plans" / "quick.yaml") << "steps:\n  - env\n";
  const auto job = [&](const std::string& extra = "") {
    return run("cd " + d.path.string() + " && PATH=" + d.path.string() +
               ":$PATH SLURM_JOB_ID=7 SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=2 SLURM_JOB_NODELIST=localhost "
               "SLURM_CPUS_PER_TASK=1 SLURM_SUBMIT_DIR=" +
               d.path.string() + " DDPBENCH_RESULTS=" + d.path.string() + "/results " + extra + " bash " + kTemplates +
               "ddpbench-validate.sbatch");
  };
  const std::string plan = (d.path / "plans" / "quick.yaml").string();
  auto o = job();
  EXPECT_EQ(o.code, 0) << o.err;
  const std::string dir7 = (d.path / "results" / "ddpbench-validate-7").string();
  EXPECT_NE(o.out.find("--cpu-bind=cores ddpbench validate " + plan + " --out " + dir7 + " --timeout 600\n"),
            std::string::npos)
      << o.out;
  EXPECT_TRUE(std::filesystem::is_directory(dir7));
  o = job("DDPBENCH_VALIDATE_DIR=" + d.path.string() + "/pinned DDPBENCH_PLAN=plans/quick.yaml DDPBENCH_TIMEOUT=60 "
          "DDPBENCH_ARGS='--step-timeout 100' SLURM_RESTART_COUNT=1");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("validate " + plan + " --out " + (d.path / "pinned").string() +
                       " --timeout 60 --step-timeout 100\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("requeued 1 time(s)"), std::string::npos) << o.out;
  o = job("STAND_IN_RC=1");
  EXPECT_EQ(o.code, 1) << o.out << o.err;  // a failed target
  EXPECT_NE(o.out.find("ddpbench-validate: exit 1"), std::string::npos) << o.out;
  o = job("DDPBENCH_PLAN=missing.yaml");
  EXPECT_EQ(o.code, 2) << o.out << o.err;  // no plan: validate's code for a bad plan, srun not run
  EXPECT_EQ(o.out.find("validate "), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("no plan at " + d.path.string() + "/missing.yaml"), std::string::npos) << o.err;
}

TEST(SlurmTemplates, GpuJobBindsOneGpuAndCoresPerTask) {
  // The GPU defaults a GPU cluster gets when submitting the templates as they are.
  for (const char* t : {"ddpbench-node.sbatch", "ddpbench-weak-scaling.sbatch", "ddpbench-validate.sbatch"}) {
    const std::string text = testutil::slurp(kTemplates + t);
    EXPECT_NE(text.find("\n#SBATCH --gpus-per-task=1\n"), std::string::npos) << t;
    EXPECT_NE(text.find("\n#SBATCH --cpus-per-task="), std::string::npos) << t;
    EXPECT_NE(text.find("export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}"), std::string::npos) << t;
    EXPECT_NE(text.find("srun --cpu-bind=cores"), std::string::npos) << t;
  }
}

}  // namespace
}  // namespace ddpbench
