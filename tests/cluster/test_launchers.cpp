// Real launchers on one machine: OpenMPI's mpirun, and Slurm's srun and sbatch on a
// loopback Slurm (tests/cluster/local-slurm.sh) that ctest's fixture tests or, run alone,
// this suite start and stop. Cases whose launcher is missing skip, and ctest shows
// them as "Skipped" (tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cluster/slurm_fixture.hpp"
#include "common/testutil.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/spawn.hpp"
#include "core/result/result.hpp"

namespace ddpbench {
namespace {

using testutil::have;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kTiny = " run " + testutil::kTinyArgs + " --warmup 1 --iters 2";

/// Checks a 2-rank sweep's result file: started by `launcher`, rows no-DDP, 1 and 2
/// ranks, and the 2-rank row has both ranks and passed the gradient self-check.
void expect_two_rank_sweep(const ResultFile& f, const std::string& launcher) {
  EXPECT_EQ(f.environment.at("launcher"), launcher);
  EXPECT_EQ(f.environment.at("world_size"), 2);
  ASSERT_EQ(f.results.size(), 3u);
  EXPECT_EQ(f.results[2].world_size, 2);
  EXPECT_EQ(f.results[2].ranks.size(), 2u);
  EXPECT_TRUE(f.results[2].checks.grad_check_passed.value());
}

TEST(OpenMPI, MpirunStartsRanksWithoutFlags) {
  if (!have("mpirun")) GTEST_SKIP() << "OpenMPI not installed (apt-get install openmpi-bin)";
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto o = run("mpirun --allow-run-as-root --oversubscribe -np 2 -x OMP_NUM_THREADS=1 -x MASTER_PORT=" +
                     std::to_string(find_free_port()) + " " + kBin + kTiny + " --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  expect_two_rank_sweep(read_result_file(json), "openmpi");
}

TEST_F(Slurm, SrunStepRanksFindEachOther) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto o = run(slurm_env() + "srun -n 2 --overcommit " + kBin + kTiny + " --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto f = read_result_file(json);
  expect_two_rank_sweep(f, "slurm");
  // No MASTER_* given: rank 0's host from the node list, the port from the job id.
  const long long job = std::stoll(f.environment.at("slurm_job_id").get<std::string>());
  EXPECT_EQ(f.environment.at("rendezvous").at("master_port"), slurm_default_port(job));
  EXPECT_EQ(f.environment.at("rendezvous").at("master_addr"), "localhost");
}

// run --resume under srun: a step whose rank 1 exits in its first DDP step leaves the no-DDP
// and 1-rank rows in PATH.partial; a second step with --resume keeps them as they were (their
// launch) and measures the 2-rank row under its own launch (a requeued job runs the same line:
// the sbatch templates add --resume when the .partial exists).
TEST_F(Slurm, SrunStepResumesAStoppedSweep) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto stopped =
      run(slurm_env() + "DDPBENCH_TEST_FAULT=exit-rank1 srun -n 2 --overcommit " + kBin + kTiny + " --json " + json);
  ASSERT_NE(stopped.code, 0) << stopped.err;
  const ResultFile partial = read_result_file(json + ".partial");
  ASSERT_EQ(partial.results.size(), 2u);
  const auto o = run(slurm_env() + "srun -n 2 --overcommit " + kBin + kTiny + " --resume " + json + ".partial");
  ASSERT_EQ(o.code, 0) << o.err;
  const ResultFile f = read_result_file(json);
  expect_two_rank_sweep(f, "slurm");
  EXPECT_TRUE(f.complete);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(f.results[i].launch, partial.results[i].launch);
    EXPECT_EQ(f.results[i].summary.p50_s, partial.results[i].summary.p50_s);
  }
  EXPECT_NE(f.results[2].launch.at("started_utc"), partial.results[0].launch.at("started_utc"));
  EXPECT_FALSE(std::filesystem::exists(json + ".partial"));
}

// A batch script that calls ddpbench directly (no srun) sees SLURM_PROCID=0 and
// SLURM_NTASKS=2 but is not a step: ddpbench must not wait for a rank 1 that never comes,
// and launches its ranks itself instead.
TEST_F(Slurm, BatchScriptWithoutSrunUsesTheBuiltInLauncher) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto script = d.path / "job.sh";
  std::ofstream(script) << "#!/bin/sh\nexport OMP_NUM_THREADS=1\nexec " << kBin << kTiny << " --timeout 60 --json "
                        << json << "\n";
  const auto o = sbatch_wait(slurm_env() + "sbatch --parsable -n 2 --overcommit -o " + (d.path / "out.txt").string() +
                             " " + script.string());
  ASSERT_EQ(o.code, 0) << o.err << testutil::slurp(d.path / "out.txt");
  const auto f = read_result_file(json);
  expect_two_rank_sweep(f, "local");
  EXPECT_EQ(f.environment.at("env").value("SLURM_NTASKS", ""), "2");
}

}  // namespace
}  // namespace ddpbench
