// The loopback Slurm the Slurm cases of the cluster suite share (test_launchers.cpp,
// test_slurm_templates.cpp): the fixture class `Slurm`, so every case is Slurm.<Case>
// and runs under ctest's cluster.slurm_up / cluster.slurm_down fixture.
#pragma once

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/testutil.hpp"

namespace ddpbench {

inline const std::string kSlurm = DDPBENCH_SOURCE_DIR "/tests/cluster/local-slurm.sh";

/// True where a loopback Slurm can run here: as root, with the daemons and clients on PATH
/// (the same conditions as tests/cluster/slurm-fixture.sh, which exits 77 otherwise).
inline bool slurm_possible() {
  return ::geteuid() == 0 && testutil::have("slurmctld") && testutil::have("slurmd") && testutil::have("munged") &&
         testutil::have("srun") && testutil::have("sbatch");
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
      const auto o = testutil::run(slurm_env() + "scontrol ping");
      up_ = o.code == 0;
      bring_up_log_ = "the ctest fixture cluster.slurm_up left no Slurm answering in " + dir_ +
                      " (scontrol ping: " + o.out + o.err + "); see that test's output and " + dir_ + "/log";
      return;
    }
    own_dir_.emplace();
    dir_ = own_dir_->path.string();
    const auto o =
        testutil::run("LOCAL_SLURM_INSTALL=0 LOCAL_SLURM_LINK_ETC=0 LOCAL_SLURM_DIR=" + dir_ + " " + kSlurm + " up");
    up_ = o.code == 0;
    bring_up_log_ = "local-slurm.sh up failed:\n" + o.err;
  }
  static void TearDownTestSuite() {
    if (up_ && own_dir_) testutil::run("LOCAL_SLURM_LINK_ETC=0 LOCAL_SLURM_DIR=" + dir_ + " " + kSlurm + " down");
    up_ = false;
    own_dir_.reset();
  }
  void SetUp() override {
    if (!possible_)
      GTEST_SKIP() << "no loopback Slurm (needs root and apt-get install slurmctld slurmd slurm-client munge)";
    // Root with the packages installed: a Slurm that is not up is a failure, not a skip.
    ASSERT_TRUE(up_) << bring_up_log_;
  }
  static std::string slurm_env() { return "SLURM_CONF=" + dir_ + "/etc/slurm.conf "; }

  /// Submits `env_and_args` ("VAR=x ... sbatch --parsable ARGS SCRIPT", without --wait) and
  /// waits for the job by asking `scontrol show job` every 0.25 s, at most `limit_s` s:
  /// `sbatch --wait` sleeps 2, 4, 8, ... s between its polls, so a 10 s job can cost 40 s
  /// (MinJobAge=300 in local-slurm.sh keeps the finished job's record). Returns sbatch's
  /// outcome with code 0 when the job COMPLETED, 1 when it ended otherwise (its state in
  /// err), 124 past the limit.
  static testutil::Outcome sbatch_wait(const std::string& env_and_args, int limit_s = 300) {
    testutil::Outcome o = testutil::run(env_and_args);
    if (o.code != 0) return o;
    const std::string id = o.out.substr(0, o.out.find_first_of(";\n"));
    for (int i = 0; i < limit_s * 4; ++i) {
      const auto s = testutil::run(slurm_env() + "scontrol -o show job " + id);
      if (s.out.find("JobState=COMPLETED") != std::string::npos) return o;
      for (const char* bad : {"JobState=FAILED", "JobState=CANCELLED", "JobState=TIMEOUT", "JobState=NODE_FAIL",
                              "JobState=OUT_OF_MEMORY", "JobState=BOOT_FAIL", "JobState=DEADLINE"})
        if (s.out.find(bad) != std::string::npos) {
          o.code = 1;
          o.err += "job " + id + " ended: " + s.out;
          return o;
        }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    o.code = 124;
    o.err += "job " + id + " still running after " + std::to_string(limit_s) + " s";
    return o;
  }
  static inline std::optional<testutil::TempDir> own_dir_;  ///< set when this process runs its own Slurm
  static inline std::string dir_;                           ///< LOCAL_SLURM_DIR of the Slurm in use
  static inline bool possible_ = false, up_ = false;
  static inline std::string bring_up_log_;
};

}  // namespace ddpbench
