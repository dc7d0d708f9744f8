// Real launchers on one machine: OpenMPI's mpirun, and Slurm's srun and sbatch on a
// loopback Slurm (tests/cluster/local-slurm.sh) that ctest's fixture tests or, run alone,
// this suite start and stop. Cases whose launcher is missing skip, and ctest shows
// them as "Skipped" (tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "common/testutil.hpp"
#include "core/launch_env.hpp"
#include "core/result.hpp"
#include "core/spawn.hpp"

namespace ddpbench {
namespace {

using testutil::run;
using testutil::have;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kSlurm = DDPBENCH_SOURCE_DIR "/tests/cluster/local-slurm.sh";
const std::string kTiny = " run --model resnet18 --image-size 32 --batch-size 2 --warmup 1 --iters 2";

/// Checks a 2-rank sweep's result file: started by `launcher`, rows no-DDP, 1 and 2
/// ranks, and the 2-rank row has both ranks and passed the gradient self-check.
void expect_two_rank_sweep(const ResultFile& f, const std::string& launcher) {
  EXPECT_EQ(f.environment.at("launcher"), launcher);
  EXPECT_EQ(f.environment.at("world_size"), 2);
  ASSERT_EQ(f.results.size(), 3u);
  EXPECT_EQ(f.results[2].world_size, 2);
  EXPECT_EQ(f.results[2].ranks.size(), 2u);
  EXPECT_TRUE(f.results[2].checks.at("grad_check_passed").get<bool>());
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

/// True where a loopback Slurm can run here: as root, with the daemons and clients on PATH
/// (the same conditions as tests/cluster/slurm-fixture.sh, which exits 77 otherwise).
bool slurm_possible() {
  return ::geteuid() == 0 && have("slurmctld") && have("slurmd") && have("munged") && have("srun") && have("sbatch");
}

/// One loopback Slurm for the Slurm cases. Under ctest the fixture tests cluster.slurm_up
/// and cluster.slurm_down (tests/cluster/slurm-fixture.sh) run it in the directory named by
/// DDPBENCH_TEST_SLURM_DIR, and the cases check that it answers; run alone (no such
/// variable), the suite brings one up in a temporary directory and stops it after the last
/// case. Without root or the packages every case skips; with them, a Slurm that is not up
/// is a failure.
class Slurm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    possible_ = slurm_possible();
    if (!possible_) return;
    const char* fixture_dir = std::getenv("DDPBENCH_TEST_SLURM_DIR");
    if (fixture_dir != nullptr && *fixture_dir != '\0') {
      dir_ = fixture_dir;
      const auto o = run(slurm_env() + "scontrol ping");
      up_ = o.code == 0;
      bring_up_log_ = "the ctest fixture cluster.slurm_up left no Slurm answering in " + dir_ +
                      " (scontrol ping: " + o.out + o.err + "); see that test's output and " + dir_ + "/log";
      return;
    }
    own_dir_.emplace();
    dir_ = own_dir_->path.string();
    const auto o = run("LOCAL_SLURM_INSTALL=0 LOCAL_SLURM_LINK_ETC=0 LOCAL_SLURM_DIR=" + dir_ + " " + kSlurm + " up");
    up_ = o.code == 0;
    bring_up_log_ = "local-slurm.sh up failed:\n" + o.err;
  }
  static void TearDownTestSuite() {
    if (up_ && own_dir_) run("LOCAL_SLURM_LINK_ETC=0 LOCAL_SLURM_DIR=" + dir_ + " " + kSlurm + " down");
    up_ = false;
    own_dir_.reset();
  }
  void SetUp() override {
    if (!possible_) GTEST_SKIP() << "no loopback Slurm (needs root and apt-get install slurmctld slurmd slurm-client munge)";
    // Root with the packages installed: a Slurm that is not up is a failure, not a skip.
    ASSERT_TRUE(up_) << bring_up_log_;
  }
  static std::string slurm_env() { return "SLURM_CONF=" + dir_ + "/etc/slurm.conf "; }
  static inline std::optional<TempDir> own_dir_;  ///< set when this process runs its own Slurm
  static inline std::string dir_;                 ///< LOCAL_SLURM_DIR of the Slurm in use
  static inline bool possible_ = false, up_ = false;
  static inline std::string bring_up_log_;
};

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

// A batch script that calls ddpbench directly (no srun) sees SLURM_PROCID=0 and
// SLURM_NTASKS=2 but is not a step: ddpbench must not wait for a rank 1 that never comes,
// and launches its ranks itself instead.
TEST_F(Slurm, BatchScriptWithoutSrunUsesTheBuiltInLauncher) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto script = d.path / "job.sh";
  std::ofstream(script) << "#!/bin/sh\nexport OMP_NUM_THREADS=1\nexec " << kBin << kTiny << " --timeout 60 --json "
                        << json << "\n";
  const auto o = run(slurm_env() + "sbatch --wait -n 2 --overcommit -o " + (d.path / "out.txt").string() + " " +
                     script.string());
  ASSERT_EQ(o.code, 0) << o.err << testutil::slurp(d.path / "out.txt");
  const auto f = read_result_file(json);
  expect_two_rank_sweep(f, "local");
  EXPECT_EQ(f.environment.at("env").value("SLURM_NTASKS", ""), "2");
}

}  // namespace
}  // namespace ddpbench
