// The sbatch templates of scripts/slurm/, submitted as they are to the loopback Slurm
// (tests/cluster/local-slurm.sh) with the CPU override their headers document
// (--gpus-per-task=0, DDPBENCH_DEVICE=cpu: no GRES on this cluster) and a tiny model;
// the container variant through a stand-in `apptainer` that records its arguments and runs
// the command. Without Slurm, the weak-scaling template's world-size list is checked with
// a stand-in `srun` and the node counts a real job would have.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
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

TEST(SlurmTemplates, GpuJobBindsOneGpuAndCoresPerTask) {
  // The GPU defaults a GPU cluster gets when submitting the templates as they are.
  for (const char* t : {"ddpbench-node.sbatch", "ddpbench-weak-scaling.sbatch"}) {
    const std::string text = testutil::slurp(kTemplates + t);
    EXPECT_NE(text.find("\n#SBATCH --gpus-per-task=1\n"), std::string::npos) << t;
    EXPECT_NE(text.find("\n#SBATCH --cpus-per-task="), std::string::npos) << t;
    EXPECT_NE(text.find("export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}"), std::string::npos) << t;
    EXPECT_NE(text.find("srun --cpu-bind=cores"), std::string::npos) << t;
  }
}

}  // namespace
}  // namespace ddpbench
